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
// partition for partition lag; the tables of fanout schemas are in the same
// table series, and the fanout schemas' own series carry a fanout label;
// those of Kafka sinks a sink label. With a memory budget, unlabelled series
// report its use.
func (s *Server) metrics(w http.ResponseWriter, _ *http.Request) error {
	pipes, err := s.store.Pipelines.List()
	if err != nil {
		return err
	}
	fanouts, err := s.store.FanoutSchemas.List()
	if err != nil {
		return err
	}
	up := metricFamily{name: "tributary_pipeline_up", typ: "gauge", help: "1 for the state the pipeline is in, 0 for the other states."}
	tables := newTableMetrics()
	for i := range pipes {
		p := &pipes[i]
		st := s.status(p)
		addStates(&up, pipelineStates, st.State, "pipeline", p.Name)
		for j := range st.Tables {
			ts := &st.Tables[j]
			table := p.DestinationCatalog + "." + p.DestinationSchema + "." + ts.DestinationTable
			tables.add(ts, "pipeline", p.Name, "table", table)
			tables.addLag(ts.Lag, ts.LagBytes, "pipeline", p.Name, "table", table)
			for _, ps := range ts.Partitions {
				labels := []string{"pipeline", p.Name, "table", table, "topic", ps.Topic, "partition", strconv.Itoa(ps.Partition)}
				tables.lag.add(ps.Lag, labels...)
				tables.lagBytes.add(ps.LagBytes, labels...)
			}
		}
	}
	families := append([]*metricFamily{&up}, tables.families()...)
	families = append(families, s.fanoutMetrics(fanouts, tables)...)
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

// addStates adds to f one series per state of states, labelled by labels
// and the state: 1 for state, 0 for the others.
func addStates(f *metricFamily, states []string, state string, labels ...string) {
	for _, each := range states {
		var v int64
		if each == state {
			v = 1
		}
		f.add(v, append(labels[:len(labels):len(labels)], "state", each)...)
	}
}

// tableMetrics are the series of tables, those of pipelines and of fanout
// schemas alike.
type tableMetrics struct {
	rows, files, corrupt, version, lost, errs, filtered metricFamily
	// lag and lagBytes are per partition, tableLag and tableLagBytes their
	// sums per table; lagBytes estimates the bytes between the position and
	// the high watermark.
	lag, lagBytes, tableLag, tableLagBytes metricFamily
	// The table's maintenance, on the agent that maintains it.
	smallFiles, compactions, compacted, vacuumed metricFamily
	// The table's registrations, on the agent that maintains it.
	mirrorLag, mirrorVersion, registered metricFamily
}

func newTableMetrics() *tableMetrics {
	return &tableMetrics{
		rows:    metricFamily{name: "tributary_table_rows_total", typ: "counter", help: "Rows committed to the table."},
		files:   metricFamily{name: "tributary_table_files_total", typ: "counter", help: "Parquet files committed to the table."},
		corrupt: metricFamily{name: "tributary_table_corrupt_records_total", typ: "counter", help: "Records committed with a _corrupt_record because they could not be decoded."},
		version: metricFamily{name: "tributary_table_version", typ: "gauge", help: "Latest committed Delta log version of the table; -1 before the first commit."},
		lost: metricFamily{name: "tributary_table_data_loss_offsets_total", typ: "counter",
			help: "Offsets the table skipped because Kafka no longer had them (fail_on_data_loss = false)."},
		errs: metricFamily{name: "tributary_table_error_records_total", typ: "counter",
			help: "Records left out of the table because they could not be decoded (ignore_errors), kept in _dirty_records."},
		filtered: metricFamily{name: "tributary_table_filtered_records_total", typ: "counter",
			help: "Records that gave the table no row because they carry none: change events filtered out, tombstones, DDL events."},
		lag: metricFamily{name: "tributary_partition_lag", typ: "gauge", help: "High watermark minus the next offset to read, as last seen."},
		lagBytes: metricFamily{name: "tributary_partition_lag_bytes", typ: "gauge",
			help: "Estimated bytes behind the high watermark: the lag times the mean size of the partition's records fetched."},
		tableLag:      metricFamily{name: "tributary_table_lag", typ: "gauge", help: "Records behind the high watermarks, summed over the table's partitions."},
		tableLagBytes: metricFamily{name: "tributary_table_lag_bytes", typ: "gauge", help: "Estimated bytes behind the high watermarks, summed over the table's partitions."},
		smallFiles: metricFamily{name: "tributary_table_small_files", typ: "gauge",
			help: "Files of the table below two thirds of the compaction's target size, at the last check."},
		compactions: metricFamily{name: "tributary_table_compactions_total", typ: "counter",
			help: "Compaction commits the agent made to the table since it started."},
		compacted: metricFamily{name: "tributary_table_compacted_files_total", typ: "counter",
			help: "Files the agent's compactions removed from the table (rewritten into fewer) since it started."},
		vacuumed: metricFamily{name: "tributary_table_vacuumed_files_total", typ: "counter",
			help: "Removed files of the table the agent's vacuum deleted since it started."},
		mirrorLag: metricFamily{name: "tributary_table_iceberg_mirror_lag_versions", typ: "gauge",
			help: "Delta versions of the table its Iceberg mirror has not mirrored yet, as last seen."},
		mirrorVersion: metricFamily{name: "tributary_table_iceberg_mirror_delta_version", typ: "gauge",
			help: "Delta version the table's Iceberg mirror mirrors; -1 before its first snapshot."},
		registered: metricFamily{name: "tributary_table_hive_metastore_registered", typ: "gauge",
			help: "1 when the Hive Metastore of the table's catalog holds the table, 0 while its registration fails."},
	}
}

// add adds the counters of table status ts, labelled by labels.
func (m *tableMetrics) add(ts *spec.TableStatus, labels ...string) {
	m.rows.add(ts.Rows, labels...)
	m.files.add(ts.Files, labels...)
	m.corrupt.add(ts.CorruptRecords, labels...)
	m.version.add(ts.Version, labels...)
	m.lost.add(ts.DataLossOffsets, labels...)
	m.errs.add(ts.ErrorRecords, labels...)
	m.filtered.add(ts.FilteredRecords, labels...)
	if mt := ts.Maintenance; mt != nil {
		m.smallFiles.add(int64(mt.SmallFiles), labels...)
		m.compactions.add(mt.Compactions, labels...)
		m.compacted.add(mt.FilesCompacted, labels...)
		m.vacuumed.add(mt.FilesVacuumed, labels...)
	}
	if c := ts.Catalog; c != nil {
		if ice := c.Iceberg; ice != nil {
			m.mirrorLag.add(ice.Lag, labels...)
			m.mirrorVersion.add(ice.DeltaVersion, labels...)
		}
		if h := c.HiveMetastore; h != nil {
			registered := int64(0)
			if h.Registered {
				registered = 1
			}
			m.registered.add(registered, labels...)
		}
	}
}

// addLag adds a table's lag, in records and bytes, labelled by labels.
func (m *tableMetrics) addLag(lag, lagBytes int64, labels ...string) {
	m.tableLag.add(lag, labels...)
	m.tableLagBytes.add(lagBytes, labels...)
}

// families lists m's families, in the order /metrics writes them.
func (m *tableMetrics) families() []*metricFamily {
	return []*metricFamily{&m.rows, &m.files, &m.corrupt, &m.version, &m.lag, &m.lagBytes, &m.tableLag, &m.tableLagBytes,
		&m.lost, &m.errs, &m.filtered, &m.smallFiles, &m.compactions, &m.compacted, &m.vacuumed, &m.mirrorLag, &m.mirrorVersion, &m.registered}
}

// fanoutStates lists every state tributary_fanout_up has a series for.
var fanoutStates = pipelineStates

// fanoutMetrics adds the tables of fanouts to tables, labelled by their
// pipeline, and returns the fanout schemas' own series: their state and
// their lag (a fanout schema reads its topics once for all its tables, so
// its lag is its own, not any table's).
func (s *Server) fanoutMetrics(fanouts []spec.FanoutSchema, tables *tableMetrics) []*metricFamily {
	up := &metricFamily{name: "tributary_fanout_up", typ: "gauge", help: "1 for the state the fanout schema is in, 0 for the other states."}
	lag := &metricFamily{name: "tributary_fanout_lag", typ: "gauge", help: "Records behind the high watermarks, summed over the fanout schema's partitions."}
	lagBytes := &metricFamily{name: "tributary_fanout_lag_bytes", typ: "gauge", help: "Estimated bytes behind the high watermarks, summed over the fanout schema's partitions."}
	partLag := &metricFamily{name: "tributary_fanout_partition_lag", typ: "gauge", help: "High watermark minus the fanout schema's next offset to read, as last seen."}
	partLagBytes := &metricFamily{name: "tributary_fanout_partition_lag_bytes", typ: "gauge",
		help: "Estimated bytes behind the high watermark: the lag times the mean size of the partition's records fetched."}
	for i := range fanouts {
		f := &fanouts[i]
		st := s.fanoutStatus(f)
		labels := []string{"pipeline", f.Pipeline, "fanout", f.Name}
		addStates(up, fanoutStates, st.State, labels...)
		for j := range st.Tables {
			ts := &st.Tables[j]
			tables.add(ts, "pipeline", f.Pipeline, "table", f.DestinationCatalog+"."+f.DestinationSchema+"."+ts.DestinationTable)
		}
		var sum, sumBytes int64
		for _, ps := range st.Partitions {
			pl := append(labels[:len(labels):len(labels)], "topic", ps.Topic, "partition", strconv.Itoa(ps.Partition))
			partLag.add(ps.Lag, pl...)
			partLagBytes.add(ps.LagBytes, pl...)
			sum, sumBytes = sum+ps.Lag, sumBytes+ps.LagBytes
		}
		lag.add(sum, labels...)
		lagBytes.add(sumBytes, labels...)
	}
	return []*metricFamily{up, lag, lagBytes, partLag, partLagBytes}
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
		addStates(up, sinkStates, st.State, "sink", sinks[i].Name)
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
		one("tributary_memory_used_bytes", "gauge", "Bytes of the memory budget in use: fetched data, open files' buffers and idle decoders.", st.Used),
		one("tributary_memory_files_bytes", "gauge", "Bytes of the memory budget in open files' buffers and idle decoders.", st.Files),
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
