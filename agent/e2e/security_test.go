//go:build e2e

package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// kafkaSecurity is the test broker's secure listeners and the material to
// reach them, from the settings `tools/kafka.sh security` prints.
type kafkaSecurity struct {
	// saslBootstrap is the SASL_SSL listener (SCRAM-SHA-512, PLAIN,
	// OAUTHBEARER), mtlsBootstrap the SSL one that requires a client
	// certificate.
	saslBootstrap, mtlsBootstrap string
	// caFile signed the broker's certificate; otherCAFile did not.
	caFile, otherCAFile string
	// certFile and keyFile are a client certificate the broker accepts,
	// p12File the same in a PKCS#12 store opened with p12Password;
	// expiredCertFile and expiredKeyFile one that has expired.
	certFile, keyFile, p12File, p12Password string
	expiredCertFile, expiredKeyFile         string
	scramUser, scramPassword                string
	plainUser, plainPassword                string
}

// securityEnv returns the secure listeners' settings, skipping the test
// when they are not set.
func securityEnv(t *testing.T) kafkaSecurity {
	t.Helper()
	get := func(name string) string {
		v := os.Getenv(name)
		if v == "" {
			t.Skipf(`%s is not set: eval "$(tools/kafka.sh security)" (make test does)`, name)
		}
		return v
	}
	return kafkaSecurity{
		saslBootstrap: get("KAFKA_SASL_SSL_BOOTSTRAP"), mtlsBootstrap: get("KAFKA_MTLS_BOOTSTRAP"),
		caFile: get("KAFKA_CA_FILE"), otherCAFile: get("KAFKA_OTHER_CA_FILE"),
		certFile: get("KAFKA_CLIENT_CERT_FILE"), keyFile: get("KAFKA_CLIENT_KEY_FILE"),
		p12File: get("KAFKA_CLIENT_P12_FILE"), p12Password: get("KAFKA_CLIENT_P12_PASSWORD"),
		expiredCertFile: get("KAFKA_EXPIRED_CERT_FILE"), expiredKeyFile: get("KAFKA_EXPIRED_KEY_FILE"),
		scramUser: get("KAFKA_SCRAM_USER"), scramPassword: get("KAFKA_SCRAM_PASSWORD"),
		plainUser: get("KAFKA_PLAIN_USER"), plainPassword: get("KAFKA_PLAIN_PASSWORD"),
	}
}

// tokenIssuer is an OAuth 2.0 token endpoint for the client-credentials
// grant of one client. It issues unsecured JWS tokens (alg "none", a sub
// claim naming the client, iat and exp), which the test broker's
// OAUTHBEARER listener validates as Kafka's own tests do.
type tokenIssuer struct {
	clientID, clientSecret, scope string

	mu sync.Mutex
	// issued lists every token handed out; refused counts refused requests.
	issued  []string
	refused int
}

// ServeHTTP answers a token request: POST, form-encoded, grant_type
// client_credentials, the client's id and secret in HTTP Basic or in the
// form (RFC 6749, 2.3.1).
func (ti *tokenIssuer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	refuse := func(status int, code string) {
		ti.mu.Lock()
		ti.refused++
		ti.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": code})
	}
	if r.Method != http.MethodPost {
		refuse(http.StatusMethodNotAllowed, "invalid_request")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 1<<16)
	if err := r.ParseForm(); err != nil {
		refuse(http.StatusBadRequest, "invalid_request")
		return
	}
	if r.PostForm.Get("grant_type") != "client_credentials" {
		refuse(http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != ti.clientID || secret != ti.clientSecret {
		refuse(http.StatusUnauthorized, "invalid_client")
		return
	}
	if scope := r.PostForm.Get("scope"); scope != "" && scope != ti.scope {
		refuse(http.StatusBadRequest, "invalid_scope")
		return
	}
	const lifetime = time.Hour
	token := unsecuredJWS(map[string]any{"sub": id, "iat": time.Now().Unix(), "exp": time.Now().Add(lifetime).Unix(), "scope": ti.scope})
	ti.mu.Lock()
	ti.issued = append(ti.issued, token)
	ti.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": int(lifetime.Seconds())})
}

// tokens returns the tokens issued so far and the requests refused.
func (ti *tokenIssuer) tokens() ([]string, int) {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	return append([]string(nil), ti.issued...), ti.refused
}

// unsecuredJWS is an unsigned JWS in compact form: header {"alg":"none"},
// the claims, and an empty signature.
func unsecuredJWS(claims map[string]any) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v) // maps of strings and numbers always marshal
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "none"}) + "." + enc(claims) + "."
}

