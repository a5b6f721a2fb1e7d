package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// secureModel is a connection model with every security block, its
// write-only secrets set to wo (the configuration during apply) or null
// (the plan).
func secureModel(t *testing.T, wo bool) connectionResourceModel {
	t.Helper()
	ctx := context.Background()
	var diags diag.Diagnostics
	woValue := func(s string) types.String {
		if wo {
			return types.StringValue(s)
		}
		return types.StringNull()
	}
	saslType := connectionAttrType("sasl")
	oauth := objectValue(ctx, &diags, attrObjectType(saslType, "oauth"), oauthModel{
		TokenEndpointURL: types.StringValue("https://idp/token"), ClientID: types.StringValue("tributary"),
		ClientSecretWO: woValue("client-secret-wo"), ClientSecretWOVersion: types.Int64Value(3),
		Token: types.StringValue("static-token"),
	})
	servers, d := types.ListValueFrom(ctx, types.StringType, []string{"b:9093"})
	diags.Append(d...)
	m := connectionResourceModel{
		ID:               types.StringUnknown(),
		Name:             types.StringValue("c1"),
		BootstrapServers: servers,
		SecurityProtocol: types.StringValue("SASL_SSL"),
		SASL: objectValue(ctx, &diags, saslType, saslModel{
			Mechanism: types.StringValue(spec.SASLScram512), Username: types.StringValue("ingest"),
			PasswordWO: woValue("password-wo"), PasswordWOVersion: types.Int64Value(1), OAuth: oauth,
		}),
		TLS: objectValue(ctx, &diags, connectionAttrType("tls"), tlsModel{
			CAPEM: types.StringValue("ca"), CertPEM: types.StringValue("cert"), KeyPEM: types.StringValue("key"),
			KeystoreP12Base64: types.StringValue("p12"), KeystorePassword: types.StringValue("p12-password"),
			InsecureSkipVerify: types.BoolValue(false),
		}),
		SchemaRegistry: objectValue(ctx, &diags, connectionAttrType("schema_registry"), schemaRegistryModel{
			URL: types.StringValue("https://registry"), APIKey: types.StringValue("k"), APISecret: types.StringValue("sr-secret"),
			CAPEM: types.StringValue("sr-ca"),
		}),
	}
	if diags.HasError() {
		t.Fatal(diags)
	}
	return m
}

// TestConnectionPutSendsSecrets applies a connection whose secrets are set
// both ways: the agent receives every secret, the write-only ones from the
// configuration, and the state keeps the plain secrets and the
// _wo_versions but no write-only value.
func TestConnectionPutSendsSecrets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var got spec.Connection
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(got.Redacted())
	}))
	defer srv.Close()
	api, err := client.New(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	r := &connectionResource{}
	r.data = &providerData{client: api}

	s := connectionResourceSchema()
	null := tftypes.NewValue(s.Type().TerraformType(ctx), nil)
	plan := tfsdk.Plan{Schema: s, Raw: null}
	config := tfsdk.Config{Schema: s, Raw: null}
	state := tfsdk.State{Schema: s, Raw: null}
	var diags diag.Diagnostics
	diags.Append(plan.Set(ctx, secureModel(t, false))...)
	cfgState := tfsdk.State{Schema: s, Raw: null}
	diags.Append(cfgState.Set(ctx, secureModel(t, true))...)
	config.Raw = cfgState.Raw
	if diags.HasError() {
		t.Fatal(diags)
	}

	r.put(ctx, plan.Get, config, &state, &diags)
	if diags.HasError() {
		t.Fatal(diags)
	}
	want := map[string]string{
		"schema_registry.api_secret": "sr-secret", "sasl.password": "password-wo",
		"sasl.oauth.client_secret": "client-secret-wo", "sasl.oauth.token": "static-token",
		"tls.key_pem": "key", "tls.keystore_p12_base64": "p12", "tls.keystore_password": "p12-password",
	}
	sent := map[string]string{}
	for _, f := range got.SecretFields() {
		sent[f.Path] = *f.Value
	}
	if !reflect.DeepEqual(sent, want) {
		t.Errorf("the agent received the secrets %v, want %v", sent, want)
	}

	var after connectionResourceModel
	diags.Append(state.Get(ctx, &after)...)
	if diags.HasError() {
		t.Fatal(diags)
	}
	prior := newPriorValues(after.secretObjects(), nil, false)
	for p, v := range map[string]string{"sasl.password_wo": "", "sasl.oauth.client_secret_wo": "", "sasl.password": "",
		"schema_registry.api_secret": "sr-secret", "tls.key_pem": "key", "sasl.oauth.token": "static-token"} {
		if got := prior.secret(p, ""); got.ValueString() != v {
			t.Errorf("state %s = %s, want %q", p, got, v)
		}
	}
	for p, v := range map[string]int64{"sasl.password": 1, "sasl.oauth.client_secret": 3} {
		if got := prior.woVersion(p); got.ValueInt64() != v {
			t.Errorf("state %s = %s, want %d", p, got, v)
		}
	}
	if !prior.secret("sasl.password_wo", "").IsNull() {
		t.Errorf("state sasl.password_wo is not null")
	}
}

