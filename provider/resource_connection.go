package provider

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

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
// attributes for authentication and TLS are added here, as schema_registry
// was (and in a schema version 1 with an upgrader, should an attribute
// change shape).
type connectionResourceModel struct {
	ID               types.String `tfsdk:"id"`
	Name             types.String `tfsdk:"name"`
	BootstrapServers types.List   `tfsdk:"bootstrap_servers"`
	SchemaRegistry   types.Object `tfsdk:"schema_registry"`
}

// schemaRegistryModel is schema_registry of a connection. APISecret is
// write-only on the agent: the state keeps the value Terraform last sent.
type schemaRegistryModel struct {
	URL       types.String `tfsdk:"url"`
	APIKey    types.String `tfsdk:"api_key"`
	APISecret types.String `tfsdk:"api_secret"`
}

// schemaRegistryType is the object type of a connection's schema_registry.
var schemaRegistryType = sync.OnceValue(func() types.ObjectType {
	t, _ := connectionResourceSchema().Attributes["schema_registry"].GetType().(types.ObjectType)
	return t
})

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
			"Confluent-compatible schema registry. Pipelines refer to it by `name`. Without authentication or TLS " +
			"settings the agent connects with PLAINTEXT. The registry's `api_secret` is write-only on the agent: " +
			"Terraform keeps the value it last sent, so after an import set it in the configuration and apply.",
		Attributes: map[string]schema.Attribute{
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
				Attributes: map[string]schema.Attribute{
					"url": schema.StringAttribute{
						MarkdownDescription: "Base URL of the registry, `http` or `https`, without credentials, query or " +
							"fragment, e.g. `\"https://registry.example.com\"` or, for Apicurio, " +
							"`\"http://apicurio:8080/apis/ccompat/v7\"`.",
						Required: true,
					},
					"api_key": schema.StringAttribute{
						MarkdownDescription: "API key (user name) sent with `api_secret` as HTTP Basic credentials. " +
							"Set both or neither.",
						Optional: true,
					},
					"api_secret": schema.StringAttribute{
						MarkdownDescription: "API secret (password) sent with `api_key`. Sensitive, and write-only on " +
							"the agent: its API never returns it, so the state keeps the value Terraform last sent, and " +
							"a secret changed outside Terraform does not show as drift. After an import it is unknown " +
							"to Terraform: set it in the configuration (from a sensitive variable) and apply.",
						Optional:  true,
						Sensitive: true,
					},
				},
			},
		},
	}
}

// toSpec converts m, recording unknown paths in c.
func (m *connectionResourceModel) toSpec(c *specConverter) *spec.Connection {
	conn := &spec.Connection{
		Name:             c.str("name", m.Name),
		BootstrapServers: c.strList("bootstrap_servers", m.BootstrapServers),
	}
	var sr schemaRegistryModel
	switch c.object("schema_registry", m.SchemaRegistry, &sr) {
	case objectUnknown:
		conn.SchemaRegistry = &spec.SchemaRegistry{}
	case objectKnown:
		conn.SchemaRegistry = &spec.SchemaRegistry{
			URL:       c.str("schema_registry.url", sr.URL),
			APIKey:    c.str("schema_registry.api_key", sr.APIKey),
			APISecret: c.str("schema_registry.api_secret", sr.APISecret),
		}
	}
	return conn
}

// setFromSpec sets m from a connection as the agent stores it. The agent
// never returns api_secret (spec.Connection.Redacted), so m's own
// schema_registry.api_secret, the planned or prior value, is kept; on
// import there is none, and it stays null until an apply sets it.
func (m *connectionResourceModel) setFromSpec(ctx context.Context, conn *spec.Connection, diags *diag.Diagnostics) {
	m.ID = types.StringValue(conn.Name)
	m.Name = types.StringValue(conn.Name)
	servers, d := types.ListValueFrom(ctx, types.StringType, conn.BootstrapServers)
	diags.Append(d...)
	m.BootstrapServers = servers

	secret := types.StringNull()
	if !m.SchemaRegistry.IsNull() && !m.SchemaRegistry.IsUnknown() {
		var prior schemaRegistryModel
		diags.Append(m.SchemaRegistry.As(ctx, &prior, basetypes.ObjectAsOptions{})...)
		secret = prior.APISecret
	}
	sr := conn.SchemaRegistry
	if sr == nil {
		m.SchemaRegistry = types.ObjectNull(schemaRegistryType().AttrTypes)
		return
	}
	if sr.APISecret != "" {
		secret = types.StringValue(sr.APISecret) // an agent that returns it
	}
	m.SchemaRegistry = objectValue(ctx, diags, schemaRegistryType(), schemaRegistryModel{
		URL:       types.StringValue(sr.URL),
		APIKey:    stringOrNull(sr.APIKey),
		APISecret: secret,
	})
}

// ValidateConfig implements resource.ResourceWithValidateConfig: it runs
// spec.Connection.Validate on the known values.
func (r *connectionResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m connectionResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	c := newSpecConverter(ctx, false)
	conn := m.toSpec(c)
	resp.Diagnostics.Append(c.diags...)
	addFieldErrors(&resp.Diagnostics, "connection", conn.Validate(), c.skip)
}

// Create implements resource.Resource.
func (r *connectionResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.put(creating(ctx), req.Plan.Get, &resp.State, &resp.Diagnostics)
}

// Update implements resource.Resource.
func (r *connectionResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.put(ctx, req.Plan.Get, &resp.State, &resp.Diagnostics)
}

// stateSetter is the part of tfsdk.State that put needs.
type stateSetter interface {
	Set(ctx context.Context, val any) diag.Diagnostics
}

// put sends the planned connection to the agent and stores its answer.
func (r *connectionResource) put(ctx context.Context, getPlan func(context.Context, any) diag.Diagnostics, state stateSetter, diags *diag.Diagnostics) {
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
	if diags.HasError() {
		return
	}
	stored, err := api.PutConnection(ctx, conn)
	if err != nil {
		addAgentError(diags, "connection", "Cannot store connection "+conn.Name, err)
		return
	}
	m.setFromSpec(ctx, stored, diags)
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
	m.setFromSpec(ctx, conn, &resp.Diagnostics)
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
