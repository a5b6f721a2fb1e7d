package main

import (
	"os"
	"testing"
	"time"
)

// TestUsage checks that the usage of a process is read from /proc: this
// test's own, after it spent some CPU time.
func TestUsage(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	for start, x := time.Now(), 0; time.Since(start) < 100*time.Millisecond; x++ {
		_ = x * x
	}
	r := result{Records: 2_000_000, Seconds: 2, BytesPerSec: 1e9}
	r.addUsage(os.Getpid())
	if r.PeakRSSMB <= 0 || r.CPUSeconds <= 0 {
		t.Fatalf("usage %+v; want a resident set and CPU time", r)
	}
	if r.CPUPerMillion != r.CPUSeconds/2 || r.CPUPerGB != r.CPUSeconds/2 {
		t.Errorf("cost %v s per million and %v s per GB of %v s for 2 million records and 2 GB", r.CPUPerMillion, r.CPUPerGB, r.CPUSeconds)
	}
}
