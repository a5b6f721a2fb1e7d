package spec

import (
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Connection is how an agent reaches one Kafka cluster. Pipelines refer to it
// by Name. Authentication, TLS, the schema registry and client properties are
// added here as optional blocks (each with its own Validate), so a connection
// without them keeps meaning PLAINTEXT with no registry.
type Connection struct {
	// Name identifies the connection on the agent; see [ValidName].
	Name string `json:"name"`
	// BootstrapServers lists "host:port" addresses of brokers to bootstrap
	// from, roughly equivalent to Kafka's bootstrap.servers.
	BootstrapServers []string `json:"bootstrap_servers"`
	// SchemaRegistry is the Confluent-compatible schema registry of the
	// connection's cluster, used by Avro and Protobuf transformers
	// that resolve their schema from a registry; nil means none.
	SchemaRegistry *SchemaRegistry `json:"schema_registry,omitempty"`
	// SecurityProtocol is Kafka's security.protocol: PLAINTEXT (the
	// default when empty), SSL, SASL_PLAINTEXT or SASL_SSL.
	SecurityProtocol string `json:"security_protocol,omitempty"`
	// SASL authenticates the agent to the brokers; it requires a SASL_*
	// protocol. Nil means no SASL.
	SASL *SASL `json:"sasl,omitempty"`
	// TLS configures the TLS of an SSL or SASL_SSL connection; nil means
	// the system's trusted CAs and no client certificate.
	TLS *TLS `json:"tls,omitempty"`
	// SecretsSet lists, in the API's answers only, the paths of the secrets
	// the agent holds for this connection (e.g. "sasl.password"), since
	// their values are never returned. The agent ignores it in a PUT.
	SecretsSet []string `json:"secrets_set,omitempty"`
}

// SASL mechanisms of [SASL.Mechanism].
const (
	SASLPlain       = "PLAIN"
	SASLScram256    = "SCRAM-SHA-256"
	SASLScram512    = "SCRAM-SHA-512"
	SASLOAuthBearer = "OAUTHBEARER"
	SASLAWSMSKIAM   = "AWS_MSK_IAM"
	// SASLAzureEntraID is OAUTHBEARER with a Microsoft Entra ID token of
	// the agent's Azure identity, for Azure Event Hubs' Kafka endpoint.
	SASLAzureEntraID = "AZURE_EVENT_HUBS_ENTRA_ID"
	// SASLGCPIAM is OAUTHBEARER with a token of the agent's Google
	// application default credentials, for Google Cloud Managed Service
	// for Apache Kafka.
	SASLGCPIAM = "GCP_MANAGED_KAFKA_IAM"
)

// SASL is how the agent authenticates to the brokers.
type SASL struct {
	// Mechanism is one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (with
	// Username and Password), OAUTHBEARER (with OAuth), or one of the
	// cloud identities of the agent: AWS_MSK_IAM (its default AWS
	// credential chain), AZURE_EVENT_HUBS_ENTRA_ID (its default Azure
	// credential chain) or GCP_MANAGED_KAFKA_IAM (its Google application
	// default credentials).
	Mechanism string `json:"mechanism"`
	// Username and Password are the PLAIN and SCRAM credentials. Password
	// is a secret: write-only in the API.
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// OAuth is where OAUTHBEARER tokens come from.
	OAuth *OAuth `json:"oauth,omitempty"`
	// AWSRegion is the region AWS_MSK_IAM signs for; empty means the
	// region of the default AWS configuration (AWS_REGION).
	AWSRegion string `json:"aws_region,omitempty"`
	// AzureScope is the OAuth scope AZURE_EVENT_HUBS_ENTRA_ID asks Entra
	// ID for; empty means the one of the Event Hubs namespace of the first
	// bootstrap server (see [Connection.AzureScope]).
	AzureScope string `json:"azure_scope,omitempty"`
}

// AzureScope returns the OAuth scope of the AZURE_EVENT_HUBS_ENTRA_ID
// tokens: sasl.azure_scope, or "https://<host>/.default" with the host of
// the first bootstrap server, as Event Hubs' own Kafka samples derive it
// (the namespace "ns.servicebus.windows.net" gives
// "https://ns.servicebus.windows.net/.default"). "" when c has no sasl
// block, or no bootstrap server with a host name.
func (c *Connection) AzureScope() string {
	if c.SASL == nil {
		return ""
	}
	if c.SASL.AzureScope != "" {
		return c.SASL.AzureScope
	}
	if len(c.BootstrapServers) == 0 {
		return ""
	}
	host, _, err := net.SplitHostPort(c.BootstrapServers[0])
	if err != nil || host == "" || net.ParseIP(host) != nil {
		return ""
	}
	return "https://" + host + "/.default"
}

// OAuth is the source of OAUTHBEARER tokens: the OAuth 2.0
// client-credentials grant against TokenEndpointURL (refreshed before the
// token expires), or a static Token, or a TokenFile on the agent read
// again before each authentication. Exactly one of the three is set.
type OAuth struct {
	// TokenEndpointURL, ClientID, ClientSecret and Scope configure the
	// client-credentials grant. ClientSecret is a secret.
	TokenEndpointURL string `json:"token_endpoint_url,omitempty"`
	ClientID         string `json:"client_id,omitempty"`
	ClientSecret     string `json:"client_secret,omitempty"`
	Scope            string `json:"scope,omitempty"`
	// Token is a static bearer token, a secret; for tests.
	Token string `json:"token,omitempty"`
	// TokenFile is the path, on the agent, of a file holding the token.
	TokenFile string `json:"token_file,omitempty"`
}

// TLS is the TLS configuration of a connection to the brokers.
type TLS struct {
	// CAPEM holds the PEM certificates of the CAs trusted to sign the
	// brokers' certificates; empty means the system's roots.
	CAPEM string `json:"ca_pem,omitempty"`
	// CertPEM and KeyPEM are the client certificate chain and its private
	// key, for brokers that require client certificates (mTLS). KeyPEM is
	// a secret.
	CertPEM string `json:"cert_pem,omitempty"`
	KeyPEM  string `json:"key_pem,omitempty"`
	// KeystoreP12Base64 is a PKCS#12 key store (base64), the alternative
	// to CertPEM and KeyPEM for users with Java key stores, opened with
	// KeystorePassword. Both are secrets.
	KeystoreP12Base64 string `json:"keystore_p12_base64,omitempty"`
	KeystorePassword  string `json:"keystore_password,omitempty"`
	// ServerName overrides the host name the brokers' certificates are
	// checked against.
	ServerName string `json:"server_name,omitempty"`
	// InsecureSkipVerify turns off the check of the brokers' certificates.
	InsecureSkipVerify bool `json:"insecure_skip_verify,omitempty"`
}

// SchemaRegistry is how the agent reaches a Confluent-compatible schema
// registry.
type SchemaRegistry struct {
	// URL is the registry's base URL, http or https, e.g.
	// "https://registry.example.com" or, for Apicurio's Confluent API,
	// "http://host:8080/apis/ccompat/v7".
	URL string `json:"url"`
	// APIKey and APISecret are sent as HTTP Basic credentials when APIKey
	// is set. APISecret is write-only: the agent's API never returns it.
	APIKey    string `json:"api_key,omitempty"`
	APISecret string `json:"api_secret,omitempty"`
	// CAPEM holds the PEM certificates of the CAs trusted to sign an https
	// registry's certificate; empty means the system's roots.
	CAPEM string `json:"ca_pem,omitempty"`
}

// SecretField is one secret of a connection: its path in the API's JSON
// (e.g. "sasl.password") and a pointer to its value in the connection.
type SecretField struct {
	Path  string
	Value *string
}

// SecretFields returns every secret field of c that its blocks can hold,
// set or not, so that one list drives redaction, encryption at rest and the
// scrubbing of error messages.
func (c *Connection) SecretFields() []SecretField {
	var out []SecretField
	if sr := c.SchemaRegistry; sr != nil {
		out = append(out, SecretField{"schema_registry.api_secret", &sr.APISecret})
	}
	if s := c.SASL; s != nil {
		out = append(out, SecretField{"sasl.password", &s.Password})
		if o := s.OAuth; o != nil {
			out = append(out, SecretField{"sasl.oauth.client_secret", &o.ClientSecret}, SecretField{"sasl.oauth.token", &o.Token})
		}
	}
	if t := c.TLS; t != nil {
		out = append(out, SecretField{"tls.key_pem", &t.KeyPEM},
			SecretField{"tls.keystore_p12_base64", &t.KeystoreP12Base64}, SecretField{"tls.keystore_password", &t.KeystorePassword})
	}
	return out
}

// Redacted returns a deep copy of c without its secrets, as the agent's
// API shows it: each secret is emptied and, when it was set, its path is
// listed in SecretsSet.
func (c *Connection) Redacted() *Connection {
	out := c.clone()
	out.SecretsSet = nil
	for _, f := range out.SecretFields() {
		if *f.Value != "" {
			out.SecretsSet = append(out.SecretsSet, f.Path)
			*f.Value = ""
		}
	}
	return out
}

// clone returns a copy of c that shares no block with it.
func (c *Connection) clone() *Connection {
	out := *c
	out.BootstrapServers = slices.Clone(c.BootstrapServers)
	out.SecretsSet = slices.Clone(c.SecretsSet)
	if c.SchemaRegistry != nil {
		sr := *c.SchemaRegistry
		out.SchemaRegistry = &sr
	}
	if c.SASL != nil {
		s := *c.SASL
		if s.OAuth != nil {
			o := *s.OAuth
			s.OAuth = &o
		}
		out.SASL = &s
	}
	if c.TLS != nil {
		t := *c.TLS
		out.TLS = &t
	}
	return &out
}

// Validate returns every problem with c.
func (c *Connection) Validate() Errors {
	col := newCollector()
	validateName(col, "name", c.Name)
	if len(c.BootstrapServers) == 0 {
		col.add("bootstrap_servers", "at least one bootstrap server is required, e.g. \"broker1:9092\"")
	}
	for i, s := range c.BootstrapServers {
		host, port, err := net.SplitHostPort(s)
		p := col.index("bootstrap_servers", i)
		if err != nil || host == "" {
			p.add("", "%q is not a host:port address, e.g. \"broker1:9092\"", s)
			continue
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			p.add("", "%q has port %q; a port is a number from 1 to 65535", s, port)
		}
	}
	if sr := c.SchemaRegistry; sr != nil {
		sr.validate(col.at("schema_registry"))
	}
	c.validateSecurity(col)
	return *col.errs
}

func (sr *SchemaRegistry) validate(col collector) {
	validateHTTPURI(col, "url", sr.URL, "the registry URL", "https://registry.example.com", "set api_key and api_secret instead")
	u, err := url.Parse(sr.URL)
	switch {
	case sr.APIKey == "" && sr.APISecret != "":
		col.addInvolving("api_key", []string{col.path("api_secret")}, "api_secret is set without api_key; set both or neither")
	case sr.APIKey != "" && sr.APISecret == "":
		col.addInvolving("api_secret", []string{col.path("api_key")}, "api_key is set without api_secret; set both or neither")
	}
	if strings.ContainsAny(sr.APIKey, ":\r\n") {
		col.add("api_key", "the API key must not contain ':' or line breaks (it is sent as HTTP Basic user name)")
	}
	if sr.CAPEM != "" {
		if _, err := CertPool(sr.CAPEM); err != nil {
			col.add("ca_pem", "%v", err)
		}
		if err == nil && u.Scheme == "http" {
			col.addInvolving("ca_pem", []string{col.path("url")}, "ca_pem is only used by an https registry; the url is http (use https, or remove ca_pem)")
		}
	}
}
