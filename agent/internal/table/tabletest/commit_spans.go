package tabletest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// CommitSpans reads the log of the local table in dir, entry by entry in
// version order, and returns for each entry that adds data files the
// offsets it covers: the sum over its txn actions of how far each moved its
// application's (partition's) offset from where the entries before left
// it. The first txn action of an application sets where it starts (tables
// record a partition's starting offset before reading it).
func CommitSpans(t testing.TB, dir string) []int64 {
	t.Helper()
	spans, err := commitSpans(dir)
	if err != nil {
		t.Fatal(err)
	}
	return spans
}

// commitSpans is CommitSpans, returning the first problem as an error.
func commitSpans(dir string) ([]int64, error) {
	entries, err := filepath.Glob(filepath.Join(dir, "_delta_log", "*.json"))
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("no log entries in %s", dir)
	}
	slices.Sort(entries) // zero-padded versions
	offsets := map[string]int64{}
	var spans []int64
	for _, e := range entries {
		b, err := os.ReadFile(e)
		if err != nil {
			return nil, err
		}
		var span int64
		adds := false
		for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
			var action struct {
				Txn *struct {
					AppID   string `json:"appId"`
					Version int64  `json:"version"`
				} `json:"txn"`
				Add json.RawMessage `json:"add"`
			}
			if err := json.Unmarshal([]byte(line), &action); err != nil {
				return nil, fmt.Errorf("log entry %s: %w", filepath.Base(e), err)
			}
			if action.Txn != nil {
				if prev, ok := offsets[action.Txn.AppID]; ok {
					span += action.Txn.Version - prev
				}
				offsets[action.Txn.AppID] = action.Txn.Version
			}
			adds = adds || action.Add != nil
		}
		if adds {
			spans = append(spans, span)
		}
	}
	return spans, nil
}
