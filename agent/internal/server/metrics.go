package server

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// pipelineStates lists every state tributary_pipeline_up has a series for.
var pipelineStates = []string{spec.StateStarting, spec.StateRunning, spec.StateIdle, spec.StateFailed, spec.StateStopped}

// metricFamily is one metric in the Prometheus text exposition format.
type metricFamily struct {
	name, typ, help string
	samples         []metricSample
}

// metricSample is one series: label names and values alternate in labels.
type metricSample struct {
	labels []string
	value  int64
}

func (f *metricFamily) add(value int64, labels ...string) {
	f.samples = append(f.samples, metricSample{labels: labels, value: value})
}

// metrics answers GET /metrics in the Prometheus text format (version
// 0.0.4). Like every route but /healthz it needs the token: configure the
// scraper with it (Prometheus: authorization.credentials_file). Series carry
// pipeline and table (<catalog>.<schema>.<table>) labels, and topic and
// partition for partition lag; those of Kafka sinks a sink label. With a
// memory budget, unlabelled series report its use.
func (s *Server) metrics(w http.ResponseWriter, _ *http.Request) error {
	pipes, err := s.store.Pipelines.List()
	if err != nil {
		return err
	}
	var (
		up      = metricFamily{name: "tributary_pipeline_up", typ: "gauge", help: "1 for the state the pipeline is in, 0 for the other states."}
		rows    = metricFamily{name: "tributary_table_rows_total", typ: "counter", help: "Rows committed to the table."}
		files   = metricFamily{name: "tributary_table_files_total", typ: "counter", help: "Parquet files committed to the table."}
		corrupt = metricFamily{name: "tributary_table_corrupt_records_total", typ: "counter", help: "Records committed with a _corrupt_record because they could not be decoded."}
		version = metricFamily{name: "tributary_table_version", typ: "gauge", help: "Latest committed Delta log version of the table; -1 before the first commit."}
		lag     = metricFamily{name: "tributary_partition_lag", typ: "gauge", help: "High watermark minus the next offset to read, as last seen."}
		// lagBytes, tableLag and tableLagBytes are S-11's lag in bytes and
		// the tables' totals; lost counts fail_on_data_loss = false's gaps.
		lagBytes = metricFamily{name: "tributary_partition_lag_bytes", typ: "gauge",
			help: "Estimated bytes behind the high watermark: the lag times the mean size of the partition's records fetched."}
		tableLag      = metricFamily{name: "tributary_table_lag", typ: "gauge", help: "Records behind the high watermarks, summed over the table's partitions."}
		tableLagBytes = metricFamily{name: "tributary_table_lag_bytes", typ: "gauge", help: "Estimated bytes behind the high watermarks, summed over the table's partitions."}
		lost          = metricFamily{name: "tributary_table_data_loss_offsets_total", typ: "counter",
			help: "Offsets the table skipped because Kafka no longer had them (fail_on_data_loss = false)."}
		// errs counts ignore_errors' bad records, kept in _dirty_records.
		errs = metricFamily{name: "tributary_table_error_records_total", typ: "counter",
			help: "Records left out of the table because they could not be decoded (ignore_errors), kept in _dirty_records."}
		filtered = metricFamily{name: "tributary_table_filtered_records_total", typ: "counter",
			help: "Records that gave the table no row because they carry none: change events filtered out, tombstones, DDL events."}
	)
	for i := range pipes {
		p := &pipes[i]
		st := s.status(p)
		for _, state := range pipelineStates {
			var v int64
			if state == st.State {
				v = 1
			}
			up.add(v, "pipeline", p.Name, "state", state)
		}
		for j := range st.Tables {
			ts := &st.Tables[j]
			table := p.DestinationCatalog + "." + p.DestinationSchema + "." + ts.DestinationTable
			rows.add(ts.Rows, "pipeline", p.Name, "table", table)
			files.add(ts.Files, "pipeline", p.Name, "table", table)
			corrupt.add(ts.CorruptRecords, "pipeline", p.Name, "table", table)
			version.add(ts.Version, "pipeline", p.Name, "table", table)
			tableLag.add(ts.Lag, "pipeline", p.Name, "table", table)
			tableLagBytes.add(ts.LagBytes, "pipeline", p.Name, "table", table)
			lost.add(ts.DataLossOffsets, "pipeline", p.Name, "table", table)
			errs.add(ts.ErrorRecords, "pipeline", p.Name, "table", table)
			filtered.add(ts.FilteredRecords, "pipeline", p.Name, "table", table)
			for _, ps := range ts.Partitions {
				labels := []string{"pipeline", p.Name, "table", table, "topic", ps.Topic, "partition", strconv.Itoa(ps.Partition)}
				lag.add(ps.Lag, labels...)
				lagBytes.add(ps.LagBytes, labels...)
			}
		}
	}
	families := []*metricFamily{&up, &rows, &files, &corrupt, &version, &lag, &lagBytes, &tableLag, &tableLagBytes, &lost, &errs, &filtered}
	sinkFamilies, err := s.sinkMetrics()
	if err != nil {
		return err
	}
	families = append(families, sinkFamilies...)
	if s.memory != nil {
		families = append(families, memoryMetrics(s.memory.Stats())...)
	}
	var b bytes.Buffer
	for _, f := range families {
		f.writeTo(&b)
	}
	writeBody(w, http.StatusOK, "text/plain; version=0.0.4; charset=utf-8", b.Bytes())
	return nil
}

