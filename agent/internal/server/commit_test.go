package server_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The desired state holds only specs the engine accepted: a PUT the
// engine refuses is checked before anything is stored, so the store never
// holds the refused spec, not even for a moment. Before, it was written,
// applied, and rolled back.
func TestRefusedSpecNeverStored(t *testing.T) {
	needCompile(t)
	a := newAgent(t, "")
	ctx := t.Context()
	a.mustPut(t, pipeline("p", "local", "events"))
	if _, err := a.client.PutFanoutSchema(ctx, fanout("f", "p", "routed")); err != nil {
		t.Fatal(err)
	}
	// While the engine checks, the store must still hold the old spec.
	var stored []string
	a.engine.checking = func(name string) {
		if got, err := a.client.GetPipeline(ctx, name); err == nil {
			stored = append(stored, got.Spec.Tables[0].ConnectorOptions.KafkaOptions.StartingOffset)
		} else if got, err := a.client.GetFanoutSchema(ctx, name); err == nil {
			stored = append(stored, got.Spec.FanoutOptions.OnInvalidRoute)
		} else {
			stored = append(stored, "none")
		}
	}
	refuse := spec.Errors{{Path: "table[0].destination_table", Detail: "column x changed type"}}
	a.engine.setApplyErr(refuse)
	a.engine.setFanoutErr(refuse)

	changed := pipeline("p", "local", "events")
	changed.Tables[0].ConnectorOptions.KafkaOptions.StartingOffset = spec.StartingOffsetEarliest
	_, err := a.client.PutPipeline(ctx, changed)
	apiError(t, err, http.StatusUnprocessableEntity)
	_, err = a.client.PutPipeline(ctx, pipeline("fresh", "local", "other"))
	apiError(t, err, http.StatusUnprocessableEntity)
	changedFanout := fanout("f", "p", "routed")
	changedFanout.FanoutOptions.OnInvalidRoute = spec.OnInvalidRouteDeadLetter
	_, err = a.client.PutFanoutSchema(ctx, changedFanout)
	apiError(t, err, http.StatusUnprocessableEntity)

	want := []string{spec.StartingOffsetLatest, "none", spec.OnInvalidRouteFail}
	if strings.Join(stored, ",") != strings.Join(want, ",") {
		t.Fatalf("stored while checking: %v, want %v", stored, want)
	}
	// A refused spec never reached Apply either.
	if n := a.engine.count(a.engine.applies, "p") + a.engine.count(a.engine.applies, "fresh"); n != 1 {
		t.Fatalf("Apply called %d times, want only mustPut's", n)
	}
	if n := a.engine.count(a.engine.fanoutApplies, "f"); n != 1 {
		t.Fatalf("ApplyFanout called %d times, want only the create's", n)
	}
	if _, err := a.client.GetPipeline(ctx, "fresh"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a refused new pipeline is stored: err = %v", err)
	}
}

// A changed connection is checked against every pipeline that uses it
// before it is stored: one they refuse is not saved.
func TestRefusedConnectionNeverStored(t *testing.T) {
	a := newAgent(t, "")
	ctx := t.Context()
	a.mustPut(t, pipeline("p", "local", "events"))
	a.engine.setApplyErr(spec.Errors{{Path: "table[0]", Detail: "the key schema changed"}})
	changed := connection("local")
	changed.BootstrapServers = []string{"127.0.0.1:29999"}
	_, err := a.client.PutConnection(ctx, changed)
	ae := apiError(t, err, http.StatusUnprocessableEntity)
	if len(ae.Problems) != 1 || !strings.Contains(ae.Problems[0].Detail, `pipeline "p" refuses the change: table[0]: the key schema changed`) {
		t.Fatalf("problems = %v, want pipeline p's refusal", ae.Problems)
	}
	got, err := a.client.GetConnection(ctx, "local")
	if err != nil || got.BootstrapServers[0] != "127.0.0.1:19092" {
		t.Fatalf("stored connection after a refusal = %+v, %v; want the previous one", got, err)
	}
	if n := a.engine.count(a.engine.applies, "p"); n != 1 {
		t.Fatalf("Apply called %d times, want only mustPut's", n)
	}
	// An error that is no refusal still saves the connection, to be retried.
	a.engine.setApplyErr(errors.New("broker unreachable"))
	status, _, body := raw(t, http.MethodPut, a.url+"/v1/connections/local", testToken, `{"bootstrap_servers":["127.0.0.1:29999"]}`)
	if status != http.StatusInternalServerError || !strings.Contains(body, "was saved") {
		t.Fatalf("PUT with a failing engine: %d %s; want 500 saying it was saved", status, body)
	}
	if got, err := a.client.GetConnection(ctx, "local"); err != nil || got.BootstrapServers[0] != "127.0.0.1:29999" {
		t.Fatalf("connection after a failed re-apply = %+v, %v; want the new one", got, err)
	}
}

