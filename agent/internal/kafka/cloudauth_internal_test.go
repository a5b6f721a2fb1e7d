package kafka

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"golang.org/x/oauth2"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

const (
	testAzureTenant = "tenant-1"
	testAzureClient = "agent-app"
	testAzureSecret = "azure-s3cret~value"
	testEventHubs   = "ns.servicebus.windows.net:9093"
	testAzureScope  = "https://ns.servicebus.windows.net/.default"
)

// fakeEntraID stands in for Microsoft Entra ID: the OpenID metadata of
// its tenant and the token endpoint of the client-credentials grant, which
// hands out token or refuses the client when refuse is set.
type fakeEntraID struct {
	t        *testing.T
	srv      *httptest.Server
	token    string
	refuse   atomic.Bool
	requests atomic.Int32
}

func newFakeEntraID(t *testing.T, token string) *fakeEntraID {
	e := &fakeEntraID{t: t, token: token}
	e.srv = httptest.NewTLSServer(e)
	t.Cleanup(e.srv.Close)
	return e
}

func (e *fakeEntraID) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	base := e.srv.URL + "/" + testAzureTenant
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/" + testAzureTenant + "/v2.0/.well-known/openid-configuration":
		_ = json.NewEncoder(w).Encode(map[string]any{"token_endpoint": base + "/oauth2/v2.0/token",
			"authorization_endpoint": base + "/oauth2/v2.0/authorize", "issuer": base + "/v2.0"})
	case "/" + testAzureTenant + "/oauth2/v2.0/token":
		e.requests.Add(1)
		if err := r.ParseForm(); err != nil {
			e.t.Errorf("token request: %v", err)
		}
		f := r.PostForm
		// MSAL adds OpenID's own scopes after the one asked for.
		if f.Get("grant_type") != "client_credentials" || f.Get("client_id") != testAzureClient ||
			!slices.Contains(strings.Fields(f.Get("scope")), testAzureScope) {
			e.t.Errorf("token request form: grant_type %q, client_id %q, scope %q", f.Get("grant_type"), f.Get("client_id"), f.Get("scope"))
		}
		if e.refuse.Load() || f.Get("client_secret") != testAzureSecret {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided."}`)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"token_type": "Bearer", "expires_in": 3600, "ext_expires_in": 3600,
			"access_token": e.token})
	default:
		e.t.Errorf("unexpected request %s %s", r.Method, r.URL)
		http.NotFound(w, r)
	}
}

// useFakeEntraID makes the agent's Azure credential chain find a client
// secret in the environment and reach e for its tokens.
func useFakeEntraID(t *testing.T, e *fakeEntraID) {
	t.Setenv("AZURE_TENANT_ID", testAzureTenant)
	t.Setenv("AZURE_CLIENT_ID", testAzureClient)
	t.Setenv("AZURE_CLIENT_SECRET", testAzureSecret)
	t.Setenv("AZURE_AUTHORITY_HOST", "")
	t.Setenv("AZURE_FEDERATED_TOKEN_FILE", "")
	old := azureCredential
	azureCredential = func() (azcore.TokenCredential, error) {
		return azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{
			ClientOptions: azcore.ClientOptions{Transport: e.srv.Client(), Cloud: cloud.Configuration{ActiveDirectoryAuthorityHost: e.srv.URL + "/"}},
			// A stand-in of Entra ID is not one of its known hosts.
			DisableInstanceDiscovery: true,
		})
	}
	t.Cleanup(func() { azureCredential = old })
}