// sinkStates lists every state tributary_kafka_sink_up has a series for.
var sinkStates = []string{spec.StateStarting, spec.StateRunning, spec.StateFailed, spec.StateStopped}

// sinkMetrics are the series of the stored Kafka sinks, labelled by sink.
func (s *Server) sinkMetrics() ([]*metricFamily, error) {
	sinks, err := s.store.KafkaSinks.List()
	if err != nil {
		return nil, err
	}
	up := &metricFamily{name: "tributary_kafka_sink_up", typ: "gauge", help: "1 for the state the Kafka sink is in, 0 for the other states."}
	records := &metricFamily{name: "tributary_kafka_sink_records_total", typ: "counter",
		help: "Records the Kafka sink wrote and committed since it last started (an apply that changes it starts it again, from 0)."}
	for i := range sinks {
		st := s.sinkStatus(&sinks[i])
		for _, state := range sinkStates {
			var v int64
			if state == st.State {
				v = 1
			}
			up.add(v, "sink", sinks[i].Name, "state", state)
		}
		records.add(st.Records, "sink", sinks[i].Name)
	}
	return []*metricFamily{up, records}, nil
}

// memoryMetrics are the series of the memory budget's state st.
func memoryMetrics(st memory.Stats) []*metricFamily {
	one := func(name, typ, help string, value int64) *metricFamily {
		f := &metricFamily{name: name, typ: typ, help: help}
		f.add(value)
		return f
	}
	return []*metricFamily{
		one("tributary_memory_limit_bytes", "gauge", "Size of the memory budget (--memory-limit).", st.Limit),
		one("tributary_memory_used_bytes", "gauge", "Bytes of the memory budget in use: fetched data and open files' buffers.", st.Used),
		one("tributary_memory_files_bytes", "gauge", "Bytes of the memory budget in open files' buffers.", st.Files),
		one("tributary_memory_pauses_total", "counter", "Fetches that waited for room in the memory budget.", st.Pauses),
		one("tributary_memory_flushes_total", "counter", "Flushes the memory budget asked of the table with the biggest open file.", st.Flushes),
	}
}

// writeTo writes f's HELP and TYPE lines and every sample.
func (f *metricFamily) writeTo(b *bytes.Buffer) {
	b.WriteString("# HELP " + f.name + " " + helpEscaper.Replace(f.help) + "\n")
	b.WriteString("# TYPE " + f.name + " " + f.typ + "\n")
	for _, smp := range f.samples {
		b.WriteString(f.name)
		for i := 0; i+1 < len(smp.labels); i += 2 {
			if i == 0 {
				b.WriteByte('{')
			} else {
				b.WriteByte(',')
			}
			b.WriteString(smp.labels[i] + `="` + labelEscaper.Replace(smp.labels[i+1]) + `"`)
		}
		if len(smp.labels) > 0 {
			b.WriteByte('}')
		}
		b.WriteString(" " + strconv.FormatInt(smp.value, 10) + "\n")
	}
}

// The text format escapes backslash and newline in HELP, and also the double
// quote in label values.
var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)
