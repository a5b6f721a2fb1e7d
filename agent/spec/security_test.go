package spec

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"strings"
	"testing"

	"software.sslmate.com/src/go-pkcs12"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/testcerts"
)

// Secret values of the test connections: no message may quote them.
const (
	testPassword     = "pw-Secret-1"
	testClientSecret = "cs-Secret-2"
	testToken        = "tok-Secret-3"
	testP12Password  = "p12-Secret-4"
)

// securityFixture holds certificates for the security tests.
type securityFixture struct {
	caPEM, certPEM, keyPEM, otherKeyPEM string
	p12, jks                            string
}

func newSecurityFixture(t *testing.T) securityFixture {
	t.Helper()
	ca, client := newClientPair(t)
	other, err := ca.Issue(testcerts.Leaf{CommonName: "other", Client: true})
	if err != nil {
		t.Fatal(err)
	}
	p12, err := pkcs12.Modern.Encode(client.Key, client.Cert, []*x509.Certificate{ca.Cert}, testP12Password)
	if err != nil {
		t.Fatal(err)
	}
	jks := append([]byte{0xFE, 0xED, 0xFE, 0xED, 0, 0, 0, 2}, make([]byte, 32)...)
	return securityFixture{
		caPEM: string(ca.CertPEM), certPEM: string(client.CertPEM), keyPEM: string(client.KeyPEM),
		otherKeyPEM: string(other.KeyPEM),
		p12:         base64.StdEncoding.EncodeToString(p12), jks: base64.StdEncoding.EncodeToString(jks),
	}
}

// newClientPair returns a new test CA and a client certificate it signed.
func newClientPair(t testing.TB) (*testcerts.CA, *testcerts.Pair) {
	t.Helper()
	ca, err := testcerts.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.Issue(testcerts.Leaf{CommonName: "client", Client: true})
	if err != nil {
		t.Fatal(err)
	}
	return ca, client
}

func secureConn(proto string, s *SASL, t *TLS) Connection {
	return Connection{Name: "c", BootstrapServers: []string{"broker:9093"}, SecurityProtocol: proto, SASL: s, TLS: t}
}

func TestConnectionSecurityValid(t *testing.T) {
	f := newSecurityFixture(t)
	for name, c := range map[string]Connection{
		"plaintext":       secureConn("", nil, nil),
		"plaintext named": secureConn("PLAINTEXT", nil, nil),
		"ssl system CAs":  secureConn("SSL", nil, nil),
		"ssl with CA":     secureConn("SSL", nil, &TLS{CAPEM: f.caPEM, ServerName: "broker"}),
		"mtls pem":        secureConn("SSL", nil, &TLS{CAPEM: f.caPEM, CertPEM: f.certPEM, KeyPEM: f.keyPEM}),
		"mtls p12":        secureConn("SSL", nil, &TLS{KeystoreP12Base64: f.p12, KeystorePassword: testP12Password}),
		"p12 wrapped":     secureConn("SSL", nil, &TLS{KeystoreP12Base64: f.p12[:40] + "\n" + f.p12[40:], KeystorePassword: testP12Password}),
		"scram ssl":       secureConn("SASL_SSL", &SASL{Mechanism: SASLScram512, Username: "u", Password: testPassword}, &TLS{CAPEM: f.caPEM}),
		"plain":           secureConn("SASL_PLAINTEXT", &SASL{Mechanism: SASLPlain, Username: "u", Password: testPassword}, nil),
		"scram 256":       secureConn("SASL_PLAINTEXT", &SASL{Mechanism: SASLScram256, Username: "u", Password: testPassword}, nil),
		"oauth grant": secureConn("SASL_SSL", &SASL{Mechanism: SASLOAuthBearer, OAuth: &OAuth{
			TokenEndpointURL: "https://idp.example.com/token", ClientID: "id", ClientSecret: testClientSecret, Scope: "kafka"}}, nil),
		"oauth token": secureConn("SASL_PLAINTEXT", &SASL{Mechanism: SASLOAuthBearer, OAuth: &OAuth{Token: testToken}}, nil),
		"oauth file":  secureConn("SASL_PLAINTEXT", &SASL{Mechanism: SASLOAuthBearer, OAuth: &OAuth{TokenFile: "/run/token"}}, nil),
		"msk iam":     secureConn("SASL_SSL", &SASL{Mechanism: SASLAWSMSKIAM, AWSRegion: "eu-west-1"}, nil),
		"entra id":    secureConn("SASL_SSL", &SASL{Mechanism: SASLAzureEntraID}, nil),
		"entra id scope": {Name: "c", BootstrapServers: []string{"10.0.0.7:9093"}, SecurityProtocol: ProtocolSASLSSL,
			SASL: &SASL{Mechanism: SASLAzureEntraID, AzureScope: "https://ns.servicebus.windows.net/.default"}},
		"gcp iam": secureConn("SASL_SSL", &SASL{Mechanism: SASLGCPIAM}, nil),
		"registry ca": {Name: "c", BootstrapServers: []string{"b:9092"},
			SchemaRegistry: &SchemaRegistry{URL: "https://registry:8081", CAPEM: f.caPEM}},
	} {
		t.Run(name, func(t *testing.T) {
			if errs := c.Validate(); errs != nil {
				t.Fatalf("Validate: %v", errs)
			}
			if _, err := c.TLSConfig(); err != nil {
				t.Fatalf("TLSConfig: %v", err)
			}
		})
	}
}

