package kafka_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestRealBrokerSecurity runs the client against the secure listeners of
// the test broker (tools/kafka.sh up; eval "$(tools/kafka.sh security)"),
// when KAFKA_BOOTSTRAP and KAFKA_SASL_SSL_BOOTSTRAP say where it is: Java's
// TLS and SASL, not kfake's, on the admin and the fetch paths.
func TestRealBrokerSecurity(t *testing.T) {
	plainBootstrap, saslSSL := os.Getenv("KAFKA_BOOTSTRAP"), os.Getenv("KAFKA_SASL_SSL_BOOTSTRAP")
	if plainBootstrap == "" || saslSSL == "" {
		t.Skip("KAFKA_BOOTSTRAP and KAFKA_SASL_SSL_BOOTSTRAP are not set (tools/kafka.sh security)")
	}
	file := func(env string) string {
		t.Helper()
		b, err := os.ReadFile(os.Getenv(env))
		if err != nil {
			t.Fatalf("%s: %v", env, err)
		}
		return string(b)
	}
	seedTopic(t, plainBootstrap)
	ca := file("KAFKA_CA_FILE")
	viaSASL := func(s *spec.SASL) *spec.Connection {
		return &spec.Connection{Name: "c", BootstrapServers: []string{saslSSL}, SecurityProtocol: spec.ProtocolSASLSSL, SASL: s,
			TLS: &spec.TLS{CAPEM: ca}}
	}
	mtls := os.Getenv("KAFKA_MTLS_BOOTSTRAP")
	viaMTLS := func(tc *spec.TLS) *spec.Connection {
		return &spec.Connection{Name: "c", BootstrapServers: []string{mtls}, SecurityProtocol: spec.ProtocolSSL, TLS: tc}
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(unsecuredJWT("ingest")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A token endpoint of the client-credentials grant that hands out
	// unsecured JWTs.
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, secret, ok := r.BasicAuth(); !ok || id != "agent" || secret != "idp-secret" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": unsecuredJWT("ingest"), "expires_in": 3600})
	}))
	defer idp.Close()
	// Entra ID, for AZURE_EVENT_HUBS_ENTRA_ID, hands out unsecured JWTs.
	kafka.UseFakeEntraID(t, unsecuredJWT("ingest"))
	entraID := viaSASL(&spec.SASL{Mechanism: spec.SASLAzureEntraID, AzureScope: kafka.TestAzureScope})
	scramUser, scramPassword := os.Getenv("KAFKA_SCRAM_USER"), os.Getenv("KAFKA_SCRAM_PASSWORD")
	for name, conn := range map[string]*spec.Connection{
		"AZURE_EVENT_HUBS_ENTRA_ID": entraID,
		"SCRAM-SHA-512":             viaSASL(&spec.SASL{Mechanism: spec.SASLScram512, Username: scramUser, Password: scramPassword}),
		"PLAIN": viaSASL(&spec.SASL{Mechanism: spec.SASLPlain, Username: os.Getenv("KAFKA_PLAIN_USER"),
			Password: os.Getenv("KAFKA_PLAIN_PASSWORD")}),
		"OAUTHBEARER token":      viaSASL(&spec.SASL{Mechanism: spec.SASLOAuthBearer, OAuth: &spec.OAuth{Token: unsecuredJWT("ingest")}}),
		"OAUTHBEARER token_file": viaSASL(&spec.SASL{Mechanism: spec.SASLOAuthBearer, OAuth: &spec.OAuth{TokenFile: tokenFile}}),
		"OAUTHBEARER client credentials": viaSASL(&spec.SASL{Mechanism: spec.SASLOAuthBearer, OAuth: &spec.OAuth{
			TokenEndpointURL: idp.URL + "/token", ClientID: "agent", ClientSecret: "idp-secret"}}),
		"mTLS PEM": viaMTLS(&spec.TLS{CAPEM: ca, CertPEM: file("KAFKA_CLIENT_CERT_FILE"), KeyPEM: file("KAFKA_CLIENT_KEY_FILE")}),
		"mTLS PKCS#12": viaMTLS(&spec.TLS{CAPEM: ca, KeystorePassword: os.Getenv("KAFKA_CLIENT_P12_PASSWORD"),
			KeystoreP12Base64: base64.StdEncoding.EncodeToString([]byte(file("KAFKA_CLIENT_P12_FILE")))}),
	} {
		t.Run(name, func(t *testing.T) {
			if err := readBack(t, newSecureClient(t, conn)); err != nil {
				t.Fatal(err)
			}
		})
	}
	for name, tc := range map[string]struct {
		conn *spec.Connection
		want string
	}{
		"wrong password": {viaSASL(&spec.SASL{Mechanism: spec.SASLScram512, Username: scramUser, Password: "not-" + scramPassword}),
			`the brokers refused the SASL SCRAM-SHA-512 credentials of user "` + scramUser + `"`},
		"bad token": {viaSASL(&spec.SASL{Mechanism: spec.SASLOAuthBearer, OAuth: &spec.OAuth{Token: "not.a.jwt"}}),
			"the brokers refused the SASL OAUTHBEARER token"},
		"bad Entra ID token": {entraID, "the brokers refused the AZURE_EVENT_HUBS_ENTRA_ID token"},
		"untrusted CA": {viaSASL(&spec.SASL{Mechanism: spec.SASLScram512, Username: scramUser, Password: scramPassword}),
			"is not signed by a trusted CA"},
		"expired client certificate": {viaMTLS(&spec.TLS{CAPEM: ca, CertPEM: file("KAFKA_EXPIRED_CERT_FILE"),
			KeyPEM: file("KAFKA_EXPIRED_KEY_FILE")}), "refused the client certificate"},
		"no client certificate": {viaMTLS(&spec.TLS{CAPEM: ca}), "requires a client certificate"},
	} {
		t.Run(name, func(t *testing.T) {
			switch name {
			case "untrusted CA":
				tc.conn.TLS.CAPEM = file("KAFKA_OTHER_CA_FILE")
			case "bad Entra ID token":
				kafka.UseFakeEntraID(t, "not.a.jwt")
			}
			wantConnectionError(t, readBack(t, newSecureClient(t, tc.conn)), tc.want)
			// The agent's own requests say the same.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cl, err := kafka.NewClient(tc.conn)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			_, err = cl.TopicIDs(ctx, []string{"t"})
			wantConnectionError(t, err, tc.want)
		})
	}
}

// seedTopic makes sure topic "t" exists and holds a record.
func seedTopic(t *testing.T, bootstrap string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.DefaultProduceTopic("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "t"); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// unsecuredJWT returns a token Kafka's unsecured-JWS validator accepts:
// alg "none", the subject and an expiry an hour away.
func unsecuredJWT(subject string) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	now := time.Now().Unix()
	return enc(map[string]string{"alg": "none"}) + "." + enc(map[string]any{"sub": subject, "iat": now, "exp": now + 3600}) + "."
}