// A PUT with If-None-Match: * creates only: on an object that exists it is
// a 412 and changes nothing, so Terraform's create never takes over an
// object someone else made.
func TestConditionalCreate(t *testing.T) {
	needCompile(t)
	a := newAgent(t, "")
	ctx := t.Context()
	create := client.CreateOnly(ctx)
	if _, err := a.client.PutConnection(create, connection("local")); err != nil {
		t.Fatalf("create of a new connection: %v", err)
	}
	if _, err := a.client.PutPipeline(create, pipeline("p", "local", "events")); err != nil {
		t.Fatalf("create of a new pipeline: %v", err)
	}
	if _, err := a.client.PutFanoutSchema(create, fanout("f", "p", "routed")); err != nil {
		t.Fatalf("create of a new fanout schema: %v", err)
	}

	other := connection("local")
	other.BootstrapServers = []string{"127.0.0.1:29999"}
	changed := pipeline("p", "local", "other")
	changedFanout := fanout("f", "p", "elsewhere")
	for _, c := range []struct {
		kind string
		call func() error
	}{
		{"connection", func() error { _, err := a.client.PutConnection(create, other); return err }},
		{"pipeline", func() error { _, err := a.client.PutPipeline(create, changed); return err }},
		{"fanout schema", func() error { _, err := a.client.PutFanoutSchema(create, changedFanout); return err }},
	} {
		err := c.call()
		if !errors.Is(err, client.ErrExists) {
			t.Fatalf("create of an existing %s: err = %v, want ErrExists", c.kind, err)
		}
		if ae := apiError(t, err, http.StatusPreconditionFailed); !strings.Contains(ae.Detail, c.kind+` "`) || !strings.Contains(ae.Detail, "already exists") {
			t.Fatalf("412 detail %q does not say the %s exists", ae.Detail, c.kind)
		}
	}
	if got, err := a.client.GetConnection(ctx, "local"); err != nil || got.BootstrapServers[0] != "127.0.0.1:19092" {
		t.Fatalf("connection after a refused create = %+v, %v", got, err)
	}
	if got, err := a.client.GetPipeline(ctx, "p"); err != nil || got.Spec.Tables[0].DestinationTable != "events" {
		t.Fatalf("pipeline after a refused create = %+v, %v", got, err)
	}
	if got, err := a.client.GetFanoutSchema(ctx, "f"); err != nil || got.Spec.DestinationSchema != "routed" {
		t.Fatalf("fanout schema after a refused create = %+v, %v", got, err)
	}
	if n := a.engine.count(a.engine.applies, "p"); n != 1 {
		t.Fatalf("Apply called %d times, want only the create's", n)
	}

	// The dry run of a create says so too.
	if _, err := a.client.DryRunPipeline(create, changed); !errors.Is(err, client.ErrExists) {
		t.Fatalf("dry run of a create of an existing pipeline: err = %v, want ErrExists", err)
	}
	if _, err := a.client.DryRunFanoutSchema(create, changedFanout); !errors.Is(err, client.ErrExists) {
		t.Fatalf("dry run of a create of an existing fanout schema: err = %v, want ErrExists", err)
	}
	fresh := pipeline("fresh", "local", "fresh")
	if _, err := a.client.DryRunPipeline(create, fresh); err != nil {
		t.Fatalf("dry run of a create of a new pipeline: %v", err)
	}

	// A plain PUT still replaces; any If-None-Match but * is refused.
	if _, err := a.client.PutConnection(ctx, other); err != nil {
		t.Fatalf("PutConnection of an existing connection: %v", err)
	}
	status, h, body := rawWith(t, http.MethodPut, a.url+"/v1/connections/new", testToken, `{"bootstrap_servers":["a:1"]}`,
		http.Header{"Content-Type": {"application/json"}, "If-None-Match": {`"v1"`}})
	if status != http.StatusBadRequest || !strings.Contains(problem(t, h, body).Detail, "If-None-Match") {
		t.Fatalf("If-None-Match with an entity tag: %d %s, want 400", status, body)
	}
}
