package spec

import (
	"net"
	"net/url"
	"strings"
)

// validateSecurity checks the security protocol and the sasl and tls
// blocks of c against each other. Messages never quote a secret.
func (c *Connection) validateSecurity(col collector) {
	proto := c.SecurityProtocol
	protoPath := col.path("security_protocol")
	known := true
	switch proto {
	case "", ProtocolPlaintext, ProtocolSSL, ProtocolSASLPlaintext, ProtocolSASLSSL:
	default:
		col.add("security_protocol", "%q is not a security protocol; use PLAINTEXT (the default), SSL, SASL_PLAINTEXT or SASL_SSL", proto)
		known = false // the rules below would only repeat the problem
	}
	usesSASL := proto == ProtocolSASLPlaintext || proto == ProtocolSASLSSL
	switch {
	case c.SASL == nil && usesSASL:
		col.addInvolving("sasl", []string{protoPath}, "security_protocol %s needs a sasl block with the mechanism and its credentials", proto)
	case c.SASL != nil && !usesSASL && known:
		col.addInvolving("sasl", []string{protoPath},
			"a sasl block needs security_protocol SASL_SSL or SASL_PLAINTEXT (it is %s)", orPlaintext(proto))
	}
	if c.SASL != nil {
		c.SASL.validate(col.at("sasl"), known && proto != ProtocolSASLSSL, protoPath)
		c.validateAzureScope(col)
	}
	if t := c.TLS; t != nil && *t != (TLS{}) {
		if !c.UsesTLS() && known {
			col.addInvolving("tls", []string{protoPath}, "tls settings need security_protocol SSL or SASL_SSL (it is %s)", orPlaintext(proto))
		}
		t.validate(col.at("tls"))
	}
}

// orPlaintext returns proto, or PLAINTEXT for the default "".
func orPlaintext(proto string) string {
	if proto == "" {
		return ProtocolPlaintext
	}
	return proto
}

// validate checks s; notSASLSSL tells that the protocol is a known one
// other than SASL_SSL, at protoPath.
func (s *SASL) validate(col collector, notSASLSSL bool, protoPath string) {
	mechPath := col.path("mechanism")
	switch s.Mechanism {
	case SASLPlain, SASLScram256, SASLScram512:
		switch {
		case s.Username == "" && s.Password == "":
			col.addInvolving("username", []string{col.path("password")}, "SASL %s needs username and password", s.Mechanism)
		case s.Username == "":
			col.addInvolving("username", []string{col.path("password")}, "password is set without username; set both")
		case s.Password == "":
			col.addInvolving("password", []string{col.path("username")}, "username is set without password; set both")
		}
		if s.OAuth != nil {
			col.addInvolving("oauth", []string{mechPath}, "oauth is only for mechanism OAUTHBEARER (it is %s)", s.Mechanism)
		}
	case SASLOAuthBearer:
		s.noPassword(col, mechPath)
		if s.OAuth == nil {
			col.addInvolving("oauth", []string{mechPath},
				"mechanism OAUTHBEARER needs an oauth block: token_endpoint_url, client_id and client_secret, or token, or token_file")
		} else {
			s.OAuth.validate(col.at("oauth"))
		}
	case SASLAWSMSKIAM, SASLAzureEntraID, SASLGCPIAM:
		s.noPassword(col, mechPath)
		if s.OAuth != nil {
			col.addInvolving("oauth", []string{mechPath}, "oauth is only for mechanism OAUTHBEARER; %s takes %s", s.Mechanism,
				cloudIdentities[s.Mechanism])
		}
		if notSASLSSL {
			col.addInvolving("mechanism", []string{protoPath}, "%s needs security_protocol SASL_SSL", s.Mechanism)
		}
	case "":
		col.add("mechanism", "the SASL mechanism is required: %s", mechanismList)
	default:
		col.add("mechanism", "%q is not a SASL mechanism; use %s", s.Mechanism, mechanismList)
	}
	if s.AWSRegion != "" && s.Mechanism != SASLAWSMSKIAM {
		col.addInvolving("aws_region", []string{mechPath}, "aws_region is only for mechanism AWS_MSK_IAM (it is %s)", s.Mechanism)
	}
	if s.AzureScope != "" && s.Mechanism != SASLAzureEntraID {
		col.addInvolving("azure_scope", []string{mechPath}, "azure_scope is only for mechanism %s (it is %s)", SASLAzureEntraID, s.Mechanism)
	}
}

// mechanismList names the SASL mechanisms, for messages.
const mechanismList = "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, AWS_MSK_IAM, AZURE_EVENT_HUBS_ENTRA_ID or GCP_MANAGED_KAFKA_IAM"

// cloudIdentities says, for each mechanism that authenticates with the
// agent's own cloud identity, where the agent finds that identity.
var cloudIdentities = map[string]string{
	SASLAWSMSKIAM:    "the agent's AWS credentials (its default AWS credential chain)",
	SASLAzureEntraID: "the agent's Azure credentials (the default Azure credential chain: environment, workload identity, managed identity, Azure CLI)",
	SASLGCPIAM:       "the agent's Google application default credentials",
}

