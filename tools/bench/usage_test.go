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

// around charges a row with the CPU time the servers used while it ran,
// and leaves a server it cannot read at 0.
func TestServersAround(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	s := servers{broker: os.Getpid(), store: 1 << 30} // no such process
	r, err := s.around(func() (result, error) {
		for start, x := time.Now(), 0; time.Since(start) < 100*time.Millisecond; x++ {
			_ = x * x
		}
		return result{Name: "row"}, nil
	})
	if err != nil || r.Name != "row" {
		t.Fatalf("around returned %+v, %v", r, err)
	}
	if r.BrokerCPUSeconds <= 0 || r.StoreCPUSeconds != 0 {
		t.Errorf("broker %v s, store %v s; want the test's own CPU time, and 0 for a process that does not exist",
			r.BrokerCPUSeconds, r.StoreCPUSeconds)
	}
}

// compareToLocal gives the machine's CPU ratio only when both servers were
// measured.
func TestCompareToLocal(t *testing.T) {
	local := result{RecordsPerSec: 100, CPUSeconds: 1, BrokerCPUSeconds: 0.5}
	s3 := result{RecordsPerSec: 80, CPUSeconds: 1.2, BrokerCPUSeconds: 0.3, StoreCPUSeconds: 0.3}
	compareToLocal(&s3, local)
	if s3.OfLocal != 0.8 || s3.CPUOfLocal != 1.2 || s3.MachineCPUOfLocal != 1.8/1.5 {
		t.Errorf("ratios %v, %v, %v; want 0.8, 1.2, 1.2", s3.OfLocal, s3.CPUOfLocal, s3.MachineCPUOfLocal)
	}
	unmeasured := result{RecordsPerSec: 80, CPUSeconds: 1.2, BrokerCPUSeconds: 0.3}
	compareToLocal(&unmeasured, local)
	if unmeasured.MachineCPUOfLocal != 0 {
		t.Errorf("machine ratio %v without the S3 server's CPU time; want none", unmeasured.MachineCPUOfLocal)
	}
}