func TestConnectionSecurityInvalid(t *testing.T) {
	f := newSecurityFixture(t)
	scram := func() *SASL { return &SASL{Mechanism: SASLScram512, Username: "u", Password: testPassword} }
	oauth := func(o *OAuth) *SASL { return &SASL{Mechanism: SASLOAuthBearer, OAuth: o} }
	grant := func() *OAuth {
		return &OAuth{TokenEndpointURL: "https://idp/token", ClientID: "id", ClientSecret: testClientSecret}
	}
	cases := []struct {
		name string
		conn Connection
		path string
		want string
	}{
		{"unknown protocol", secureConn("TLS", nil, nil), "security_protocol", "not a security protocol"},
		{"sasl protocol without sasl", secureConn("SASL_SSL", nil, nil), "sasl", "needs a sasl block"},
		{"sasl on plaintext", secureConn("", scram(), nil), "sasl", "SASL_SSL or SASL_PLAINTEXT (it is PLAINTEXT)"},
		{"sasl on ssl", secureConn("SSL", scram(), nil), "sasl", "(it is SSL)"},
		{"no mechanism", secureConn("SASL_SSL", &SASL{Username: "u", Password: testPassword}, nil), "sasl.mechanism", "required"},
		{"bad mechanism", secureConn("SASL_SSL", &SASL{Mechanism: "GSSAPI"}, nil), "sasl.mechanism", `"GSSAPI" is not a SASL mechanism`},
		{"no credentials", secureConn("SASL_SSL", &SASL{Mechanism: SASLPlain}, nil), "sasl.username", "needs username and password"},
		{"password alone", secureConn("SASL_SSL", &SASL{Mechanism: SASLPlain, Password: testPassword}, nil),
			"sasl.username", "password is set without username"},
		{"username alone", secureConn("SASL_SSL", &SASL{Mechanism: SASLScram256, Username: "u"}, nil),
			"sasl.password", "username is set without password"},
		{"scram with oauth", secureConn("SASL_SSL", &SASL{Mechanism: SASLScram512, Username: "u", Password: testPassword,
			OAuth: grant()}, nil), "sasl.oauth", "only for mechanism OAUTHBEARER"},
		{"aws region on scram", secureConn("SASL_SSL", &SASL{Mechanism: SASLScram512, Username: "u", Password: testPassword,
			AWSRegion: "eu-west-1"}, nil), "sasl.aws_region", "only for mechanism AWS_MSK_IAM"},
		{"oauth without block", secureConn("SASL_SSL", &SASL{Mechanism: SASLOAuthBearer}, nil), "sasl.oauth", "needs an oauth block"},
		{"oauth with password", secureConn("SASL_SSL", &SASL{Mechanism: SASLOAuthBearer, Password: testPassword,
			OAuth: grant()}, nil), "sasl.password", "only for PLAIN and SCRAM"},
		{"oauth empty", secureConn("SASL_SSL", oauth(&OAuth{}), nil), "sasl.oauth", "set token_endpoint_url, client_id and client_secret"},
		{"oauth scope without url", secureConn("SASL_SSL", oauth(&OAuth{Scope: "kafka", ClientID: "id", ClientSecret: testClientSecret}), nil),
			"sasl.oauth.token_endpoint_url", "token_endpoint_url is missing"},
		{"oauth no secret", secureConn("SASL_SSL", oauth(&OAuth{TokenEndpointURL: "https://idp/token", ClientID: "id"}), nil),
			"sasl.oauth.client_secret", "client_secret is missing"},
		{"oauth no client id", secureConn("SASL_SSL", oauth(&OAuth{TokenEndpointURL: "https://idp/token", ClientSecret: testClientSecret}), nil),
			"sasl.oauth.client_id", "client_id is missing"},
		{"oauth bad url", secureConn("SASL_SSL", oauth(&OAuth{TokenEndpointURL: "idp/token", ClientID: "id", ClientSecret: testClientSecret}), nil),
			"sasl.oauth.token_endpoint_url", "not an http or https URL"},
		{"oauth url with user", secureConn("SASL_SSL", oauth(&OAuth{TokenEndpointURL: "https://id:" + testClientSecret + "@idp/token",
			ClientID: "id", ClientSecret: testClientSecret}), nil), "sasl.oauth.token_endpoint_url", "carries credentials"},
		{"oauth two sources", secureConn("SASL_SSL", oauth(&OAuth{Token: testToken, TokenFile: "/t"}), nil),
			"sasl.oauth", "only one token source: token, token_file"},
		{"oauth grant and token", secureConn("SASL_SSL", oauth(&OAuth{TokenEndpointURL: "https://idp/token", ClientID: "id",
			ClientSecret: testClientSecret, Token: testToken}), nil), "sasl.oauth", "token_endpoint_url, token are all set"},
		{"iam with username", secureConn("SASL_SSL", &SASL{Mechanism: SASLAWSMSKIAM, Username: "u"}, nil),
			"sasl.username", "only for PLAIN and SCRAM"},
		{"iam with oauth", secureConn("SASL_SSL", &SASL{Mechanism: SASLAWSMSKIAM, OAuth: grant()}, nil),
			"sasl.oauth", "AWS_MSK_IAM takes the agent's AWS credentials"},
		{"iam without tls", secureConn("SASL_PLAINTEXT", &SASL{Mechanism: SASLAWSMSKIAM}, nil),
			"sasl.mechanism", "needs security_protocol SASL_SSL"},
		{"entra id without tls", secureConn("SASL_PLAINTEXT", &SASL{Mechanism: SASLAzureEntraID}, nil),
			"sasl.mechanism", "AZURE_EVENT_HUBS_ENTRA_ID needs security_protocol SASL_SSL"},
		{"entra id with oauth", secureConn("SASL_SSL", &SASL{Mechanism: SASLAzureEntraID, OAuth: grant()}, nil),
			"sasl.oauth", "AZURE_EVENT_HUBS_ENTRA_ID takes the agent's Azure credentials"},
		{"entra id with password", secureConn("SASL_SSL", &SASL{Mechanism: SASLAzureEntraID, Password: testPassword}, nil),
			"sasl.password", "only for PLAIN and SCRAM mechanisms (it is AZURE_EVENT_HUBS_ENTRA_ID)"},
		{"entra id scope not https", secureConn("SASL_SSL", &SASL{Mechanism: SASLAzureEntraID, AzureScope: "ns.servicebus.windows.net/.default"},
			nil), "sasl.azure_scope", "not an https URL"},
		{"entra id scope from an ip", Connection{Name: "c", BootstrapServers: []string{"10.0.0.7:9093"}, SecurityProtocol: ProtocolSASLSSL,
			SASL: &SASL{Mechanism: SASLAzureEntraID}}, "sasl.azure_scope", "needs azure_scope when the first bootstrap server is not a host name"},
		{"azure scope on msk", secureConn("SASL_SSL", &SASL{Mechanism: SASLAWSMSKIAM, AzureScope: "https://ns.servicebus.windows.net/.default"},
			nil), "sasl.azure_scope", "azure_scope is only for mechanism AZURE_EVENT_HUBS_ENTRA_ID (it is AWS_MSK_IAM)"},
		{"gcp iam without tls", secureConn("SASL_PLAINTEXT", &SASL{Mechanism: SASLGCPIAM}, nil),
			"sasl.mechanism", "GCP_MANAGED_KAFKA_IAM needs security_protocol SASL_SSL"},
		{"gcp iam with oauth", secureConn("SASL_SSL", &SASL{Mechanism: SASLGCPIAM, OAuth: grant()}, nil),
			"sasl.oauth", "GCP_MANAGED_KAFKA_IAM takes the agent's Google application default credentials"},
		{"gcp iam with username", secureConn("SASL_SSL", &SASL{Mechanism: SASLGCPIAM, Username: "u"}, nil),
			"sasl.username", "only for PLAIN and SCRAM"},
		{"aws region on gcp iam", secureConn("SASL_SSL", &SASL{Mechanism: SASLGCPIAM, AWSRegion: "eu-west-1"}, nil),
			"sasl.aws_region", "only for mechanism AWS_MSK_IAM (it is GCP_MANAGED_KAFKA_IAM)"},
		{"tls on plaintext", secureConn("", nil, &TLS{CAPEM: f.caPEM}), "tls", "need security_protocol SSL or SASL_SSL (it is PLAINTEXT)"},
		{"tls on sasl plaintext", secureConn("SASL_PLAINTEXT", scram(), &TLS{InsecureSkipVerify: true}), "tls", "(it is SASL_PLAINTEXT)"},
		{"ca not pem", secureConn("SSL", nil, &TLS{CAPEM: "hello"}), "tls.ca_pem", "no PEM certificate"},
		{"ca is a key", secureConn("SSL", nil, &TLS{CAPEM: f.keyPEM}), "tls.ca_pem", `is a "PRIVATE KEY"`},
		{"ca trailing junk", secureConn("SSL", nil, &TLS{CAPEM: f.caPEM + "junk"}), "tls.ca_pem", "text after the last PEM certificate"},
		{"ca bad der", secureConn("SSL", nil, &TLS{CAPEM: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"}),
			"tls.ca_pem", "block 1 is not a valid certificate"},
		{"cert without key", secureConn("SSL", nil, &TLS{CertPEM: f.certPEM}), "tls.key_pem", "cert_pem is set without key_pem"},
		{"key without cert", secureConn("SSL", nil, &TLS{KeyPEM: f.keyPEM}), "tls.cert_pem", "key_pem is set without cert_pem"},
		{"cert not pem", secureConn("SSL", nil, &TLS{CertPEM: "x", KeyPEM: f.keyPEM}), "tls.cert_pem", "no PEM certificate"},
		{"key mismatch", secureConn("SSL", nil, &TLS{CertPEM: f.certPEM, KeyPEM: f.otherKeyPEM}), "tls.key_pem", "does not match cert_pem"},
		{"key not pem", secureConn("SSL", nil, &TLS{CertPEM: f.certPEM, KeyPEM: testPassword}), "tls.key_pem", "does not parse"},
		{"p12 and pem", secureConn("SSL", nil, &TLS{KeystoreP12Base64: f.p12, KeystorePassword: testP12Password, CertPEM: f.certPEM,
			KeyPEM: f.keyPEM}), "tls.keystore_p12_base64", "not both"},
		{"p12 password alone", secureConn("SSL", nil, &TLS{KeystorePassword: testP12Password}), "tls.keystore_password",
			"without keystore_p12_base64"},
		{"p12 wrong password", secureConn("SSL", nil, &TLS{KeystoreP12Base64: f.p12, KeystorePassword: "wrong-" + testP12Password}),
			"tls.keystore_password", "does not open"},
		{"p12 not base64", secureConn("SSL", nil, &TLS{KeystoreP12Base64: "%%" + testP12Password}), "tls.keystore_p12_base64", "not base64"},
		{"p12 garbage", secureConn("SSL", nil, &TLS{KeystoreP12Base64: base64.StdEncoding.EncodeToString([]byte("garbage"))}),
			"tls.keystore_p12_base64", "does not hold one private key"},
		{"jks base64", secureConn("SSL", nil, &TLS{KeystoreP12Base64: f.jks, KeystorePassword: testP12Password}),
			"tls.keystore_p12_base64", "keytool -importkeystore -srckeystore client.jks -srcstoretype JKS"},
		{"jks raw", secureConn("SSL", nil, &TLS{KeystoreP12Base64: "\xfe\xed\xfe\xed\x00\x00\x00\x02"}),
			"tls.keystore_p12_base64", "Java KeyStore (JKS)"},
		{"registry ca on http", Connection{Name: "c", BootstrapServers: []string{"b:9092"},
			SchemaRegistry: &SchemaRegistry{URL: "http://registry:8081", CAPEM: f.caPEM}}, "schema_registry.ca_pem", "url is http"},
		{"registry ca not pem", Connection{Name: "c", BootstrapServers: []string{"b:9092"},
			SchemaRegistry: &SchemaRegistry{URL: "https://registry:8081", CAPEM: "nope"}}, "schema_registry.ca_pem", "no PEM certificate"},
	}
	secrets := []string{testPassword, testClientSecret, testToken, testP12Password, f.keyPEM[40:80], f.p12[40:80]}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := tc.conn.Validate()
			found := false
			for _, e := range errs {
				if e.Path == tc.path && strings.Contains(e.Detail, tc.want) {
					found = true
				}
			}
			if !found {
				t.Errorf("want a problem on %s containing %q; got %v", tc.path, tc.want, errs)
			}
			if len(errs) != 1 {
				t.Errorf("want one problem, got %d: %v", len(errs), errs)
			}
			for _, s := range secrets {
				if strings.Contains(errs.Error(), s) {
					t.Errorf("a message quotes the secret %q: %v", s, errs)
				}
			}
			if _, err := tc.conn.TLSConfig(); err != nil && !strings.HasPrefix(err.Error(), "tls.") {
				t.Errorf("TLSConfig error %q does not start with the attribute", err)
			}
		})
	}
}

