package main

import (
	"reflect"
	"testing"
)

// TestParseBench: the result lines of go test -bench give their metrics by
// unit, without ns/op and the GOMAXPROCS suffix; log lines, a benchmark's
// name printed alone before its logs, PASS and ok lines are left out.
func TestParseBench(t *testing.T) {
	out := `goos: linux
goarch: amd64
pkg: github.com/tributary-io/terraform-provider-tributary/agent/internal/table
cpu: AMD EPYC
BenchmarkConcurrentWriters/writers=1-2         	     128	   7826078 ns/op	       127.8 commits/s	         0 others/commit
BenchmarkConcurrentWriters/writers=8-2         	      15	  68010518 ns/op	        14.70 commits/s	         6.100 others/commit
BenchmarkRebalancePause
    sim_test.go:99: a log line 3 ns/op
BenchmarkRebalancePause-16 	       1	9000000000 ns/op	      1556 kill-p50-ms	      1556 kill-p99-ms	        90.00 leave-p50-ms	        90.00 leave-p99-ms
PASS
ok  	github.com/tributary-io/terraform-provider-tributary/agent/internal/table	11.2s
`
	want := []benchLine{
		{name: "BenchmarkConcurrentWriters/writers=1", metrics: map[string]float64{"commits/s": 127.8, "others/commit": 0}},
		{name: "BenchmarkConcurrentWriters/writers=8", metrics: map[string]float64{"commits/s": 14.7, "others/commit": 6.1}},
		{name: "BenchmarkRebalancePause", metrics: map[string]float64{"kill-p50-ms": 1556, "kill-p99-ms": 1556,
			"leave-p50-ms": 90, "leave-p99-ms": 90}},
	}
	if got := parseBench(out); !reflect.DeepEqual(got, want) {
		t.Errorf("parseBench:\n got %+v\nwant %+v", got, want)
	}
}
