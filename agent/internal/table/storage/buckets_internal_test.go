package storage

import (
	"errors"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
)

// TestBucketsShared opens stores of one bucket and checks that they share
// its one open bucket while it is younger than bucketReuse, a store closed
// twice giving it back once; that the next store after that opens it
// again, the old one closing with its last store; that a bucket nothing
// uses stays open for the next store until then, and closes after, whichever
// bucket the next store opens; that one which refused a store's
// credentials serves no new store; and that a failed open is not kept.
func TestBucketsShared(t *testing.T) {
	now := time.Unix(0, 0)
	bs := &buckets{open: map[string]*sharedBucket{}, now: func() time.Time { return now }}
	opened := 0
	open := func() (*blob.Bucket, error) {
		opened++
		return memblob.OpenBucket(nil), nil
	}
	a, putA, _, err := bs.get("s3://b", open)
	if err != nil {
		t.Fatal(err)
	}
	b, putB, _, _ := bs.get("s3://b", open)
	c, putC, _, _ := bs.get("s3://other", open)
	if a != b || a == c || opened != 2 {
		t.Fatalf("two stores of one bucket and one of another opened %d buckets, shared %v; want 2, shared", opened, a == b)
	}
	for range 2 { // a store closed twice gives its bucket back once
		if err := putB(); err != nil {
			t.Fatal(err)
		}
	}
	if users := bs.open["s3://b"].users; users != 1 {
		t.Fatalf("the bucket has %d users after one of its two stores closed twice, want 1", users)
	}
	if err := putC(); err != nil {
		t.Fatal(err)
	}
	// Unused, c stays open for the next store of its bucket.
	if err := c.WriteAll(t.Context(), "k", nil, nil); err != nil {
		t.Errorf("an unused bucket was closed: %v", err)
	}

	now = now.Add(bucketReuse)
	d, putD, _, _ := bs.get("s3://b", open)
	if d == a || opened != 3 {
		t.Fatalf("a store %v after the bucket opened did not open it again", bucketReuse)
	}
	if err := a.WriteAll(t.Context(), "k", nil, nil); err != nil {
		t.Errorf("the old bucket closed while a store used it: %v", err)
	}
	// Past its time and unused, another key's bucket closes too: a
	// bucket no store asks for again does not stay open.
	if err := c.WriteAll(t.Context(), "k", nil, nil); err == nil {
		t.Error("an old unused bucket of another key stayed open")
	}
	if err := putA(); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteAll(t.Context(), "k", nil, nil); err == nil {
		t.Error("the old bucket is still open after its last store closed")
	}
	if err := putD(); err != nil {
		t.Fatal(err)
	}
	e, putE, refusedE, _ := bs.get("s3://other", open)
	if e == c || opened != 4 {
		t.Error("an old unused bucket served a new store")
	}
	// A bucket that refused a store's credentials serves no new store,
	// and closes with its last one.
	refusedE()
	f, putF, _, _ := bs.get("s3://other", open)
	if f == e || opened != 5 {
		t.Error("a bucket that refused its credentials served a new store")
	}
	if err := e.WriteAll(t.Context(), "k", nil, nil); err != nil {
		t.Errorf("a refused bucket closed while a store used it: %v", err)
	}
	_ = putE()
	if err := e.WriteAll(t.Context(), "k", nil, nil); err == nil {
		t.Error("a refused bucket is still open after its last store closed")
	}
	_ = putF()

	failed := errors.New("no credentials")
	if _, _, _, err := bs.get("s3://bad", func() (*blob.Bucket, error) { return nil, failed }); !errors.Is(err, failed) {
		t.Errorf("get() error = %v, want %v", err, failed)
	}
	if _, ok := bs.open["s3://bad"]; ok {
		t.Error("a bucket that failed to open is kept")
	}
}
