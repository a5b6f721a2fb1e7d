package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The compaction run: the 100-byte records into a table of small files
// (compactRows rows a file), compacted once it holds more than
// compactMinFiles of them into files near compactTargetMB: a target
// small enough that a pass commits several bins while the agent ingests,
// rather than one bin of every file after it.
const (
	compactRows     = 2_000
	compactMinFiles = 10
	compactTargetMB = 8
)

// scanRow is a scan of a table by DuckDB and delta-rs, the best of three
// each, as bench/scan.py measures it.
type scanRow struct {
	Name    string             `json:"name"`
	Files   int64              `json:"files"`
	Seconds map[string]float64 `json:"seconds"`
}

// compactionRun produces n of the 100-byte records to a new topic and
// measures agents ingesting them into a table of small files, through a
// continuous pipeline, records/s until every record is committed: without
// compaction and with it in turn (each a new agent on the same records),
// rounds times with it and once more without, so that drift during the
// run (the broker warming up, the disk's flushes) favours neither, after
// one agent more whose run is not counted (the first read of the topic
// warms the broker and the page cache). Each line is the run of median
// records/s of its kind, with the others; the compacting line's rate is
// given as a ratio to the other's: the median, over the compacting runs,
// of each one's records/s over the mean of the two runs beside it, so
// that a slow spell of the machine weighs on the pair it fell in rather
// than on every ratio. The first agent of each kind is left to finish its
// maintenance (no more than compactMinFiles small files), then DuckDB and
// delta-rs scan its table, with python (the tool venv); the others stop
// once every record is in their table.
func compactionRun(ctx context.Context, agentBin, bootstrap, python string, n, rounds int) ([]result, []scanRow, error) {
	topic := fmt.Sprintf("bench-compact-%d", time.Now().UnixNano())
	log.Printf("producing %d records of about 100 bytes to %s", n, topic)
	produced, err := produce(ctx, bootstrap, []string{topic}, topicPartitions, n, smallRecords(0, smallJSON))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", topic, err)
	}
	w := load{topics: []string{topic}, partitions: topicPartitions, records: int64(n), bytes: produced}
	plain := fmt.Sprintf("agent: JSON, files of %d rows", compactRows)
	compacting := plain + ", compacting"
	if _, _, err := compactionIngest(ctx, agentBin, bootstrap, python, w, plain+", warming up", "", false); err != nil {
		return nil, nil, fmt.Errorf("warming up: %w", err)
	}
	var runs [2][]result // without compaction, with it
	var scans []scanRow
	for i := range 2*rounds + 1 {
		compact := i%2 == 1
		name, scan := plain, ""
		switch i {
		case 0:
			scan = plain + ", not compacted"
		case 1:
			scan = compacting + ", compacted"
		}
		if compact {
			name = compacting
		}
		r, s, err := compactionIngest(ctx, agentBin, bootstrap, python, w, name, scan, compact)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		log.Printf("%s: %.0f records/s; memory budget: peak %.0f MB of %.0f MB, %d fetches paused, %d flushes asked",
			name, r.RecordsPerSec, r.Memory.PeakUsedMB, r.Memory.LimitMB, r.Memory.Pauses, r.Memory.Flushes)
		runs[i%2] = append(runs[i%2], r)
		if scan != "" {
			scans = append(scans, s)
		}
	}
	results := []result{median(runs[0]), median(runs[1])}
	results[1].OfUncompacted = pairedRatio(runs[0], runs[1])
	return results, scans, nil
}

// pairedRatio returns the median over the runs with compaction of each
// one's records/s over the mean of the runs without it just before and
// after it: with[k] ran between without[k] and without[k+1].
func pairedRatio(without, with []result) float64 {
	ratios := make([]float64, len(with))
	for k, r := range with {
		ratios[k] = r.RecordsPerSec / ((without[k].RecordsPerSec + without[k+1].RecordsPerSec) / 2)
	}
	slices.Sort(ratios)
	mid := len(ratios) / 2
	if len(ratios)%2 == 0 {
		return (ratios[mid-1] + ratios[mid]) / 2
	}
	return ratios[mid]
}

