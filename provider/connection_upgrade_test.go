package provider_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/tributary-io/terraform-provider-tributary/provider"
)

// oldConnectionState is a tributary_connection state written before the
// security attributes, the write-only secrets and schema_registry.ca_pem.
const oldConnectionState = `{
  "id": "main", "name": "main", "bootstrap_servers": ["b:9092"],
  "schema_registry": {"url": "https://registry", "api_key": "k", "api_secret": "s"}
}`

// TestUpgradeConnectionWithoutSecurity checks that a connection state
// written before the security attributes still loads, with them null and
// its registry secret kept.
func TestUpgradeConnectionWithoutSecurity(t *testing.T) {
	t.Parallel()
	srv := providerserver.NewProtocol6(provider.New("test")())()
	ctx := t.Context()
	schemas, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || len(schemas.Diagnostics) > 0 {
		t.Fatalf("GetProviderSchema: %v %v", err, schemas.Diagnostics)
	}
	cs := schemas.ResourceSchemas["tributary_connection"]
	resp, err := srv.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{
		TypeName: "tributary_connection",
		Version:  cs.Version,
		RawState: &tfprotov6.RawState{JSON: []byte(oldConnectionState)},
	})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("UpgradeResourceState: %v %v", err, resp.Diagnostics)
	}
	v, err := resp.UpgradedState.Unmarshal(cs.ValueType())
	if err != nil {
		t.Fatal(err)
	}
	var attrs map[string]tftypes.Value
	if err := v.As(&attrs); err != nil {
		t.Fatal(err)
	}
	for _, added := range []string{"security_protocol", "sasl", "tls"} {
		if !attrs[added].IsNull() {
			t.Errorf("the upgraded state has %s = %v, want null", added, attrs[added])
		}
	}
	var registry map[string]tftypes.Value
	if err := attrs["schema_registry"].As(&registry); err != nil {
		t.Fatal(err)
	}
	var secret string
	if err := registry["api_secret"].As(&secret); err != nil || secret != "s" || !registry["api_secret_wo_version"].IsNull() {
		t.Errorf("schema_registry = %v, want api_secret kept and api_secret_wo_version null", registry)
	}
}