// secureCase is one connection of TestSecureConnectionsThroughTerraform: a
// pipeline of one table reading a topic of secureRecords records through
// it.
type secureCase struct {
	name string
	// bootstrap is the listener the connection uses; "" for PLAINTEXT.
	bootstrap string
	// connection is the connection's security attributes; the HCL
	// variable var.secret holds the case's secret.
	connection string
	secret     string
	// transformer, if set, is the table's value_transformer; the value is
	// read as BINARY otherwise.
	transformer string
	// wantErrors, when set, make the case one that must fail: terraform
	// apply fails with an error that holds each of these phrases, the
	// first of which the table's last error on the agent holds too.
	wantErrors []string
	// namesConnection: the error names the connection as well (Kafka's
	// refusals do; the registry's name the subject).
	namesConnection bool
}

// secureRecords is how many records each case's topic holds.
const secureRecords = 20

// TestSecureConnectionsThroughTerraform applies, with the real Terraform
// CLI, pipelines whose connections reach the test broker over SASL_SSL with
// SCRAM-SHA-512, with PLAIN and with OAUTHBEARER (tokens from a
// client-credentials endpoint the test runs), and over mTLS with a PEM
// certificate and with a PKCS#12 store, and checks each ingests its topic.
// A wrong password, a CA that did not sign the broker's certificate, an
// expired client certificate and a registry secret the registry refuses
// each make the apply fail with an error that names the cause and the
// connection, which the pipeline's status shows too. Finally no secret of
// any case appears in any line the agent logged (at debug level) or
// Terraform printed.
func TestSecureConnectionsThroughTerraform(t *testing.T) {
	t.Parallel()
	sec := securityEnv(t)
	reg := registryEnv(t)
	// At debug level, so the leak check reads all the agent can log.
	dataDir := t.TempDir()
	a := startAgentOn(t, dataDir, filepath.Join(dataDir, "warehouse"), "--log-level", "debug")

	issuer := &tokenIssuer{clientID: "tributary-e2e", clientSecret: "oauth-" + uniqueName("client-secret"), scope: "kafka"}
	tokenServer := httptest.NewServer(issuer)
	t.Cleanup(tokenServer.Close)

	p12, err := os.ReadFile(sec.p12File)
	if err != nil {
		t.Fatal(err)
	}
	// 64 characters from the middle of the store in base64, in its
	// encrypted part: its start is the same in every store.
	p12Base64 := base64.StdEncoding.EncodeToString(p12)
	p12Sample := p12Base64[len(p12Base64)/2:][:64]
	trust := func(caFile string) string { return fmt.Sprintf("  tls = { ca_pem = file(%q) }\n", caFile) }
	saslTLS := trust(sec.caFile)
	sasl := func(mechanism, user string) string {
		return fmt.Sprintf(`  security_protocol = "SASL_SSL"
  sasl = {
    mechanism = %q
    username  = %q
    password  = var.secret
  }
`, mechanism, user)
	}
	mtls := func(cert, key string) string {
		return fmt.Sprintf(`  security_protocol = "SSL"
  tls = {
    ca_pem   = file(%q)
    cert_pem = file(%q)
    key_pem  = file(%q)
  }
`, sec.caFile, cert, key)
	}
	wrongPassword := "wrong-" + uniqueName("password")
	wrongRegistrySecret := "wrong-" + uniqueName("registry-secret")
	cases := []secureCase{
		{name: "scram", bootstrap: sec.saslBootstrap, connection: sasl("SCRAM-SHA-512", sec.scramUser) + saslTLS, secret: sec.scramPassword},
		{name: "plain", bootstrap: sec.saslBootstrap, connection: sasl("PLAIN", sec.plainUser) + saslTLS, secret: sec.plainPassword},
		{name: "oauthbearer", bootstrap: sec.saslBootstrap, secret: issuer.clientSecret, connection: fmt.Sprintf(`  security_protocol = "SASL_SSL"
  sasl = {
    mechanism = "OAUTHBEARER"
    oauth = {
      token_endpoint_url = %q
      client_id          = %q
      client_secret      = var.secret
      scope              = %q
    }
  }
`, tokenServer.URL, issuer.clientID, issuer.scope) + saslTLS},
		{name: "mtls", bootstrap: sec.mtlsBootstrap, connection: mtls(sec.certFile, sec.keyFile)},
		{name: "mtls_p12", bootstrap: sec.mtlsBootstrap, secret: sec.p12Password, connection: fmt.Sprintf(`  security_protocol = "SSL"
  tls = {
    ca_pem              = file(%q)
    keystore_p12_base64 = filebase64(%q)
    keystore_password   = var.secret
  }
`, sec.caFile, sec.p12File)},

		{name: "wrong_password", bootstrap: sec.saslBootstrap, connection: sasl("SCRAM-SHA-512", sec.scramUser) + saslTLS, secret: wrongPassword,
			wantErrors: []string{"refused the SASL SCRAM-SHA-512 credentials", sec.scramUser, "sasl.password"}, namesConnection: true},
		{name: "untrusted_ca", bootstrap: sec.saslBootstrap, secret: sec.scramPassword,
			connection: sasl("SCRAM-SHA-512", sec.scramUser) + trust(sec.otherCAFile),
			wantErrors: []string{"not signed by a trusted CA", "tls.ca_pem"}, namesConnection: true},
		{name: "expired_certificate", bootstrap: sec.mtlsBootstrap, connection: mtls(sec.expiredCertFile, sec.expiredKeyFile),
			wantErrors: []string{"refused the client certificate", "tls.cert_pem"}, namesConnection: true},
		{name: "registry_credentials", secret: wrongRegistrySecret, connection: reg.hcl("secret"),
			transformer: `{
          format       = "AVRO"
          avro_options = { schema_registry = { confluent_options = { subject = "orders-value" } } }
        }`,
			wantErrors: []string{"refused the API key", "check the API key and secret"}},
	}

	// Every apply's output, for the leak check at the end.
	var outputsMu sync.Mutex
	var outputs []string
	record := func(out string) {
		outputsMu.Lock()
		defer outputsMu.Unlock()
		outputs = append(outputs, out)
	}
	t.Run("cases", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				c.run(t, a.in(t), record)
			})
		}
	})

	tokens, refused := issuer.tokens()
	if len(tokens) == 0 {
		t.Errorf("the token endpoint issued no token (%d requests refused)", refused)
	}
	secrets := map[string]string{
		"SCRAM password": sec.scramPassword, "PLAIN password": sec.plainPassword, "wrong password": wrongPassword,
		"PKCS#12 password": sec.p12Password, "OAuth client secret": issuer.clientSecret, "registry secret": wrongRegistrySecret,
		"PKCS#12 store": p12Sample,
	}
	for i, tok := range tokens {
		secrets[fmt.Sprintf("OAuth token %d", i)] = tok
	}
	for name, pair := range map[string][2]string{"client key": {sec.keyFile, sec.certFile}, "expired client key": {sec.expiredKeyFile, sec.expiredCertFile}} {
		for i, line := range privateLines(t, pair[0], pair[1]) {
			secrets[fmt.Sprintf("%s, line %d of its PEM", name, i+1)] = line
		}
	}
	logged, err := os.ReadFile(filepath.Join(a.dataDir, "agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	if len(logged) == 0 {
		t.Fatal("the agent logged nothing")
	}
	texts := map[string]string{"the agent's log": string(logged), "terraform's output": strings.Join(outputs, "\n")}
	for where, text := range texts {
		for name, secret := range secrets {
			for i, line := range strings.Split(text, "\n") {
				if strings.Contains(line, secret) {
					t.Errorf("%s holds the %s, line %d: %s", where, name, i+1, line)
					break
				}
			}
		}
	}
	t.Logf("checked %d lines of the agent's log and %d applies for %d secrets", strings.Count(string(logged), "\n"), len(outputs), len(secrets))
}

