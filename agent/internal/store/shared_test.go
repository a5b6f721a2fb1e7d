package store_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/objstoretest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// sharedAgents opens the shared state of cluster "c" in root as n agents
// ("a0", "a1", ...), each with the key file key.
func sharedAgents(t *testing.T, root storage.Store, key string, n int) []*store.Store {
	t.Helper()
	out := make([]*store.Store, n)
	for i := range out {
		st, err := store.OpenShared(root, "c", fmt.Sprintf("a%d", i), key)
		if err != nil {
			t.Fatalf("agent %d: OpenShared: %v", i, err)
		}
		out[i] = st
	}
	return out
}

func keyFile(t *testing.T, b byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secrets.key")
	writeKey(t, path, b, 0o600)
	return path
}

func mustSync(t *testing.T, st *store.Store) {
	t.Helper()
	if err := st.Sync(); err != nil {
		t.Fatalf("Sync: %v", err)
	}
}

// TestSharedReadYourWrites: what one agent stores, another reads after a
// Sync, secrets included, and the log holds no secret in clear; a removal
// travels the same way, and watchers see the others' changes.
func TestSharedReadYourWrites(t *testing.T) {
	objstoretest.ForEachStore(t, func(t *testing.T, root storage.Store) {
		agents := sharedAgents(t, root, keyFile(t, 7), 2)
		a, b := agents[0], agents[1]
		var seen [][]string
		b.Pipelines.Watch(func(all []spec.Pipeline) {
			var names []string
			for _, p := range all {
				names = append(names, p.Name)
			}
			seen = append(seen, names)
		})
		conn := secureConnection("kafka")
		if err := a.Connections.Put(conn); err != nil {
			t.Fatal(err)
		}
		if err := a.Pipelines.Put(pipeline("p")); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Pipelines.Get("p"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("before Sync, b has p: %v", err)
		}
		mustSync(t, b)
		got, err := b.Connections.Get("kafka")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(secretValues(&got), secretValues(conn)) {
			t.Errorf("b reads secrets %q, want %q", secretValues(&got), secretValues(conn))
		}
		if _, err := b.Pipelines.Get("p"); err != nil {
			t.Fatal(err)
		}
		if err := b.Pipelines.Delete("p"); err != nil {
			t.Fatal(err)
		}
		mustSync(t, a)
		if _, err := a.Pipelines.Get("p"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after b deleted p, a still has it: %v", err)
		}
		if a.Version() != 3 || b.Version() != 3 {
			t.Errorf("versions %d and %d, want 3 (three changes)", a.Version(), b.Version())
		}
		if want := [][]string{nil, {"p"}, nil}; fmt.Sprint(seen) != fmt.Sprint(want) {
			t.Errorf("b's watcher saw %v, want %v", seen, want)
		}
		entries, err := root.List("log")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := root.Read("log/" + e.Name)
			if err != nil {
				t.Fatal(err)
			}
			assertNoSecret(t, string(data), secretValues(conn))
		}
	})
}

// TestSharedConflict: of two agents that change the state from the same
// version, the second gets ErrConflict and changes nothing; after a Sync
// its retry succeeds.
func TestSharedConflict(t *testing.T) {
	objstoretest.ForEachStore(t, func(t *testing.T, root storage.Store) {
		agents := sharedAgents(t, root, keyFile(t, 7), 2)
		a, b := agents[0], agents[1]
		if err := a.Pipelines.Put(pipeline("from-a")); err != nil {
			t.Fatal(err)
		}
		err := b.Pipelines.Put(pipeline("from-b"))
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("b's Put from a stale version: %v, want ErrConflict", err)
		}
		if _, err := b.Pipelines.Get("from-b"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a conflicting Put changed memory: %v", err)
		}
		mustSync(t, b)
		if err := b.Pipelines.Put(pipeline("from-b")); err != nil {
			t.Fatalf("retry after Sync: %v", err)
		}
		mustSync(t, a)
		all, err := a.Pipelines.List()
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 2 {
			t.Errorf("a has %d pipelines, want both", len(all))
		}

		// A change began on one state is not written on another, even
		// when a Sync brought the other agent's change in meanwhile.
		a.Begin()
		if err := b.Pipelines.Put(pipeline("meanwhile")); err != nil {
			t.Fatal(err)
		}
		mustSync(t, a)
		if err := a.Pipelines.Put(pipeline("checked-before")); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("a Put after a Sync within a change: %v, want ErrConflict", err)
		}
		a.Begin()
		if err := a.Pipelines.Put(pipeline("checked-before")); err != nil {
			t.Fatalf("a Put in a change begun after the Sync: %v", err)
		}
	})
}

// TestSharedRefusals: an agent with another key, or of an older format
// than the state's, refuses to open it, saying why and what to do.
func TestSharedRefusals(t *testing.T) {
	objstoretest.ForEachStore(t, func(t *testing.T, root storage.Store) {
		sharedAgents(t, root, keyFile(t, 7), 1)
		other := keyFile(t, 8)
		_, err := store.OpenShared(root, "c", "intruder", other)
		if err == nil || !strings.Contains(err.Error(), other) || !strings.Contains(err.Error(), "--secrets-key-file") {
			t.Errorf("another key: %v, want a refusal naming %s and --secrets-key-file", err, other)
		}
		if err := root.Put("format.json", []byte(`{"format": 99, "cluster": "c", "key_check": ""}`)); err != nil {
			t.Fatal(err)
		}
		_, err = store.OpenShared(root, "c", "old", keyFile(t, 7))
		if err == nil || !strings.Contains(err.Error(), "format 99") || !strings.Contains(err.Error(), fmt.Sprintf("format %d", store.SharedFormat)) {
			t.Errorf("a newer format: %v, want a refusal naming both formats", err)
		}
		if _, err := store.OpenShared(root, "c", "a", ""); err == nil || !strings.Contains(err.Error(), "--secrets-key-file") {
			t.Errorf("no key file: %v, want a refusal naming --secrets-key-file", err)
		}
	})
}

// TestSharedSnapshots: after many changes, the log keeps a bounded number
// of entries; an agent that starts, and one that fell far behind, read the
// newest snapshot and the changes after it, and agree with the writer.
func TestSharedSnapshots(t *testing.T) {
	objstoretest.ForEachStore(t, func(t *testing.T, root storage.Store) {
		key := keyFile(t, 7)
		agents := sharedAgents(t, root, key, 2)
		a, behind := agents[0], agents[1]
		const changes = 230
		for i := range changes {
			p := pipeline(fmt.Sprintf("p%d", i%40))
			p.DestinationSchema = fmt.Sprintf("s%d", i)
			if i%7 == 3 {
				if err := a.Pipelines.Delete(p.Name); err != nil && !errors.Is(err, store.ErrNotFound) {
					t.Fatal(err)
				}
				continue
			}
			if err := a.Pipelines.Put(p); err != nil {
				t.Fatal(err)
			}
		}
		want, err := a.Pipelines.List()
		if err != nil {
			t.Fatal(err)
		}
		entries, err := root.List("log")
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) > 2*50 {
			t.Errorf("the log holds %d changes after %d, want at most 100", len(entries), changes)
		}
		late := sharedAgents(t, root, key, 1)[0]
		mustSync(t, behind)
		for _, st := range []*store.Store{late, behind} {
			got, err := st.Pipelines.List()
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("an agent reads %d pipelines, the writer %d; or their specs differ", len(got), len(want))
			}
			if st.Version() != a.Version() {
				t.Errorf("version %d, want the writer's %d", st.Version(), a.Version())
			}
		}
	})
}
