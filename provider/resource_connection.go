package provider

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

var (
	_ resource.ResourceWithConfigure      = (*connectionResource)(nil)
	_ resource.ResourceWithImportState    = (*connectionResource)(nil)
	_ resource.ResourceWithValidateConfig = (*connectionResource)(nil)
)

// connectionResource is tributary_connection.
type connectionResource struct {
	agentResource
}

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

// NewConnectionResource returns the tributary_connection resource.
func NewConnectionResource() resource.Resource { return &connectionResource{} }

// Metadata implements resource.Resource.
func (r *connectionResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_connection"
}

// Schema implements resource.Resource.
func (r *connectionResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = connectionResourceSchema()
}

func connectionResourceSchema() schema.Schema {
	return schema.Schema{
		Version: 0,
		MarkdownDescription: "A connection is how the agent reaches one Kafka cluster and, optionally, its " +
			"Confluent-compatible schema registry. Pipelines refer to it by `name`. Without `security_protocol`, " +
			"`sasl` or `tls` the agent connects with PLAINTEXT. Secrets are write-only on the agent: its API never " +
			"returns them, so Terraform keeps the values it last sent (or, with the `_wo` attributes, none), and " +
			"after an import they must be set in the configuration and applied.",
		Attributes: withAttributes(securityAttributes(), map[string]schema.Attribute{
			"id":   idAttribute(),
			"name": nameAttribute("connection", ""),
			"bootstrap_servers": schema.ListAttribute{
				MarkdownDescription: "`host:port` addresses of the brokers to bootstrap from, like Kafka's " +
					"`bootstrap.servers`, e.g. `[\"broker1:9092\", \"broker2:9092\"]`. At least one.",
				Required:    true,
				ElementType: types.StringType,
			},
			"schema_registry": schema.SingleNestedAttribute{
				MarkdownDescription: "The cluster's Confluent-compatible schema registry (Confluent Schema Registry, " +
					"Redpanda, Karapace, Apicurio's Confluent API), which Avro and Protobuf transformers with a " +
					"`schema_registry` use. Not set: no registry.",
				Optional: true,
				Attributes: withAttributes(map[string]schema.Attribute{
					"url": schema.StringAttribute{
						MarkdownDescription: "Base URL of the registry, `http` or `https`, without credentials, query or " +
							"fragment, e.g. `\"https://registry.example.com\"` or, for Apicurio, " +
							"`\"http://apicurio:8080/apis/ccompat/v7\"`.",
						Required: true,
					},
					"api_key": schema.StringAttribute{
						MarkdownDescription: "API key (user name) sent with the API secret as HTTP Basic credentials. " +
							"Set both or neither.",
						Optional: true,
					},
					"ca_pem": schema.StringAttribute{
						MarkdownDescription: "PEM certificate(s) of the CA(s) that sign an `https` registry's " +
							"certificate, instead of the system's trusted CAs.",
						Optional: true,
					},
				}, secretAttributes("api_secret", "the API secret (password) sent with `api_key`")),
			},
		}),
	}
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
	prior := newPriorValues(m, conn, refresh)
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

// ValidateConfig implements resource.ResourceWithValidateConfig: it checks
// the write-only secrets and runs spec.Connection.Validate on the known
// values; a problem with a secret set through its write-only variant is
// reported on that variant.
func (r *connectionResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m connectionResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	viaWO := validateWriteOnly(ctx, req.Config, &resp.Diagnostics)
	c := newSpecConverter(ctx, false)
	conn := m.toSpec(c)
	resp.Diagnostics.Append(c.diags...)
	for _, e := range conn.Validate() {
		// Whether a problem depends on an unknown value is known by the
		// spec's paths, before the move onto a write-only attribute.
		if !c.skip(e) {
			addFieldError(&resp.Diagnostics, "connection", onWriteOnly(e, viaWO))
		}
	}
}

// Create implements resource.Resource.
func (r *connectionResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.put(creating(ctx), req.Plan.Get, req.Config, &resp.State, &resp.Diagnostics)
}

// Update implements resource.Resource.
func (r *connectionResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.put(ctx, req.Plan.Get, req.Config, &resp.State, &resp.Diagnostics)
}

// stateSetter is the part of tfsdk.State that put needs.
type stateSetter interface {
	Set(ctx context.Context, val any) diag.Diagnostics
}

// put sends the planned connection, with the write-only secrets of config,
// to the agent and stores its answer.
func (r *connectionResource) put(ctx context.Context, getPlan func(context.Context, any) diag.Diagnostics, config attributeGetter, state stateSetter, diags *diag.Diagnostics) {
	api := r.client(diags)
	if api == nil {
		return
	}
	var m connectionResourceModel
	diags.Append(getPlan(ctx, &m)...)
	if diags.HasError() {
		return
	}
	c := newSpecConverter(ctx, false)
	conn := m.toSpec(c)
	diags.Append(c.diags...)
	writeOnlyFromConfig(ctx, config, conn, diags)
	if diags.HasError() {
		return
	}
	stored, err := api.PutConnection(ctx, conn)
	if err != nil {
		addAgentError(diags, "connection", "Cannot store connection "+conn.Name, err)
		return
	}
	m.setFromSpec(ctx, stored, false, diags)
	diags.Append(state.Set(ctx, &m)...)
}

// Read implements resource.Resource; a connection deleted on the agent is
// removed from the state.
func (r *connectionResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	api := r.client(&resp.Diagnostics)
	if api == nil {
		return
	}
	var m connectionResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	conn, ok := readNamed(ctx, resp, "connection", m.Name.ValueString(), api.GetConnection)
	if !ok {
		return
	}
	m.setFromSpec(ctx, conn, true, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Delete implements resource.Resource.
func (r *connectionResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	r.deleteNamed(ctx, req, resp, "connection", (*client.Client).DeleteConnection)
}

// ImportState implements resource.ResourceWithImportState: the import ID is
// the connection's name.
func (r *connectionResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("name"), req, resp)
}