// run applies c's pipeline, produces its topic first, and checks the
// outcome: its records in the table, or the failure it wants. It passes
// terraform's output to record.
func (c secureCase) run(t *testing.T, a *agent, record func(string)) {
	name := uniqueName("e2e-sec-" + strings.ReplaceAll(c.name, "_", "-"))
	topic := uniqueName("e2e-sec-" + c.name)
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", fmt.Sprint(secureRecords), "--partitions", "2")
	transformers := ""
	if c.transformer != "" {
		transformers = "value_transformer = " + c.transformer
	}
	dir := t.TempDir()
	tfPipeline{connection: name, pipeline: name, bootstrap: c.bootstrap, connectionBody: c.connection,
		body: tfTable(c.name, topic, transformers, ""), before: `
variable "secret" {
  type      = string
  sensitive = true
  default   = ""
}
`}.write(t, dir)
	writeVar(t, dir, "secret", c.secret)
	out, err := tryTerraform(t, dir, a, "apply", "-auto-approve", "-input=false", "-no-color")
	record(out)
	if c.wantErrors == nil {
		if err != nil {
			t.Fatalf("terraform apply: %v\n%s\nagent log:\n%s", err, out, a.log())
		}
		a.waitRows(name, 0, secureRecords, 2*time.Minute)
		return
	}
	if err == nil {
		t.Fatalf("terraform apply succeeded; want it to fail with %q\n%s", c.wantErrors, out)
	}
	// Terraform wraps and frames its diagnostics: compare words.
	flat := strings.Join(strings.Fields(strings.ReplaceAll(out, "│", " ")), " ")
	wants := c.wantErrors
	if c.namesConnection {
		wants = append(wants, fmt.Sprintf("connection %q", name))
	}
	var missing []string
	for _, want := range wants {
		if !strings.Contains(flat, want) {
			missing = append(missing, want)
		}
	}
	if missing != nil {
		t.Fatalf("terraform apply failed without %q in its output:\n%s", missing, out)
	}
	st, ok := a.pollTable(name, 0, time.Minute, func(_ *spec.PipelineStatus, ts spec.TableStatus) bool {
		return strings.Contains(ts.LastError, c.wantErrors[0])
	})
	if !ok {
		t.Errorf("the table's last error on the agent is %q; want it to hold %q", st.LastError, c.wantErrors[0])
	}
	t.Logf("apply failed as it should; the table's status: %s: %s", st.State, st.LastError)
}

// in returns a view of a for the (sub)test t, on which its helpers report
// failures.
func (a *agent) in(t *testing.T) *agent {
	c := *a
	c.t = t
	return &c
}

// privateLines returns the base64 lines of the PEM key file that are not
// part of its certificate's base64 too: what a leaked key would show however
// its line breaks were escaped, less the public key, which both hold.
func privateLines(t *testing.T, keyFile, certFile string) []string {
	t.Helper()
	public := strings.Join(pemBodyLines(t, certFile), "")
	var lines []string
	for _, line := range pemBodyLines(t, keyFile) {
		if !strings.Contains(public, line) {
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		t.Fatalf("every line of %s is in %s", keyFile, certFile)
	}
	return lines
}

// pemBodyLines returns the base64 lines of the PEM file's blocks.
func pemBodyLines(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "-----") {
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		t.Fatalf("%s holds no PEM", file)
	}
	return lines
}
