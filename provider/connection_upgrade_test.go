package provider_test

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
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
	attrs := upgradeState(t, "tributary_connection", oldConnectionState)
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
