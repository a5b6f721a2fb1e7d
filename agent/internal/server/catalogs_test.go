package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

const catalogToken = "iceberg-catalog-token-never-shown"

func TestCatalogLifecycle(t *testing.T) {
	a := newAgent(t, "")
	ctx := t.Context()
	a.mustPut(t, pipeline("p", "local", "events"))
	cat := &spec.Catalog{Name: "main", IcebergREST: &spec.IcebergREST{URI: "http://127.0.0.1:1", Token: catalogToken},
		HiveMetastore: &spec.HiveMetastore{URI: "thrift://127.0.0.1:1"}}
	got, err := a.client.PutCatalog(ctx, cat)
	if err != nil {
		t.Fatal(err)
	}
	if got.IcebergREST.Token != "" || !slices.Equal(got.SecretsSet, []string{"iceberg_rest.token"}) || got.OnDelete != spec.OnDeleteKeep {
		t.Fatalf("PutCatalog = %+v (token %q), want the token left out, listed in secrets_set, on_delete KEEP", got, got.IcebergREST.Token)
	}
	stored, err := os.ReadFile(filepath.Join(a.dir, "catalogs", "main.json"))
	if err != nil || strings.Contains(string(stored), catalogToken) || !strings.Contains(string(stored), "enc:v1:") {
		t.Fatalf("the stored catalog holds its token in plain text, or none (%v): %s", err, stored)
	}
	// The pipeline whose destination_catalog it is runs again, with it.
	if n := a.engine.count(a.engine.applies, "p"); n != 2 {
		t.Fatalf("Apply called %d times after its catalog was created, want 2", n)
	}
	if _, err := a.client.PutCatalog(ctx, cat); err != nil {
		t.Fatal(err)
	}
	if n := a.engine.count(a.engine.applies, "p"); n != 2 {
		t.Fatalf("an unchanged catalog applied its pipeline again (%d applies)", n)
	}
	status, _, body := raw(t, http.MethodGet, a.url+"/v1/catalogs", testToken, "")
	if status != http.StatusOK || !strings.Contains(body, `"thrift://127.0.0.1:1"`) || strings.Contains(body, catalogToken) {
		t.Fatalf("list: %d %s", status, body)
	}
	if err := a.client.DeleteCatalog(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	if n := a.engine.count(a.engine.applies, "p"); n != 3 {
		t.Fatalf("Apply called %d times after its catalog was deleted, want 3", n)
	}
	if _, err := a.client.GetCatalog(ctx, "main"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("GetCatalog after delete: %v, want ErrNotFound", err)
	}
}

func TestCatalogValidation(t *testing.T) {
	a := newAgent(t, "")
	_, err := a.client.PutCatalog(t.Context(), &spec.Catalog{Name: "main", IcebergREST: &spec.IcebergREST{URI: "ftp://x"}, OnDelete: "PURGE"})
	ae := apiError(t, err, http.StatusUnprocessableEntity)
	var paths []string
	for _, e := range ae.Problems {
		paths = append(paths, e.Path)
	}
	if !slices.Equal(paths, []string{"iceberg_rest.uri", "on_delete"}) {
		t.Fatalf("problems on %v, want iceberg_rest.uri and on_delete: %v", paths, ae)
	}
}

// TestDropRegistration checks that the tables that leave a catalog with
// on_delete = DROP_REGISTRATION are dropped from it before the change is
// made, only those, and only where the catalog's table is theirs (at
// their location); a catalog that cannot drop them refuses the change,
// which can then be tried again.
func TestDropRegistration(t *testing.T) {
	var mu sync.Mutex
	var dropped []string
	var failing atomic.Bool
	rest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/v1/namespaces/raw/tables/")
		location := "file:///warehouse/main/raw/" + name
		if name == "t3" {
			location = "file:///elsewhere/t3" // another table of the same name
		}
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/v1/config":
			_, _ = w.Write([]byte(`{"defaults": {}, "overrides": {}}`))
		case r.Method == http.MethodGet:
			_, _ = fmt.Fprintf(w, `{"metadata-location": "x", "metadata": {"format-version": 2, "table-uuid": "u", "location": %q}}`, location)
		case failing.Load():
			http.Error(w, "the catalog is down for the test", http.StatusServiceUnavailable)
		case r.Method == http.MethodDelete && r.URL.Query().Get("purgeRequested") == "false":
			mu.Lock()
			dropped = append(dropped, name)
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		default:
			http.Error(w, "unexpected", http.StatusBadRequest)
		}
	}))
	defer rest.Close()
	a := newAgent(t, "")
	ctx := t.Context()
	p := pipeline("p", "local", "t1")
	for _, name := range []string{"t2", "t3"} {
		p.Tables = append(p.Tables, p.Tables[0])
		p.Tables[len(p.Tables)-1].DestinationTable = name
	}
	a.mustPut(t, p)
	if _, err := a.client.PutCatalog(ctx, &spec.Catalog{Name: "main", IcebergREST: &spec.IcebergREST{URI: rest.URL},
		OnDelete: spec.OnDeleteDropRegistration}); err != nil {
		t.Fatal(err)
	}
	p.Tables = []spec.Table{p.Tables[0], p.Tables[2]}
	// A change the engine refuses drops nothing.
	a.engine.mu.Lock()
	a.engine.applyErr = spec.Errors{{Path: "table[0]", Detail: "refused for the test"}}
	a.engine.mu.Unlock()
	apiError(t, putPipelineErr(ctx, a, p), http.StatusUnprocessableEntity)
	a.engine.mu.Lock()
	a.engine.applyErr = nil
	a.engine.mu.Unlock()
	mu.Lock()
	if len(dropped) > 0 {
		t.Errorf("a refused change dropped %v", dropped)
	}
	mu.Unlock()
	if _, err := a.client.PutPipeline(ctx, p); err != nil {
		t.Fatal(err)
	}
	failing.Store(true)
	apiError(t, a.client.DeletePipeline(ctx, "p"), http.StatusBadGateway)
	if _, err := a.client.GetPipeline(ctx, "p"); err != nil {
		t.Fatalf("the pipeline whose registrations could not be dropped is gone: %v", err)
	}
	failing.Store(false)
	if err := a.client.DeletePipeline(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"t2", "t1"}; !slices.Equal(dropped, want) {
		t.Fatalf("dropped %v, want %v (t3 is another table's)", dropped, want)
	}
}

// putPipelineErr is the error of a PUT of p through a's client.
func putPipelineErr(ctx context.Context, a *agent, p *spec.Pipeline) error {
	_, err := a.client.PutPipeline(ctx, p)
	return err
}
