// Package provider is the Terraform provider for Tributary. It manages the
// connections and pipelines of one tributary-agent, or of the agents of a
// cluster, through agent/client, and validates configurations at plan time
// with the rules of agent/spec.
package provider

import (
	"context"
	"net/http"
	"os"
	"strings"

	"github.com/hashicorp/go-cleanhttp"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
)

// Provider configuration: environment variables and the default endpoint.
const (
	// EnvEndpoint is read when neither the endpoint nor the endpoints
	// attribute is set.
	EnvEndpoint = "TRIBUTARY_ENDPOINT"
	// EnvEndpoints is read, as a comma-separated list of agent URLs, when
	// neither the endpoint nor the endpoints attribute is set; it may not
	// be set with EnvEndpoint.
	EnvEndpoints = "TRIBUTARY_ENDPOINTS"
	// EnvToken is read when the token attribute is not set.
	EnvToken = "TRIBUTARY_TOKEN"
	// EnvClientCertificate is read when the client_certificate attribute
	// is not set.
	EnvClientCertificate = "TRIBUTARY_CLIENT_CERTIFICATE"
	// EnvClientKey is read when the client_key attribute is not set.
	EnvClientKey = "TRIBUTARY_CLIENT_KEY"
	// DefaultEndpoint is the agent's default listen address.
	DefaultEndpoint = "http://127.0.0.1:8470"
)

var (
	_ provider.Provider                   = (*tributaryProvider)(nil)
	_ provider.ProviderWithValidateConfig = (*tributaryProvider)(nil)
)

// tributaryProvider is the provider implementation.
type tributaryProvider struct {
	version string
}

// tributaryProviderModel is the provider block.
type tributaryProviderModel struct {
	Endpoint          types.String `tfsdk:"endpoint"`
	Endpoints         types.List   `tfsdk:"endpoints"`
	Token             types.String `tfsdk:"token"`
	CACertificate     types.String `tfsdk:"ca_certificate"`
	ClientCertificate types.String `tfsdk:"client_certificate"`
	ClientKey         types.String `tfsdk:"client_key"`
}

// New returns a constructor of the provider; version is the provider's
// release version ("dev" for local builds).
func New(version string) func() provider.Provider {
	return func() provider.Provider {
		return &tributaryProvider{version: version}
	}
}

// Metadata implements provider.Provider.
func (p *tributaryProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "tributary"
	resp.Version = p.version
}

// Schema implements provider.Provider.
func (p *tributaryProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The Tributary provider manages the connections, pipelines, fanout schemas and Kafka sinks of a `tributary-agent`, " +
			"which ingests Apache Kafka topics into Delta-Lake-compatible tables of Parquet files, exactly once.",
		Attributes: map[string]schema.Attribute{
			"endpoint": schema.StringAttribute{
				MarkdownDescription: "URL of the agent API, `http://` or `https://`: one agent, or a load balancer in front of " +
					"the agents of a cluster. Conflicts with `endpoints`. When neither is set, defaults to the environment " +
					"variable `" + EnvEndpoint + "` (or `" + EnvEndpoints + "`), then to `" + DefaultEndpoint + "`.",
				Optional: true,
			},
			"endpoints": schema.ListAttribute{
				MarkdownDescription: "URLs of the agents of one cluster (`tributary-agent serve --cluster`), each `http://` " +
					"or `https://`, at least one, each once; any of them answers every request. A request goes to the agent " +
					"that answered last (the first at first) and on to the next in order while one cannot be reached or " +
					"answers 502, 503 or 504; a create, or the start of a triggered run, goes on only when it never reached " +
					"the agent, since that agent may have acted on it. `token` and the TLS settings apply to every agent. " +
					"Conflicts with `endpoint`. When neither is set, defaults to the environment variable `" + EnvEndpoints +
					"` (comma-separated), which may not be set with `" + EnvEndpoint + "`.",
				ElementType: types.StringType,
				Optional:    true,
			},
			"token": schema.StringAttribute{
				MarkdownDescription: "Bearer token of the agent API (the content of the agent's token file). " +
					"Defaults to the environment variable `" + EnvToken + "`; without one, no token is sent.",
				Optional:  true,
				Sensitive: true,
			},
			"ca_certificate": schema.StringAttribute{
				MarkdownDescription: "PEM-encoded CA certificate(s) that sign the certificate of an `https://` agent, " +
					"in addition to the system's trusted CAs. Use `file(\"ca.pem\")` to read it from a file.",
				Optional: true,
			},
			"client_certificate": schema.StringAttribute{
				MarkdownDescription: "PEM-encoded client certificate (chain) that the provider presents to an `https://` " +
					"agent started with `--tls-client-ca`, with `client_key`. Use `file(\"client.pem\")` to read it from " +
					"a file. Defaults to the environment variable `" + EnvClientCertificate + "` (the PEM text).",
				Optional: true,
			},
			"client_key": schema.StringAttribute{
				MarkdownDescription: "PEM-encoded private key of `client_certificate`. Sensitive. Defaults to the " +
					"environment variable `" + EnvClientKey + "` (the PEM text).",
				Optional:  true,
				Sensitive: true,
			},
		},
	}
}

