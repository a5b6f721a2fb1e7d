package provider_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/tributary-io/terraform-provider-tributary/provider"
)

// oldPipelineState is a tributary_pipeline state written by the schema
// (version 0) that still had the computed state and table_status.
const oldPipelineState = `{
  "id": "orders", "name": "orders", "connection_name": "main",
  "destination_catalog": "main", "destination_schema": "sales",
  "continuous": true, "flush_interval": "10s", "target_file_size_mb": 128, "max_rows_per_file": 1000000,
  "state": "RUNNING",
  "table_status": [{"destination_table": "orders", "state": "RUNNING", "location": "/w/main/sales/orders",
    "version": 12, "rows": 5000, "files": 12, "corrupt_records": 1, "last_error": ""}],
  "table": [{"destination_table": "orders",
    "connector_options": {"kafka_options": {"topics": ["orders"], "topic_pattern": null,
      "starting_offset": "earliest", "isolation_level": "read_committed",
      "key_transformer": {"format": "STRING", "json_options": null},
      "value_transformer": {"format": "JSON", "json_options": {"schema": "id BIGINT", "schema_file_path": null, "schema_file_sha256": null}}}},
    "table_configuration": {"source_metadata_column": "_kafka"}}],
  "timeouts": null
}`

// TestUpgradeStateWithStatus checks that a state written before state and
// table_status left the resource still loads, without them: the framework
// drops attributes the current schema of the same version does not have.
func TestUpgradeStateWithStatus(t *testing.T) {
	t.Parallel()
	attrs := upgradeState(t, "tributary_pipeline", oldPipelineState)
	for _, gone := range []string{"state", "table_status"} {
		if _, ok := attrs[gone]; ok {
			t.Errorf("the upgraded state still has %s", gone)
		}
	}
	var name string
	if err := attrs["name"].As(&name); err != nil || name != "orders" {
		t.Errorf("name = %q (%v), want orders", name, err)
	}
	var tables []tftypes.Value
	if err := attrs["table"].As(&tables); err != nil || len(tables) != 1 {
		t.Errorf("table = %v (%v), want the one table block", attrs["table"], err)
	}
}

// upgradeState sends raw, a state of the resource typeName written by
// schema version 0, through the provider's UpgradeResourceState and returns
// the attributes of the upgraded state. It fails t when the resource's
// schema is no longer version 0: the state then needs a state upgrader,
// and the test an update.
func upgradeState(t *testing.T, typeName, raw string) map[string]tftypes.Value {
	t.Helper()
	srv := providerserver.NewProtocol6(provider.New("test")())()
	ctx := t.Context()
	schemas, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || len(schemas.Diagnostics) > 0 {
		t.Fatalf("GetProviderSchema: %v %v", err, schemas.Diagnostics)
	}
	rs := schemas.ResourceSchemas[typeName]
	if rs.Version != 0 {
		t.Fatalf("%s schema version %d: write a state upgrader from version 0 and update this test", typeName, rs.Version)
	}
	resp, err := srv.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{
		TypeName: typeName,
		Version:  0,
		RawState: &tfprotov6.RawState{JSON: []byte(raw)},
	})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("UpgradeResourceState: %v %v", err, resp.Diagnostics)
	}
	v, err := resp.UpgradedState.Unmarshal(rs.ValueType())
	if err != nil {
		t.Fatal(err)
	}
	var attrs map[string]tftypes.Value
	if err := v.As(&attrs); err != nil {
		t.Fatal(err)
	}
	return attrs
}