func TestAzureScope(t *testing.T) {
	for _, tc := range []struct {
		servers []string
		scope   string
		want    string
	}{
		{[]string{"ns.servicebus.windows.net:9093"}, "", "https://ns.servicebus.windows.net/.default"},
		{[]string{"ns.servicebus.chinacloudapi.cn:9093", "other:9093"}, "", "https://ns.servicebus.chinacloudapi.cn/.default"},
		{[]string{"10.0.0.7:9093"}, "https://ns.servicebus.windows.net/.default", "https://ns.servicebus.windows.net/.default"},
		{[]string{"10.0.0.7:9093"}, "", ""},
		{[]string{"[::1]:9093"}, "", ""},
		{nil, "", ""},
	} {
		c := Connection{BootstrapServers: tc.servers, SASL: &SASL{Mechanism: SASLAzureEntraID, AzureScope: tc.scope}}
		if got := c.AzureScope(); got != tc.want {
			t.Errorf("%v, azure_scope %q: AzureScope() = %q, want %q", tc.servers, tc.scope, got, tc.want)
		}
	}
}

func TestTLSConfig(t *testing.T) {
	f := newSecurityFixture(t)
	c := secureConn("SASL_SSL", &SASL{Mechanism: SASLPlain, Username: "u", Password: testPassword},
		&TLS{CAPEM: f.caPEM, KeystoreP12Base64: f.p12, KeystorePassword: testP12Password, ServerName: "kafka", InsecureSkipVerify: true})
	cfg, err := c.TLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RootCAs == nil || cfg.ServerName != "kafka" || !cfg.InsecureSkipVerify || cfg.GetClientCertificate == nil {
		t.Fatalf("config = %+v", cfg)
	}
	cert, err := cfg.GetClientCertificate(&tls.CertificateRequestInfo{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cert.Certificate) != 2 {
		t.Errorf("the PKCS#12 chain has %d certificates, want the leaf and the CA", len(cert.Certificate))
	}
	if cert.Leaf.Subject.CommonName != "client" {
		t.Errorf("leaf = %v", cert.Leaf.Subject)
	}
	c.SecurityProtocol = ProtocolSASLPlaintext
	if cfg, err := c.TLSConfig(); cfg != nil || err != nil {
		t.Errorf("SASL_PLAINTEXT: TLSConfig = %v, %v; want none", cfg, err)
	}
}