// median returns the run of median records/s of runs (of an even number,
// the faster of the two in the middle), with every run's records/s in
// its Runs.
func median(runs []result) result {
	sorted := slices.Clone(runs)
	slices.SortFunc(sorted, func(a, b result) int { return cmp.Compare(a.RecordsPerSec, b.RecordsPerSec) })
	m := sorted[len(sorted)/2]
	for _, r := range runs {
		m.Runs = append(m.Runs, math.Round(r.RecordsPerSec))
	}
	return m
}

// compactionIngest runs one agent of compactionRun until every record is
// in its table; when scan is not "", it then waits for a compacting
// agent's maintenance to settle and scans its table as scan.
func compactionIngest(ctx context.Context, agentBin, bootstrap, python string, w load, name, scan string, compact bool) (result, scanRow, error) {
	a, err := startAgent(ctx, agentBin, bootstrap, "", nil)
	if err != nil {
		return result{}, scanRow{}, err
	}
	defer a.stop()
	p := benchPipeline(true, "", tablesOf(w, jsonValue))
	p.MaxRowsPerFile, p.AutoCompact, p.AutoCompactMinFiles, p.TargetFileSizeMB = compactRows, &compact, compactMinFiles, compactTargetMB
	start := time.Now()
	if _, err := a.c.PutPipeline(ctx, p); err != nil {
		return result{}, scanRow{}, err
	}
	var r result
	var ingestedAt time.Time
	var last spec.MaintenanceStatus
	var peakUsed int64
	for i, ingested := 0, false; ; i++ {
		if i > 0 {
			time.Sleep(50 * time.Millisecond)
		}
		if !ingested && i%4 == 0 {
			m, err := memoryMetrics(ctx, a.ep)
			if err != nil {
				return result{}, scanRow{}, err
			}
			peakUsed = max(peakUsed, m["used_bytes"])
		}
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
			ingested, ingestedAt = true, time.Now()
			r = measured(name, w, time.Since(start).Seconds())
			r.addUsage(a.cmd.Process.Pid)
			if err := tally(&r, w, st.Tables); err != nil {
				return result{}, scanRow{}, err
			}
			if r.Memory, err = a.budgetUse(ctx, peakUsed); err != nil {
				return result{}, scanRow{}, err
			}
		}
		if !ingested {
			continue
		}
		if !compact || scan == "" {
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
	location := resp.Status.Tables[0].Location
	if compact {
		// The status counts a pass's commits once the pass ends; the log
		// says when each was made.
		if r.CompactedWhile, err = optimizedBefore(location, ingestedAt); err != nil {
			return result{}, scanRow{}, err
		}
	}
	if scan == "" {
		return r, scanRow{}, nil
	}
	s, err := scanTable(ctx, python, location)
	if err != nil {
		return result{}, scanRow{}, fmt.Errorf("scanning the table: %w", err)
	}
	s.Name = scan
	return r, s, nil
}

// optimizedBefore reads the log of the local table at location and counts
// its OPTIMIZE commits made before t, and the files they removed.
func optimizedBefore(location string, t time.Time) (*compacted, error) {
	entries, err := filepath.Glob(filepath.Join(location, "_delta_log", "*.json"))
	if err != nil {
		return nil, err
	}
	c := &compacted{}
	for _, name := range entries {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var optimize, before bool
		removes := 0
		for _, line := range bytes.Split(data, []byte("\n")) {
			var action struct {
				CommitInfo *struct {
					Timestamp int64  `json:"timestamp"`
					Operation string `json:"operation"`
				} `json:"commitInfo"`
				Remove json.RawMessage `json:"remove"`
			}
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			if err := json.Unmarshal(line, &action); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if ci := action.CommitInfo; ci != nil {
				optimize, before = ci.Operation == "OPTIMIZE", ci.Timestamp <= t.UnixMilli()
			}
			if action.Remove != nil {
				removes++
			}
		}
		if optimize && before {
			c.Commits++
			c.Files += int64(removes)
		}
	}
	return c, nil
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
