package store_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

func open(t *testing.T, dir string) *store.Store {
	t.Helper()
	s, err := store.Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func pipeline(name string) *spec.Pipeline {
	return &spec.Pipeline{
		Name: name, Connection: "local", DestinationCatalog: "main", DestinationSchema: "raw",
		Tables: []spec.Table{{DestinationTable: "events", ConnectorOptions: spec.ConnectorOptions{
			KafkaOptions: spec.KafkaOptions{Topics: []string{"events"}},
		}}},
	}
}

func TestPutGetListDeletePersist(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	for _, name := range []string{"b", "a"} {
		if err := s.Pipelines.Put(pipeline(name)); err != nil {
			t.Fatalf("Put %s: %v", name, err)
		}
	}
	if err := s.Connections.Put(&spec.Connection{Name: "local", BootstrapServers: []string{"127.0.0.1:9092"}}); err != nil {
		t.Fatalf("Put connection: %v", err)
	}

	// A second store on the same folder sees everything, in name order.
	s2 := open(t, dir)
	list, err := s2.Pipelines.List()
	if err != nil || len(list) != 2 || list[0].Name != "a" || list[1].Name != "b" {
		t.Fatalf("List = %+v, %v; want a, b", list, err)
	}
	c, err := s2.Connections.Get("local")
	if err != nil || c.BootstrapServers[0] != "127.0.0.1:9092" {
		t.Fatalf("Get connection = %+v, %v", c, err)
	}

	if err := s2.Pipelines.Delete("a"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s2.Pipelines.Get("a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get after Delete: err = %v, want ErrNotFound", err)
	}
	if err := s2.Pipelines.Delete("a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second Delete: err = %v, want ErrNotFound", err)
	}
	list, _ = open(t, dir).Pipelines.List()
	if len(list) != 1 || list[0].Name != "b" {
		t.Fatalf("after Delete and reopen: %+v, want only b", list)
	}
}

func TestModes(t *testing.T) {
	dir := t.TempDir()
	// A folder left readable by others is tightened on Open.
	if err := os.Mkdir(filepath.Join(dir, "pipelines"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir)
	if err := s.Pipelines.Put(pipeline("p")); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{
		filepath.Join(dir, "pipelines"):        0o700,
		filepath.Join(dir, "connections"):      0o700,
		filepath.Join(dir, "pipelines/p.json"): 0o600,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s mode = %o, want %o", path, got, want)
		}
	}
}

func TestValuesAreCopies(t *testing.T) {
	s := open(t, t.TempDir())
	p := pipeline("p")
	if err := s.Pipelines.Put(p); err != nil {
		t.Fatal(err)
	}
	p.Tables[0].DestinationTable = "changed"
	got, _ := s.Pipelines.Get("p")
	got.Tables[0].ConnectorOptions.KafkaOptions.Topics[0] = "changed"
	again, _ := s.Pipelines.Get("p")
	if again.Tables[0].DestinationTable != "events" || again.Tables[0].ConnectorOptions.KafkaOptions.Topics[0] != "events" {
		t.Fatalf("stored value changed through a caller's copy: %+v", again.Tables[0])
	}
}

func TestOpenCleansAndRefuses(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		content string
		wantErr string // "" means Open succeeds and the file is gone
	}{
		{name: "leftover temp file", file: ".tmp-123", content: "{", wantErr: ""},
		{name: "corrupt json", file: "p.json", content: "{", wantErr: "p.json"},
		{name: "unknown field", file: "p.json", content: `{"name":"p","bogus":1}`, wantErr: `unknown field "bogus"`},
		{name: "name mismatch", file: "p.json", content: `{"name":"q"}`, wantErr: `named "q"`},
		{name: "trailing data", file: "p.json", content: `{"name":"p"} {}`, wantErr: "after the object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "pipelines"), 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "pipelines", tt.file)
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := store.Open(dir)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("leftover %s still there: %v", tt.file, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Open error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestPutRefusesInvalidName(t *testing.T) {
	s := open(t, t.TempDir())
	for _, name := range []string{"", "../escape", "a/b", ".hidden"} {
		if err := s.Pipelines.Put(pipeline(name)); err == nil {
			t.Errorf("Put(%q) succeeded, want an error", name)
		}
	}
}

func TestConcurrentPuts(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 5 {
				if err := s.Pipelines.Put(pipeline(fmt.Sprintf("p%d", (i+j)%4))); err != nil {
					t.Error(err)
				}
				if _, err := s.Pipelines.List(); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	list, err := open(t, dir).Pipelines.List()
	if err != nil || len(list) != 4 {
		t.Fatalf("after concurrent puts: %d pipelines, %v; want 4", len(list), err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "pipelines"))
	if len(entries) != 4 {
		t.Fatalf("%d files in pipelines/, want 4 (no leftovers)", len(entries))
	}
}

// TestFanoutSchemas: fanout schemas are a collection of their own, in
// fanout_schemas/, whose names may repeat a pipeline's.
func TestFanoutSchemas(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	if err := s.Pipelines.Put(pipeline("p")); err != nil {
		t.Fatal(err)
	}
	f := &spec.FanoutSchema{
		Name: "p", Pipeline: "p", DestinationCatalog: "main", DestinationSchema: "events",
		FanoutOptions: spec.FanoutOptions{TableIDFields: []string{"type"}, OnInvalidRoute: spec.OnInvalidRouteDeadLetter},
	}
	if err := s.FanoutSchemas.Put(f); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "fanout_schemas", "p.json")); err != nil {
		t.Fatalf("the fanout schema's file: %v", err)
	}
	s2 := open(t, dir)
	got, err := s2.FanoutSchemas.Get("p")
	if err != nil || got.FanoutOptions.OnInvalidRoute != spec.OnInvalidRouteDeadLetter || got.FanoutOptions.TableIDFields[0] != "type" {
		t.Fatalf("Get after reopen = %+v, %v", got, err)
	}
	if err := s2.FanoutSchemas.Delete("p"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s2.Pipelines.Get("p"); err != nil {
		t.Fatalf("deleting the fanout schema took the pipeline of the same name: %v", err)
	}
	if list, err := open(t, dir).FanoutSchemas.List(); err != nil || len(list) != 0 {
		t.Fatalf("List after Delete = %+v, %v; want none", list, err)
	}
}

// TestKafkaSinks: Kafka sinks are a collection of their own, in
// kafka_sinks/, read back after a reopen.
func TestKafkaSinks(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	k := &spec.KafkaSink{Name: "out", Connection: "c", Source: &spec.KafkaOptions{Topics: []string{"in"}}, Topic: "t",
		DeliveryGuarantee: spec.DeliveryExactlyOnce}
	if err := s.KafkaSinks.Put(k); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "kafka_sinks", "out.json")); err != nil {
		t.Fatalf("the sink's file: %v", err)
	}
	got, err := open(t, dir).KafkaSinks.Get("out")
	if err != nil || got.Topic != "t" || got.Source == nil || got.Source.Topics[0] != "in" || !got.ExactlyOnce() {
		t.Fatalf("Get after reopen = %+v, %v", got, err)
	}
	if err := s.KafkaSinks.Delete("out"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if list, err := open(t, dir).KafkaSinks.List(); err != nil || len(list) != 0 {
		t.Fatalf("List after Delete = %+v, %v; want none", list, err)
	}
}
