package server_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// kafkaSink returns an exactly-once sink of topic in to topic out through
// connection conn.
func kafkaSink(name, conn string) *spec.KafkaSink {
	return &spec.KafkaSink{Name: name, Connection: conn, Source: &spec.KafkaOptions{Topics: []string{"in"}},
		Topic: "out", DeliveryGuarantee: spec.DeliveryExactlyOnce}
}

// TestKafkaSinkLifecycle: PUT stores a normalized sink and starts it; GET
// and the list show it with the engine's status; a restarted agent resumes
// it; its connection cannot be deleted under it; DELETE stops it.
func TestKafkaSinkLifecycle(t *testing.T) {
	ctx := context.Background()
	a := newAgent(t, "")
	if _, err := a.client.PutConnection(ctx, connection("c")); err != nil {
		t.Fatal(err)
	}
	got, err := a.client.PutKafkaSink(client.CreateOnly(ctx), kafkaSink("k", "c"))
	if err != nil {
		t.Fatalf("PUT: %v", err)
	}
	if got.Spec.PartitionStrategy != spec.PartitionAllToZero || got.Spec.ValueFormat != spec.SinkFormatDebeziumJSON ||
		got.Spec.Source.StartingOffset == "" || !got.Spec.Headers() || got.Status.State != spec.StateRunning {
		t.Fatalf("PUT answered %+v; want it normalized and RUNNING", got)
	}
	if n := a.engine.count(a.engine.sinkApplies, "k"); n != 1 {
		t.Fatalf("%d applies, want 1", n)
	}
	if _, err := a.client.PutKafkaSink(client.CreateOnly(ctx), kafkaSink("k", "c")); apiError(t, err, http.StatusPreconditionFailed) == nil {
		t.Fatal("a second create was accepted")
	}
	// An unchanged PUT restarts nothing.
	if _, err := a.client.PutKafkaSink(ctx, kafkaSink("k", "c")); err != nil {
		t.Fatal(err)
	}
	if n := a.engine.count(a.engine.sinkApplies, "k"); n != 1 {
		t.Fatalf("%d applies after an unchanged PUT, want 1", n)
	}
	list, err := a.client.ListKafkaSinks(ctx)
	if err != nil || len(list) != 1 || list[0].Status.Positions["in/0"] != 3 {
		t.Fatalf("list = %+v, %v", list, err)
	}

	_, _, body := raw(t, http.MethodGet, a.url+"/metrics", testToken, "")
	for _, want := range []string{`tributary_kafka_sink_up{sink="k",state="RUNNING"} 1`, `tributary_kafka_sink_records_total{sink="k"} 3`} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics has no %s:\n%s", want, body)
		}
	}

	err = a.client.DeleteConnection(ctx, "c")
	if ae := apiError(t, err, http.StatusConflict); !strings.Contains(ae.Detail, `kafka sink(s) "k"`) {
		t.Fatalf("deleting the connection: %v", err)
	}

	b := newAgent(t, a.dir)
	if err := b.srv.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.engine.SinkStatus("k"); !ok {
		t.Fatal("a restarted agent did not resume the sink")
	}

	if err := a.client.DeleteKafkaSink(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.client.GetKafkaSink(ctx, "k"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("GET after DELETE: %v", err)
	}
	if n := a.engine.count(a.engine.sinkRemoves, "k"); n != 1 {
		t.Fatalf("%d removes, want 1", n)
	}
}

