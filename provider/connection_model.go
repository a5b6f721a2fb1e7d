package provider

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// connectionResourceModel is the state of tributary_connection. Optional
// attributes are added here, as schema_registry and the security settings
// were (and in a schema version 1 with an upgrader, should an attribute
// change shape).
type connectionResourceModel struct {
	ID               types.String `tfsdk:"id"`
	Name             types.String `tfsdk:"name"`
	BootstrapServers types.List   `tfsdk:"bootstrap_servers"`
	SchemaRegistry   types.Object `tfsdk:"schema_registry"`
	SecurityProtocol types.String `tfsdk:"security_protocol"`
	SASL             types.Object `tfsdk:"sasl"`
	TLS              types.Object `tfsdk:"tls"`
}

// schemaRegistryModel is schema_registry of a connection. APISecret is
// write-only on the agent: the state keeps the value Terraform last sent.
type schemaRegistryModel struct {
	URL                types.String `tfsdk:"url"`
	APIKey             types.String `tfsdk:"api_key"`
	APISecret          types.String `tfsdk:"api_secret"`
	APISecretWO        types.String `tfsdk:"api_secret_wo"`
	APISecretWOVersion types.Int64  `tfsdk:"api_secret_wo_version"`
	CAPEM              types.String `tfsdk:"ca_pem"`
}

// connectionObjectType is the object type of the whole connection model.
var connectionObjectType = sync.OnceValue(func() types.ObjectType {
	return connectionResourceSchema().Type().(types.ObjectType)
})

// connectionAttrType is the object type of the connection's object
// attribute name ("sasl").
func connectionAttrType(name string) types.ObjectType {
	return attrObjectType(connectionObjectType(), name)
}

// toSpec converts m, recording unknown paths in c. A secret set through
// its write-only variant is taken from m, which holds it in the
// configuration but not in the plan (see writeOnlyFromConfig).
func (m *connectionResourceModel) toSpec(c *specConverter) *spec.Connection {
	return &spec.Connection{
		Name:             c.str("name", m.Name),
		BootstrapServers: c.strList("bootstrap_servers", m.BootstrapServers),
		SecurityProtocol: c.str("security_protocol", m.SecurityProtocol),
		SASL:             saslToSpec(c, m.SASL),
		TLS:              tlsToSpec(c, m.TLS),
		SchemaRegistry: convertObject(c, "schema_registry", m.SchemaRegistry, func(sr *schemaRegistryModel) *spec.SchemaRegistry {
			return &spec.SchemaRegistry{
				URL:       c.str("schema_registry.url", sr.URL),
				APIKey:    c.str("schema_registry.api_key", sr.APIKey),
				APISecret: c.secret("schema_registry.api_secret", sr.APISecret, sr.APISecretWO),
				CAPEM:     c.str("schema_registry.ca_pem", sr.CAPEM),
			}
		}),
	}
}

// setFromSpec sets m from a connection as the agent stores it. The agent
// never returns secrets (spec.Connection.Redacted), so m's own secrets, the
// planned or prior values, are kept, and so are the _wo_version attributes,
// which only Terraform knows; on import there are none, and the secrets
// stay null until an apply sets them. With refresh (a read, where m is the
// prior state), a secret the agent no longer holds (it is not in
// secrets_set) is dropped with its _wo_version, so that the plan sends it
// again; after a create or update m is the plan, which the state must
// match.
func (m *connectionResourceModel) setFromSpec(ctx context.Context, conn *spec.Connection, refresh bool, diags *diag.Diagnostics) {
	prior := newPriorValues(m.secretObjects(), conn.SecretsSet, refresh)
	m.ID = types.StringValue(conn.Name)
	m.Name = types.StringValue(conn.Name)
	servers, d := types.ListValueFrom(ctx, types.StringType, conn.BootstrapServers)
	diags.Append(d...)
	m.BootstrapServers = servers
	m.SecurityProtocol = stringOrNull(conn.SecurityProtocol)

	m.SchemaRegistry = types.ObjectNull(connectionAttrType("schema_registry").AttrTypes)
	if sr := conn.SchemaRegistry; sr != nil {
		m.SchemaRegistry = objectValue(ctx, diags, connectionAttrType("schema_registry"), schemaRegistryModel{
			URL:                types.StringValue(sr.URL),
			APIKey:             stringOrNull(sr.APIKey),
			APISecret:          prior.secret("schema_registry.api_secret", sr.APISecret),
			APISecretWO:        types.StringNull(),
			APISecretWOVersion: prior.woVersion("schema_registry.api_secret"),
			CAPEM:              stringOrNull(sr.CAPEM),
		})
	}

	saslType := connectionAttrType("sasl")
	m.SASL = types.ObjectNull(saslType.AttrTypes)
	if conn.SASL != nil {
		sasl, oauth := saslModelFromSpec(conn.SASL, prior)
		oauthType := attrObjectType(saslType, "oauth")
		sasl.OAuth = types.ObjectNull(oauthType.AttrTypes)
		if oauth != nil {
			sasl.OAuth = objectValue(ctx, diags, oauthType, oauth)
		}
		m.SASL = objectValue(ctx, diags, saslType, sasl)
	}

	m.TLS = types.ObjectNull(connectionAttrType("tls").AttrTypes)
	if conn.TLS != nil {
		m.TLS = objectValue(ctx, diags, connectionAttrType("tls"), tlsModelFromSpec(conn.TLS, prior))
	}
}

// secretObjects returns the objects of m that hold secrets, by attribute
// name (see newPriorValues).
func (m *connectionResourceModel) secretObjects() map[string]attr.Value {
	return map[string]attr.Value{"schema_registry": m.SchemaRegistry, "sasl": m.SASL, "tls": m.TLS}
}

// objectName is the connection's name.
func (m *connectionResourceModel) objectName() string { return m.Name.ValueString() }
