package deltasink

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// A gap found again, or the rest of it found by a micro-batch that starts
// inside it, is pending and listed once; a commit takes only the gaps whose
// partition it moves past.
func TestDataLossAddTo(t *testing.T) {
	st := &TableState{}
	d := newDataLoss(slog.Default(), func() []*TableState { return []*TableState{st} })
	a := spec.DataLossGap{Topic: "t", Partition: 0, From: 5, To: 9}
	b := spec.DataLossGap{Topic: "t", Partition: 1, From: 0, To: 3}
	d.skip(a)
	d.skip(a)
	d.skip(spec.DataLossGap{Topic: "t", Partition: 0, From: 7, To: 9})
	d.skip(b)
	if len(st.Status.DataLoss) != 2 || st.Status.DataLossOffsets != 7 {
		t.Fatalf("status %+v, want 2 gaps and 7 offsets", st.Status)
	}
	var c table.Commit
	d.AddTo(&c, map[kafka.TopicPartition]int64{{Topic: "t", Partition: 0}: 9, {Topic: "t", Partition: 1}: 0})
	if c.Counters[counterDataLoss] != 4 || !strings.Contains(c.Parameters[ParamDataLoss], `"from":5,"to":9`) ||
		strings.Contains(c.Parameters[ParamDataLoss], `"partition":1`) {
		t.Errorf("commit %+v: want the gap of t/0 only", c)
	}
	if len(d.pending) != 1 || d.pending[0] != b {
		t.Errorf("pending %+v, want the gap of t/1", d.pending)
	}
}

// A commit that moves into a gap (a micro-batch, or a triggered run, whose
// end lies inside it) records the part of the gap before its offset, and
// keeps the rest pending: a loop that starts again from that commit finds
// only the rest, and the log still records the whole gap, each offset once.
func TestDataLossAddToInsideGap(t *testing.T) {
	tp0 := kafka.TopicPartition{Topic: "t"}
	st := &TableState{}
	d := newDataLoss(slog.Default(), func() []*TableState { return []*TableState{st} })
	d.skip(spec.DataLossGap{Topic: "t", From: 10, To: 50})
	var first table.Commit
	d.AddTo(&first, map[kafka.TopicPartition]int64{tp0: 30})
	if first.Counters[counterDataLoss] != 20 || !strings.Contains(first.Parameters[ParamDataLoss], `"from":10,"to":30`) {
		t.Fatalf("commit at 30: %+v; want the gap's part [10, 30)", first)
	}
	// The rest, found again by the next micro-batch, is not counted twice.
	d.skip(spec.DataLossGap{Topic: "t", From: 30, To: 50})
	if len(d.pending) != 1 || d.pending[0].From != 30 || d.pending[0].To != 50 || st.Status.DataLossOffsets != 40 {
		t.Fatalf("pending %+v, status %+v; want [30, 50) pending and 40 offsets", d.pending, st.Status)
	}
	// A restart from the first commit finds [30, 50) only.
	again := newDataLoss(slog.Default(), func() []*TableState { return nil })
	again.skip(spec.DataLossGap{Topic: "t", From: 30, To: 50})
	var second table.Commit
	again.AddTo(&second, map[kafka.TopicPartition]int64{tp0: 60})
	if total := first.Counters[counterDataLoss] + second.Counters[counterDataLoss]; total != 40 ||
		!strings.Contains(second.Parameters[ParamDataLoss], `"from":30,"to":50`) {
		t.Fatalf("commits %+v and %+v record %d lost offsets; want the whole gap, 40", first, second, total)
	}
}

// The lag in bytes is the lag times the mean size of the records fetched
// from the partition, 0 before any was; the table's totals sum them.
func TestLagBytes(t *testing.T) {
	tp := kafka.TopicPartition{Topic: "t"}
	rs := NewRecordSizes(5 * time.Minute)
	if got := rs.PartitionStatus(tp, 10, 30); got.Lag != 20 || got.LagBytes != 0 {
		t.Errorf("before any fetch: %+v, want lag 20 and 0 bytes", got)
	}
	rs.Add(tp, []record.Record{{Key: []byte("k"), Value: []byte("value")}, {Value: []byte("vv"),
		Headers: []record.Header{{Key: "h", Value: []byte("x")}}}}, time.Unix(0, 0)) // 6 and 4 bytes
	ps := []spec.PartitionStatus{rs.PartitionStatus(tp, 10, 30), rs.PartitionStatus(kafka.TopicPartition{Topic: "u"}, 5, 2)}
	if ps[0].LagBytes != 100 || ps[1].Lag != 0 {
		t.Errorf("statuses %+v, want 100 lag bytes for t/0 and no lag for u/0", ps)
	}
	if lag, bytes := lagTotals(ps); lag != 20 || bytes != 100 {
		t.Errorf("totals %d, %d; want 20, 100", lag, bytes)
	}
}

// TestLagBytesWindow checks that the mean record size comes from the
// fetches of the last bytes_estimate_window_length, the window ending at
// the latest fetch, as Spark's bytesEstimateWindowLength: once records
// grow from 10 to 1,000 bytes, the estimate follows within a window
// instead of staying near the mean since start. The clock is the fetch
// times the test passes.
func TestLagBytesWindow(t *testing.T) {
	tp := kafka.TopicPartition{Topic: "t"}
	rs := NewRecordSizes(5 * time.Minute)
	recs := func(size int) []record.Record {
		rs := make([]record.Record, 10)
		for i := range rs {
			rs[i].Value = make([]byte, size)
		}
		return rs
	}
	start := time.Unix(1_700_000_000, 0)
	for s := 0; s < 600; s += 10 { // ten minutes of small records
		rs.Add(tp, recs(10), start.Add(time.Duration(s)*time.Second))
	}
	if got := rs.lagBytes(tp, 100); got != 1000 {
		t.Fatalf("after small records: %d lag bytes, want 1000", got)
	}
	big := start.Add(10 * time.Minute)
	rs.Add(tp, recs(1000), big)
	if got := rs.lagBytes(tp, 100); got <= 1000 || got >= 100_000 {
		t.Fatalf("a big fetch in the window: %d lag bytes, want a mean between the sizes", got)
	}
	rs.Add(tp, recs(1000), big.Add(5*time.Minute))
	if got := rs.lagBytes(tp, 100); got != 100_000 {
		t.Fatalf("a window after the small records: %d lag bytes, want 100000 (1,000-byte records only)", got)
	}
	if n := len(rs.parts[tp]); n > sizeBuckets+1 {
		t.Fatalf("%d buckets kept, want at most %d", n, sizeBuckets+1)
	}
}