func TestAzureEntraIDMechanism(t *testing.T) {
	e := newFakeEntraID(t, "entra.access.token")
	useFakeEntraID(t, e)
	conn := &spec.Connection{BootstrapServers: []string{testEventHubs}, SASL: &spec.SASL{Mechanism: spec.SASLAzureEntraID}}
	m, err := newMechanism(context.Background(), conn)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != "OAUTHBEARER" {
		t.Errorf("name = %q, want OAUTHBEARER (Event Hubs' Kafka endpoint speaks it)", m.Name())
	}
	for range 2 {
		_, first, err := m.Start(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if want := "n,,\x01auth=Bearer entra.access.token\x01\x01"; string(first) != want {
			t.Errorf("first message = %q, want %q", first, want)
		}
	}
	if n := e.requests.Load(); n != 1 {
		t.Errorf("%d token requests for two authentications, want 1 (the token is kept until it nears expiry)", n)
	}

	// Entra ID refuses the client: the error names the mechanism and the
	// scope, never the secret.
	e.refuse.Store(true)
	m, err = newMechanism(context.Background(), conn)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = m.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "AZURE_EVENT_HUBS_ENTRA_ID") || !strings.Contains(err.Error(), testAzureScope) ||
		!strings.Contains(err.Error(), "AADSTS7000215") {
		t.Errorf("refused: error = %v", err)
	} else if strings.Contains(err.Error(), testAzureSecret) {
		t.Errorf("the error quotes the client secret: %v", err)
	}

	// No host name to derive the scope from.
	_, err = newMechanism(context.Background(), &spec.Connection{BootstrapServers: []string{"10.0.0.7:9093"},
		SASL: &spec.SASL{Mechanism: spec.SASLAzureEntraID}})
	if err == nil || !strings.Contains(err.Error(), "sasl.azure_scope") {
		t.Errorf("scope from an IP address: error = %v", err)
	}
}

// googleServiceAccountKey writes a service account key file for email
// whose token_uri is tokenURI and returns its path and public key.
func googleServiceAccountKey(t *testing.T, email, tokenURI string) (string, *rsa.PublicKey) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "proj", "private_key_id": "k1",
		"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), "client_email": email,
		"client_id": "1234", "token_uri": tokenURI})
	path := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, &key.PublicKey
}

// checkJWTBearer checks the JWT-bearer grant (RFC 7523) a service account
// sends to Google's token endpoint: signed with its key, issued by it, for
// the cloud-platform scope.
func checkJWTBearer(t *testing.T, r *http.Request, pub *rsa.PublicKey, email string) {
	t.Helper()
	if err := r.ParseForm(); err != nil {
		t.Fatal(err)
	}
	if g := r.PostForm.Get("grant_type"); g != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		t.Errorf("grant_type = %q", g)
	}
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	if len(parts) != 3 {
		t.Fatalf("assertion has %d parts", len(parts))
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig); err != nil {
		t.Errorf("assertion signature: %v", err)
	}
	var claims struct {
		Iss, Scope string
	}
	b, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if err := json.Unmarshal(b, &claims); err != nil || claims.Iss != email || claims.Scope != googleCloudPlatformScope {
		t.Errorf("assertion claims %s (%v)", b, err)
	}
}

// googleClaimsForm is the exact JSON of the claims Google's login handler
// writes, in its order.
var googleClaimsForm = regexp.MustCompile(`^\{"exp":(\d+),"iat":(\d+),"scope":"kafka","sub":"([^"]+)"\}$`)

// checkGoogleFirstMessage checks the OAUTHBEARER client first message
// of GCP_MANAGED_KAFKA_IAM: the access token wrapped as
// header.claims.token, each part unpadded base64url.
func checkGoogleFirstMessage(t *testing.T, first []byte, accessToken, principal string, lifetime time.Duration) {
	t.Helper()
	msg := string(first)
	tok, prefixed := strings.CutPrefix(msg, "n,,\x01auth=Bearer ")
	tok, suffixed := strings.CutSuffix(tok, "\x01\x01")
	if !prefixed || !suffixed {
		t.Fatalf("first message %q is not RFC 7628's", msg)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q has %d parts", tok, len(parts))
	}
	dec := make([]string, 3)
	for i, p := range parts {
		b, err := base64.RawURLEncoding.DecodeString(p)
		if err != nil {
			t.Fatalf("part %d %q is not unpadded base64url: %v", i, p, err)
		}
		dec[i] = string(b)
	}
	if dec[0] != `{"typ":"JWT","alg":"GOOG_OAUTH2_TOKEN"}` {
		t.Errorf("header = %s", dec[0])
	}
	m := googleClaimsForm.FindStringSubmatch(dec[1])
	if m == nil {
		t.Fatalf("claims = %s", dec[1])
	}
	var exp, iat int64
	if _, err := fmt.Sscan(m[1], &exp); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscan(m[2], &iat); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	if iat < now-60 || iat > now+1 {
		t.Errorf("iat = %d, now is %d", iat, now)
	}
	if want := iat + int64(lifetime.Seconds()); exp < want-60 || exp > want+60 {
		t.Errorf("exp = %d, want the access token's expiry, about %d", exp, want)
	}
	if m[3] != principal {
		t.Errorf("sub = %q, want %q", m[3], principal)
	}
	if dec[2] != accessToken {
		t.Errorf("third part = %q, want the access token %q", dec[2], accessToken)
	}
}

