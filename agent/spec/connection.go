package spec

import (
	"net"
	"net/url"
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
	// connection's cluster (L-21), used by Avro and Protobuf transformers
	// that resolve their schema from a registry; nil means none.
	SchemaRegistry *SchemaRegistry `json:"schema_registry,omitempty"`
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
}

// Redacted returns c without its secrets, as the agent's API shows it.
func (c *Connection) Redacted() *Connection {
	out := *c
	if c.SchemaRegistry != nil {
		sr := *c.SchemaRegistry
		sr.APISecret = ""
		out.SchemaRegistry = &sr
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
	return *col.errs
}

func (sr *SchemaRegistry) validate(col collector) {
	u, err := url.Parse(sr.URL)
	switch {
	case sr.URL == "":
		col.add("url", "the registry URL is required, e.g. \"https://registry.example.com\"")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		if strings.Contains(sr.URL, "@") {
			// It may hold credentials: say so without repeating it.
			col.add("url", "the value is not an http or https URL and seems to hold credentials; give the base URL, e.g. \"https://registry.example.com\", and set api_key and api_secret")
		} else {
			col.add("url", "%q is not an http or https URL, e.g. \"https://registry.example.com\"", sr.URL)
		}
	case u.User != nil:
		col.add("url", "the URL carries credentials; set api_key and api_secret instead, so the secret stays sensitive")
	case u.RawQuery != "" || u.Fragment != "":
		col.add("url", "the URL must not have a query or fragment; give the registry's base URL")
	}
	switch {
	case sr.APIKey == "" && sr.APISecret != "":
		col.addInvolving("api_key", []string{col.path("api_secret")}, "api_secret is set without api_key; set both or neither")
	case sr.APIKey != "" && sr.APISecret == "":
		col.addInvolving("api_secret", []string{col.path("api_key")}, "api_key is set without api_secret; set both or neither")
	}
	if strings.ContainsAny(sr.APIKey, ":\r\n") {
		col.add("api_key", "the API key must not contain ':' or line breaks (it is sent as HTTP Basic user name)")
	}
}
