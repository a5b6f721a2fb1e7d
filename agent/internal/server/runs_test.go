package server_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestStartRun checks POST /v1/pipelines/{name}/runs: 202 with the
// pipeline for a triggered one the engine runs, 404 for an unknown one, 409
// for a continuous one and for the engine's refusal (with its reason), 400
// with a body, and a pipeline whose apply failed applied again.
func TestStartRun(t *testing.T) {
	a := newAgent(t, "")
	ctx := t.Context()
	once := false
	triggered := pipeline("nightly", "local", "events")
	triggered.Continuous = &once
	a.mustPut(t, triggered, pipeline("live", "local", "clicks"))

	got, err := a.client.StartRun(ctx, "nightly")
	if err != nil {
		t.Fatalf("StartRun: %v", err)
	}
	if got.Spec.Name != "nightly" || got.Status.State == "" {
		t.Errorf("answer = %+v, want the pipeline with its status", got)
	}
	if n := a.engine.count(a.engine.runs, "nightly"); n != 1 {
		t.Fatalf("StartRun reached the engine %d times, want 1", n)
	}
	if status, _, _ := raw(t, http.MethodPost, a.url+"/v1/pipelines/nightly/runs", testToken, ""); status != http.StatusAccepted {
		t.Fatalf("POST runs: status %d, want 202", status)
	}

	if _, err := a.client.StartRun(ctx, "missing"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("StartRun of an unknown pipeline: %v, want ErrNotFound", err)
	}
	if ae := apiError(t, errOf(a.client.StartRun(ctx, "live")), http.StatusConflict); !strings.Contains(ae.Detail, "continuous") {
		t.Errorf("409 for a continuous pipeline says %q, want it to say why", ae.Detail)
	}

	a.engine.mu.Lock()
	a.engine.runErr = &spec.RunRefusedError{Reason: "table main.raw.events is RUNNING"}
	a.engine.mu.Unlock()
	if ae := apiError(t, errOf(a.client.StartRun(ctx, "nightly")), http.StatusConflict); ae.Detail != "table main.raw.events is RUNNING" {
		t.Errorf("409 detail = %q, want the engine's reason", ae.Detail)
	}
	a.engine.mu.Lock()
	a.engine.runErr = nil
	a.engine.mu.Unlock()

	status, header, body := raw(t, http.MethodPost, a.url+"/v1/pipelines/nightly/runs", testToken, "{}")
	if status != http.StatusBadRequest || !strings.Contains(problem(t, header, body).Detail, "takes no body") {
		t.Errorf("POST runs with a body: %d %s, want 400", status, body)
	}

	// A run that never started: the engine lost the pipeline (its apply
	// failed); a run applies it again.
	a.engine.forget("nightly")
	applies := a.engine.count(a.engine.applies, "nightly")
	if _, err := a.client.StartRun(ctx, "nightly"); err != nil {
		t.Fatalf("StartRun of a pipeline the engine does not run: %v", err)
	}
	if n := a.engine.count(a.engine.applies, "nightly"); n != applies+1 {
		t.Fatalf("Apply called %d times, want %d: the run applies the stored pipeline", n, applies+1)
	}
}

// errOf returns the error of a call's two results.
func errOf[T any](_ T, err error) error { return err }