// TestOnWriteOnly checks that a problem with a secret set through its
// write-only variant is moved onto that variant, and that others stay.
func TestOnWriteOnly(t *testing.T) {
	t.Parallel()
	viaWO := pathSet{"sasl.password": true}
	for _, tc := range []struct{ in, want spec.FieldError }{
		{spec.FieldError{Path: "sasl.password", Detail: "x"}, spec.FieldError{Path: "sasl.password_wo", Detail: "x"}},
		{spec.FieldError{Path: "schema_registry.api_secret", Detail: "y"}, spec.FieldError{Path: "schema_registry.api_secret", Detail: "y"}},
		{spec.FieldError{Path: "sasl.username", Involves: []string{"sasl.password"}}, spec.FieldError{Path: "sasl.username", Involves: []string{"sasl.password"}}},
	} {
		if got := onWriteOnly(tc.in, viaWO); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("onWriteOnly(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestWriteOnlySchema checks that every secret of writeOnlySecrets has its
// three attributes, the _wo one write-only and sensitive.
func TestWriteOnlySchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := connectionResourceSchema()
	for _, p := range connectionSecrets.paths {
		for _, a := range []string{p, writeOnlyPath(p), writeOnlyVersionPath(p)} {
			fp, err := parseAttrPath(a)
			if err != nil {
				t.Fatal(err)
			}
			attr, diags := s.AttributeAtPath(ctx, fp)
			if diags.HasError() {
				t.Errorf("%s: %v", a, diags)
				continue
			}
			if a == writeOnlyPath(p) && (!attr.IsWriteOnly() || !attr.IsSensitive()) {
				t.Errorf("%s is not write-only and sensitive", a)
			}
		}
	}
}

// TestValidateWriteOnlyWarnsWithoutVersion checks that a write-only secret
// without its _wo_version draws a warning on it (a new value would never be
// sent), and that the secret is reported as set through the variant.
func TestValidateWriteOnlyWarnsWithoutVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := secureModel(t, true)
	var diags diag.Diagnostics
	sasl := m.SASL.Attributes()
	sasl["password_wo_version"] = types.Int64Null()
	var d diag.Diagnostics
	m.SASL, d = types.ObjectValue(connectionAttrType("sasl").AttrTypes, sasl)
	diags.Append(d...)
	s := connectionResourceSchema()
	cfg := tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}
	diags.Append(cfg.Set(ctx, m)...)
	if diags.HasError() {
		t.Fatal(diags)
	}
	viaWO := connectionSecrets.validateWriteOnly(ctx, tfsdk.Config{Schema: s, Raw: cfg.Raw}, &diags)
	if diags.HasError() || diags.WarningsCount() != 1 {
		t.Fatalf("diagnostics %v, want one warning", diags)
	}
	if w := diags.Warnings()[0]; w.Summary() != "Set password_wo_version with password_wo" {
		t.Errorf("warning %q", w.Summary())
	}
	if !viaWO["sasl.password"] || !viaWO["sasl.oauth.client_secret"] || viaWO["schema_registry.api_secret"] {
		t.Errorf("secrets set through their write-only variant: %v", viaWO)
	}
}

// TestConnectionReadDropsLostSecrets reads a connection whose agent no
// longer holds some secrets (its secrets_set lacks them): on refresh they
// leave the state, and so does the _wo_version of a write-only one, so the
// next plan sends them again; after an apply the planned values stay.
func TestConnectionReadDropsLostSecrets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	answer := &spec.Connection{Name: "c1", BootstrapServers: []string{"b:9093"}, SecurityProtocol: "SASL_SSL",
		SASL: &spec.SASL{Mechanism: spec.SASLScram512, Username: "ingest", OAuth: &spec.OAuth{
			TokenEndpointURL: "https://idp/token", ClientID: "tributary"}},
		TLS:            &spec.TLS{CAPEM: "ca", CertPEM: "cert"},
		SchemaRegistry: &spec.SchemaRegistry{URL: "https://registry", APIKey: "k", CAPEM: "sr-ca"},
		SecretsSet:     []string{"tls.key_pem", "sasl.password"},
	}
	for _, refresh := range []bool{true, false} {
		m := secureModel(t, false)
		var diags diag.Diagnostics
		m.setFromSpec(ctx, answer, refresh, &diags)
		if diags.HasError() {
			t.Fatal(diags)
		}
		state := newPriorValues(m.secretObjects(), nil, false)
		held := func(p string) bool { return !refresh || p == "tls.key_pem" || p == "sasl.password" }
		for p, v := range map[string]string{"tls.key_pem": "key", "tls.keystore_password": "p12-password",
			"schema_registry.api_secret": "sr-secret", "sasl.oauth.token": "static-token"} {
			want := types.StringValue(v)
			if !held(p) {
				want = types.StringNull()
			}
			if got := state.secret(p, ""); !got.Equal(want) {
				t.Errorf("refresh %v: %s = %s, want %s", refresh, p, got, want)
			}
		}
		for p, v := range map[string]int64{"sasl.password": 1, "sasl.oauth.client_secret": 3} {
			want := types.Int64Value(v)
			if !held(p) {
				want = types.Int64Null()
			}
			if got := state.woVersion(p); !got.Equal(want) {
				t.Errorf("refresh %v: %s = %s, want %s", refresh, writeOnlyVersionPath(p), got, want)
			}
		}
	}
}