// validateAzureScope checks the scope of AZURE_EVENT_HUBS_ENTRA_ID: an
// https URL when set, else a bootstrap server with a host name to derive
// it from.
func (c *Connection) validateAzureScope(col collector) {
	s := c.SASL
	if s == nil || s.Mechanism != SASLAzureEntraID {
		return
	}
	if s.AzureScope != "" {
		u, err := url.Parse(s.AzureScope)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
			col.add("sasl.azure_scope", "the value is not an https URL, e.g. \"https://my-namespace.servicebus.windows.net/.default\"")
		}
		return
	}
	if len(c.BootstrapServers) == 0 {
		return // reported on bootstrap_servers
	}
	if host, _, err := net.SplitHostPort(c.BootstrapServers[0]); err == nil && net.ParseIP(host) != nil {
		col.addInvolving("sasl.azure_scope", []string{col.index("bootstrap_servers", 0).base},
			"%s needs azure_scope when the first bootstrap server is not a host name (the scope is derived from it, "+
				"e.g. \"https://my-namespace.servicebus.windows.net/.default\" from my-namespace.servicebus.windows.net:9093)", SASLAzureEntraID)
	}
}

// noPassword reports username and password on a mechanism that takes
// neither.
func (s *SASL) noPassword(col collector, mechPath string) {
	if s.Username != "" {
		col.addInvolving("username", []string{mechPath}, "username is only for PLAIN and SCRAM mechanisms (it is %s)", s.Mechanism)
	}
	if s.Password != "" {
		col.addInvolving("password", []string{mechPath}, "password is only for PLAIN and SCRAM mechanisms (it is %s)", s.Mechanism)
	}
}

func (o *OAuth) validate(col collector) {
	grant := o.TokenEndpointURL != "" || o.ClientID != "" || o.ClientSecret != "" || o.Scope != ""
	var sources []string
	if grant {
		sources = append(sources, "token_endpoint_url")
	}
	if o.Token != "" {
		sources = append(sources, "token")
	}
	if o.TokenFile != "" {
		sources = append(sources, "token_file")
	}
	switch len(sources) {
	case 0:
		col.addInvolving("", []string{col.path("token_endpoint_url"), col.path("client_id"), col.path("client_secret"), col.path("token"),
			col.path("token_file")}, "set token_endpoint_url, client_id and client_secret (the client-credentials grant), or token, or token_file")
		return
	case 1:
	default:
		involves := make([]string, len(sources))
		for i, s := range sources {
			involves[i] = col.path(s)
		}
		col.addInvolving("", involves, "set only one token source: %s are all set", strings.Join(sources, ", "))
		return
	}
	if !grant {
		return
	}
	for _, f := range []struct{ name, v string }{
		{"token_endpoint_url", o.TokenEndpointURL}, {"client_id", o.ClientID}, {"client_secret", o.ClientSecret},
	} {
		if f.v == "" {
			col.add(f.name, "the client-credentials grant needs token_endpoint_url, client_id and client_secret; %s is missing", f.name)
		}
	}
	if o.TokenEndpointURL != "" {
		u, err := url.Parse(o.TokenEndpointURL)
		switch {
		case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
			col.add("token_endpoint_url", "the value is not an http or https URL, e.g. \"https://idp.example.com/oauth2/token\"")
		case u.User != nil:
			col.add("token_endpoint_url", "the URL carries credentials; set client_id and client_secret instead")
		}
	}
}

func (t *TLS) validate(col collector) {
	if t.CAPEM != "" {
		if _, err := CertPool(t.CAPEM); err != nil {
			col.add("ca_pem", "%v", err)
		}
	}
	pemPair := t.CertPEM != "" || t.KeyPEM != ""
	switch {
	case t.KeystoreP12Base64 != "" && pemPair:
		col.addInvolving("keystore_p12_base64", []string{col.path("cert_pem"), col.path("key_pem")},
			"set either keystore_p12_base64 or cert_pem and key_pem, not both")
		return
	case t.KeystoreP12Base64 == "" && t.KeystorePassword != "":
		col.addInvolving("keystore_password", []string{col.path("keystore_p12_base64")}, "keystore_password is set without keystore_p12_base64")
		return
	case t.CertPEM != "" && t.KeyPEM == "":
		col.addInvolving("key_pem", []string{col.path("cert_pem")}, "cert_pem is set without key_pem; set both")
		return
	case t.CertPEM == "" && t.KeyPEM != "":
		col.addInvolving("cert_pem", []string{col.path("key_pem")}, "key_pem is set without cert_pem; set both")
		return
	}
	if _, fe := t.clientCertificate(); fe != nil {
		col.add(fe.attr, "%v", fe.err)
	}
}