// noGoogleDefaults hides the machine's own Google credentials.
func noGoogleDefaults(t *testing.T) {
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CLOUDSDK_CONFIG", t.TempDir())
}

func TestGCPIAMServiceAccountKey(t *testing.T) {
	noGoogleDefaults(t)
	const email = "ingest@proj.iam.gserviceaccount.com"
	var pub *rsa.PublicKey
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		checkJWTBearer(t, r, pub, email)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"ya29.sa-token","expires_in":3600,"token_type":"Bearer"}`)
	}))
	defer srv.Close()
	var path string
	path, pub = googleServiceAccountKey(t, email, srv.URL+"/token")
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", path)

	m, err := newMechanism(context.Background(), &spec.Connection{SASL: &spec.SASL{Mechanism: spec.SASLGCPIAM}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != "OAUTHBEARER" {
		t.Errorf("name = %q", m.Name())
	}
	for range 2 {
		_, first, err := m.Start(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		checkGoogleFirstMessage(t, first, "ya29.sa-token", email, time.Hour)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d token requests for two authentications, want 1", n)
	}
}

func TestGCPIAMMetadataServer(t *testing.T) {
	noGoogleDefaults(t)
	const email = "vm-sa@proj.iam.gserviceaccount.com"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Metadata-Flavor") != "Google" {
			t.Errorf("%s without Metadata-Flavor", r.URL)
		}
		switch r.URL.Path {
		case "/computeMetadata/v1/instance/service-accounts/default/token":
			if s := r.URL.Query().Get("scopes"); s != googleCloudPlatformScope {
				t.Errorf("scopes = %q", s)
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"access_token":"ya29.vm-token","expires_in":1800,"token_type":"Bearer"}`)
		case "/computeMetadata/v1/instance/service-accounts/default/email":
			fmt.Fprint(w, email)
		case "/computeMetadata/v1/project/project-id":
			fmt.Fprint(w, "proj")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	t.Setenv("GCE_METADATA_HOST", strings.TrimPrefix(srv.URL, "http://"))

	m, err := newMechanism(context.Background(), &spec.Connection{SASL: &spec.SASL{Mechanism: spec.SASLGCPIAM}})
	if err != nil {
		t.Fatal(err)
	}
	_, first, err := m.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkGoogleFirstMessage(t, first, "ya29.vm-token", email, 30*time.Minute)
}

func TestGooglePrincipal(t *testing.T) {
	idToken := func(claims string) string {
		return "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString([]byte(claims)) + ".sig"
	}
	user := (&oauth2.Token{AccessToken: "a"}).WithExtra(map[string]any{"id_token": idToken(`{"email":"me@example.com","sub":"1"}`)})
	plain := &oauth2.Token{AccessToken: "a"}
	for _, tc := range []struct {
		name  string
		json  string
		tok   *oauth2.Token
		want  string
		fails string
	}{
		{"key", `{"type":"service_account","client_email":"sa@p.iam.gserviceaccount.com"}`, plain, "sa@p.iam.gserviceaccount.com", ""},
		{"impersonation", `{"type":"impersonated_service_account","service_account_impersonation_url":` +
			`"https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/target@p.iam.gserviceaccount.com:generateAccessToken"}`,
			plain, "target@p.iam.gserviceaccount.com", ""},
		{"workload identity federation", `{"type":"external_account","service_account_impersonation_url":` +
			`"https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/wif@p.iam.gserviceaccount.com:generateAccessToken"}`,
			plain, "wif@p.iam.gserviceaccount.com", ""},
		{"gcloud user", `{"type":"authorized_user","client_id":"c","refresh_token":"r"}`, user, "me@example.com", ""},
		{"gcloud user without id token", `{"type":"authorized_user"}`, plain, "", `(type "authorized_user") do not name their principal`},
		{"bad impersonation url", `{"type":"impersonated_service_account","service_account_impersonation_url":"https://x/y"}`, plain, "",
			"names no service account"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := googlePrincipal(context.Background(), []byte(tc.json), tc.tok)
			if tc.fails != "" {
				if err == nil || !strings.Contains(err.Error(), tc.fails) {
					t.Errorf("error = %v, want %q", err, tc.fails)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("principal = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := googleKafkaToken(plain, "sa@p", time.Now()); err == nil {
		t.Error("a token without expiry is wrapped")
	}
}