// TestKafkaSinkRefused: an invalid sink is a 422 on its attribute, a
// missing connection too; a sink the engine cannot start is shown FAILED
// with the reason.
func TestKafkaSinkRefused(t *testing.T) {
	ctx := context.Background()
	a := newAgent(t, "")
	bad := kafkaSink("k", "c")
	bad.PartitionStrategy = "hash-by-key"
	_, err := a.client.PutKafkaSink(ctx, bad)
	problemAt(t, err, http.StatusUnprocessableEntity, "partition_strategy", `"HASH_BY_KEY"`)

	_, err = a.client.PutKafkaSink(ctx, kafkaSink("k", "c"))
	problemAt(t, err, http.StatusUnprocessableEntity, "connection_name", `"c"`)

	if _, err := a.client.PutConnection(ctx, connection("c")); err != nil {
		t.Fatal(err)
	}
	a.engine.setSinkErr(errors.New("broker down"))
	if _, err := a.client.PutKafkaSink(ctx, kafkaSink("k", "c")); apiError(t, err, http.StatusInternalServerError) == nil {
		t.Fatal("a sink that did not start answered 2xx")
	}
	got, err := a.client.GetKafkaSink(ctx, "k")
	if err != nil || got.Status.State != spec.StateFailed || !strings.Contains(got.Status.LastError, "broker down") {
		t.Fatalf("GET = %+v, %v; want FAILED with the error", got, err)
	}
	// The connection's PUT applies it again.
	a.engine.setSinkErr(nil)
	if _, err := a.client.PutConnection(ctx, connection("c")); err != nil {
		t.Fatal(err)
	}
	if got, err := a.client.GetKafkaSink(ctx, "k"); err != nil || got.Status.State != spec.StateRunning {
		t.Fatalf("GET after the connection's PUT = %+v, %v", got, err)
	}
}

// TestKafkaSinkDryRun: a dry run answers what a PUT would store, or the
// problems it would get, the engine's included, and stores nothing.
func TestKafkaSinkDryRun(t *testing.T) {
	ctx := context.Background()
	a := newAgent(t, "")
	_, err := a.client.DryRunKafkaSink(ctx, kafkaSink("k", "c"))
	problemAt(t, err, http.StatusUnprocessableEntity, "connection_name", `"c"`)
	if _, err := a.client.PutConnection(ctx, connection("c")); err != nil {
		t.Fatal(err)
	}
	got, err := a.client.DryRunKafkaSink(ctx, kafkaSink("k", "c"))
	if err != nil || got.ValueFormat != spec.SinkFormatDebeziumJSON {
		t.Fatalf("dry run = %+v, %v; want the sink normalized", got, err)
	}
	a.engine.setSinkErr(spec.Errors{{Path: "source_table", Detail: "not supported"}})
	_, err = a.client.DryRunKafkaSink(ctx, kafkaSink("k", "c"))
	problemAt(t, err, http.StatusUnprocessableEntity, "source_table", "not supported")
	if _, err := a.client.GetKafkaSink(ctx, "k"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a dry run stored the sink: %v", err)
	}
	if n := a.engine.count(a.engine.sinkApplies, "k"); n != 0 {
		t.Fatalf("a dry run applied the sink %d times", n)
	}
}

// TestKafkaSinkTransactionalIDConflict: a second exactly-once sink with
// the transactional id of a stored one is refused, naming it; the first
// may be applied again.
func TestKafkaSinkTransactionalIDConflict(t *testing.T) {
	ctx := context.Background()
	a := newAgent(t, "")
	if _, err := a.client.PutConnection(ctx, connection("c")); err != nil {
		t.Fatal(err)
	}
	first := kafkaSink("k1", "c")
	first.TransactionalID = "shared"
	if _, err := a.client.PutKafkaSink(ctx, first); err != nil {
		t.Fatal(err)
	}
	if _, err := a.client.PutKafkaSink(ctx, first); err != nil {
		t.Fatalf("the same sink again: %v", err)
	}
	second := kafkaSink("k2", "c")
	second.TransactionalID = "shared"
	_, err := a.client.PutKafkaSink(ctx, second)
	problemAt(t, err, http.StatusConflict, "transactional_id", `kafka sink "k1" already writes with transactional id "shared"`)
	second.TransactionalID = ""
	if _, err := a.client.PutKafkaSink(ctx, second); err != nil {
		t.Fatalf("a sink of its own transactional id: %v", err)
	}
}
