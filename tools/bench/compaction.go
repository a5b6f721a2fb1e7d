package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os/exec"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The compaction run: the 100-byte records into a table of small files
// (compactRows rows a file), compacted once it holds more than
// compactMinFiles of them.
const (
	compactRows     = 2_000
	compactMinFiles = 10
)

// scanRow is a scan of a table by DuckDB and delta-rs, the best of three
// each, as bench/scan.py measures it.
type scanRow struct {
	Name    string             `json:"name"`
	Files   int64              `json:"files"`
	Seconds map[string]float64 `json:"seconds"`
}

// compactionRun produces n of the 100-byte records to a new topic and
// measures an agent ingesting them into a table of small files, through a
// continuous pipeline, without compaction and then (another agent, the
// same records) with it: records/s until every record is committed, the
// second as a ratio to the first. Once the compacting agent's maintenance
// has settled (no more than compactMinFiles small files), DuckDB and
// delta-rs scan each table, with python (the tool venv): the table before
// compaction, as the first agent left it, and after.
func compactionRun(ctx context.Context, agentBin, bootstrap, python string, n int) ([]result, []scanRow, error) {
	topic := fmt.Sprintf("bench-compact-%d", time.Now().UnixNano())
	log.Printf("producing %d records of about 100 bytes to %s", n, topic)
	bytes, err := produce(ctx, bootstrap, []string{topic}, topicPartitions, n, smallRecords(0, smallJSON))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", topic, err)
	}
	w := load{topics: []string{topic}, partitions: topicPartitions, records: int64(n), bytes: bytes}
	var results []result
	var scans []scanRow
	for _, compact := range []bool{false, true} {
		name := fmt.Sprintf("agent: JSON, files of %d rows", compactRows)
		scan := name + ", not compacted"
		if compact {
			name += ", compacting"
			scan = name + ", compacted"
		}
		r, s, err := compactionIngest(ctx, agentBin, bootstrap, python, w, name, scan, compact)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		results = append(results, r)
		scans = append(scans, s)
	}
	results[1].OfUncompacted = results[1].RecordsPerSec / results[0].RecordsPerSec
	return results, scans, nil
}

// compactionIngest runs one agent of compactionRun, and scans its table.
func compactionIngest(ctx context.Context, agentBin, bootstrap, python string, w load, name, scan string, compact bool) (result, scanRow, error) {
	a, err := startAgent(ctx, agentBin, bootstrap, "", nil)
	if err != nil {
		return result{}, scanRow{}, err
	}
	defer a.stop()
	p := benchPipeline(true, "", tablesOf(w, jsonValue))
	p.MaxRowsPerFile, p.AutoCompact, p.AutoCompactMinFiles = compactRows, &compact, compactMinFiles
	start := time.Now()
	if _, err := a.c.PutPipeline(ctx, p); err != nil {
		return result{}, scanRow{}, err
	}
	var r result
	var last spec.MaintenanceStatus
	for ingested := false; ; time.Sleep(50 * time.Millisecond) {
		resp, err := a.c.GetPipeline(ctx, p.Name)
		if err != nil {
			return result{}, scanRow{}, err
		}
		st := resp.Status
		if st.State == spec.StateFailed || len(st.Tables) != 1 {
			return result{}, scanRow{}, fmt.Errorf("state %s, tables %+v", st.State, st.Tables)
		}
		t := st.Tables[0]
		if !ingested && t.Rows >= w.records {
			ingested = true
			r = measured(name, w, time.Since(start).Seconds())
			r.PeakRSSMB = peakRSS(a.cmd.Process.Pid)
			if err := tally(&r, w, st.Tables); err != nil {
				return result{}, scanRow{}, err
			}
		}
		if !ingested {
			continue
		}
		if !compact {
			break
		}
		// Settled: few enough small files that no pass starts, twice in a
		// row.
		if m := t.Maintenance; m != nil && m.SmallFiles <= compactMinFiles && *m == last {
			log.Printf("%s: maintenance settled %.1fs after the last record: %+v", name, time.Since(start).Seconds()-r.Seconds, *m)
			break
		}
		if t.Maintenance != nil {
			last = *t.Maintenance
		}
		if time.Since(start) > 10*time.Minute {
			return result{}, scanRow{}, fmt.Errorf("maintenance has not settled after 10m: %+v", t.Maintenance)
		}
	}
	resp, err := a.c.GetPipeline(ctx, p.Name)
	if err != nil {
		return result{}, scanRow{}, err
	}
	s, err := scanTable(ctx, python, resp.Status.Tables[0].Location)
	if err != nil {
		return result{}, scanRow{}, fmt.Errorf("scanning the table: %w", err)
	}
	s.Name = scan
	return r, s, nil
}

// scanTable runs bench/scan.py on the table at location.
func scanTable(ctx context.Context, python, location string) (scanRow, error) {
	out, err := exec.CommandContext(ctx, python, "tools/bench/scan.py", location).Output()
	if err != nil {
		return scanRow{}, fmt.Errorf("%w: %s", err, out)
	}
	var s scanRow
	if err := json.Unmarshal(out, &s); err != nil {
		return scanRow{}, fmt.Errorf("%w: %s", err, out)
	}
	return s, nil
}
