// Package objstoretest names the object store servers tests may keep tables
// on: the S3-compatible server of tools/s3.sh, the GCS emulator of
// tools/gcs.sh and the Azure Blob Storage emulator of tools/azure.sh, each
// configured by the client settings its script prints plus the bucket (or
// container) to use. tools/test.sh sets them for the table and end-to-end
// tests. Its [HeldStore], in memory, holds uploads until a test lets them
// complete.
package objstoretest

import (
	"cmp"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
)

// Kinds are the object stores, in the order tests run them.
var Kinds = []string{"s3", "gcs", "azure"}

// Root returns a new root (a URL, as the agent takes a table location or
// warehouse) under name in the test bucket of the object store kind, one
// of [Kinds]. It skips the test when that server is not configured:
//
//	s3     TRIBUTARY_S3_BUCKET and AWS_ENDPOINT_URL (with the keys and
//	       region tools/s3.sh prints); the endpoint, path-style addressing
//	       and region go in the URL's query, as for any S3-compatible server
//	gcs    TRIBUTARY_GCS_BUCKET and STORAGE_EMULATOR_HOST
//	azure  TRIBUTARY_AZURE_CONTAINER and AZURE_STORAGE_DOMAIN (with the
//	       account, key and protocol tools/azure.sh prints)
func Root(t testing.TB, kind, name string) string {
	t.Helper()
	need := func(vars ...string) []string {
		var vals []string
		for _, v := range vars {
			val := os.Getenv(v)
			if val == "" {
				t.Skipf("no %s server: set %v (make test does, with tools/%s.sh)", kind, vars, kind)
			}
			vals = append(vals, val)
		}
		return vals
	}
	switch kind {
	case "s3":
		v := need("TRIBUTARY_S3_BUCKET", "AWS_ENDPOINT_URL")
		return fmt.Sprintf("s3://%s/%s?endpoint=%s&use_path_style=true&region=%s", v[0], name,
			url.QueryEscape(v[1]), cmp.Or(os.Getenv("AWS_REGION"), "us-east-1"))
	case "gcs":
		v := need("TRIBUTARY_GCS_BUCKET", "STORAGE_EMULATOR_HOST")
		return fmt.Sprintf("gs://%s/%s", v[0], name)
	case "azure":
		v := need("TRIBUTARY_AZURE_CONTAINER", "AZURE_STORAGE_DOMAIN")
		return fmt.Sprintf("azblob://%s/%s", v[0], name)
	}
	t.Fatalf("unknown object store %q (want one of %v)", kind, Kinds)
	return ""
}

// ForEachStore runs test as a subtest on the store of a new prefix of an
// in-memory bucket ("mem") and of each object store of [Kinds], which skips
// where its server is not configured (see [Root]).
func ForEachStore(t *testing.T, test func(t *testing.T, s storage.Store)) {
	t.Run("mem", func(t *testing.T) {
		s := storage.FromBucket(memblob.OpenBucket(nil), "mem://test")
		defer s.Close()
		test(t, s)
	})
	for _, kind := range Kinds {
		t.Run(kind, func(t *testing.T) {
			s, err := storage.Open(Root(t, kind, fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())), 0)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			test(t, s)
		})
	}
}

// HeldStore is a store whose written objects become durable only when the
// test says: each [storage.Writer.Commit] waits until Release is closed,
// then fails with Fail when it is set. Tests use it to catch an upload
// still in flight.
type HeldStore struct {
	storage.Store
	Release chan struct{}
	Fail    error
}

// NewHeldStore returns a [HeldStore] on a new in-memory bucket, holding
// every upload until Release is closed.
func NewHeldStore() *HeldStore {
	return &HeldStore{Store: storage.FromBucket(memblob.OpenBucket(nil), "mem://held"), Release: make(chan struct{})}
}

// Create starts writing object name, whose Commit waits for s.Release.
func (s *HeldStore) Create(name string) (storage.Writer, error) {
	w, err := s.Store.Create(name)
	if err != nil {
		return nil, err
	}
	return &heldWriter{Writer: w, s: s}, nil
}

type heldWriter struct {
	storage.Writer
	s *HeldStore
}

func (w *heldWriter) Commit() (storage.Entry, error) {
	<-w.s.Release
	if w.s.Fail != nil {
		w.Abort()
		return storage.Entry{}, w.s.Fail
	}
	return w.Writer.Commit()
}