// providerData is handed to resources and data sources by Configure.
// client is nil when the configuration is not known yet (plan with unknown
// endpoint, endpoints or token); those that need the agent then say so.
type providerData struct {
	client *client.Client
}

// Configure implements provider.Provider. Unknown values are not an error:
// they happen when the endpoint comes from another resource, and only the
// operations that call the agent need a client. The endpoints are those of
// the endpoint or endpoints attribute, else of the environment (see
// resolveEndpoints), checked again here since the environment's are not
// checked before.
func (p *tributaryProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg tributaryProviderModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	data := &providerData{}
	resp.ResourceData = data
	resp.DataSourceData = data
	if _, known := listSetting(cfg.Endpoints); !known || cfg.Endpoint.IsUnknown() || cfg.Token.IsUnknown() ||
		cfg.CACertificate.IsUnknown() || cfg.ClientCertificate.IsUnknown() || cfg.ClientKey.IsUnknown() {
		return
	}
	endpoints := resolveEndpoints(&cfg, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !endpoints.check(&resp.Diagnostics) {
		return
	}
	// A token read with file() or $(cat ...) ends in a newline, which is
	// not valid in a header; the agent trims its token file the same way.
	token := strings.TrimSpace(valueOrEnv(cfg.Token, EnvToken, ""))

	var opts []client.Option
	tlsConfig := agentTLSConfig(&cfg, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if tlsConfig != nil {
		h := cleanhttp.DefaultPooledClient()
		h.Transport.(*http.Transport).TLSClientConfig = tlsConfig
		opts = append(opts, client.WithHTTPClient(h))
	}
	c, err := client.NewCluster(endpoints.list, token, opts...)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root(endpoints.attr), "Invalid agent endpoint", err.Error())
		return
	}
	data.client = c
}

// ValidateConfig implements provider.ProviderWithValidateConfig: it checks
// the endpoint attributes, as far as they are known, before the provider is
// configured (terraform validate and plan).
func (p *tributaryProvider) ValidateConfig(ctx context.Context, req provider.ValidateConfigRequest, resp *provider.ValidateConfigResponse) {
	var cfg tributaryProviderModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	validateEndpoints(&cfg, &resp.Diagnostics)
}

// valueOrEnv returns v if set, else the environment variable env if set,
// else def.
func valueOrEnv(v types.String, env, def string) string {
	if !v.IsNull() && v.ValueString() != "" {
		return v.ValueString()
	}
	if e := os.Getenv(env); e != "" {
		return e
	}
	return def
}

// Resources implements provider.Provider.
func (p *tributaryProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		NewConnectionResource,
		NewCatalogResource,
		NewPipelineResource,
		NewFanoutSchemaResource,
		NewKafkaSinkResource,
	}
}

// DataSources implements provider.Provider.
func (p *tributaryProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		NewPipelineStatusDataSource,
		NewTableDataSource,
	}
}
