package kafka

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/compute/metadata"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// This file is the OAUTHBEARER token sources of the agent's own cloud
// identities: Microsoft Entra ID tokens for the Kafka endpoint of Azure
// Event Hubs, and Google OAuth tokens for Google Cloud Managed Service for
// Apache Kafka. Both find their credentials as the clouds' own SDKs do,
// so an agent on a VM, in Kubernetes with workload identity or on a laptop
// with the cloud's CLI logged in needs no secret in its configuration.

// azureCredential returns the agent's Azure credential: azidentity's
// default chain (environment variables, workload identity, managed
// identity, Azure CLI, Azure Developer CLI). Tests replace it to reach a
// stand-in of Entra ID.
var azureCredential = func() (azcore.TokenCredential, error) { return azidentity.NewDefaultAzureCredential(nil) }

// entraIDToken gives Entra ID access tokens for scope. The credential
// keeps each token until shortly before it expires.
type entraIDToken struct {
	cred  azcore.TokenCredential
	scope string
}

// newEntraIDToken returns the token source of AZURE_EVENT_HUBS_ENTRA_ID
// for the connection c.
func newEntraIDToken(c *spec.Connection) (*entraIDToken, error) {
	scope := c.AzureScope()
	if scope == "" {
		return nil, fmt.Errorf("sasl: %s needs sasl.azure_scope: the first bootstrap server is not a host name", spec.SASLAzureEntraID)
	}
	cred, err := azureCredential()
	if err != nil {
		return nil, fmt.Errorf("sasl: %s: set up the agent's Azure credentials: %w", spec.SASLAzureEntraID, err)
	}
	return &entraIDToken{cred: cred, scope: scope}, nil
}

// Token returns an access token for the scope.
func (e *entraIDToken) Token(ctx context.Context) (string, error) {
	tok, err := e.cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{e.scope}})
	if err != nil {
		return "", fmt.Errorf("sasl: %s: get a token for scope %s with the agent's Azure credentials: %w", spec.SASLAzureEntraID, e.scope, err)
	}
	return tok.Token, nil
}

// googleCloudPlatformScope is the OAuth scope of the Google tokens, the
// one Google's own Kafka login handler asks for.
const googleCloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"

// googleKafkaHeader is the header of the token Managed Service for Apache
// Kafka accepts, as Google's login handler writes it.
const googleKafkaHeader = `{"typ":"JWT","alg":"GOOG_OAUTH2_TOKEN"}`

// googleKafkaClaims are the claims of that token, in the order Google's
// login handler writes them: the access token's expiry and the time of
// issue in seconds since 1970, the scope "kafka" and the principal.
type googleKafkaClaims struct {
	Exp   int64  `json:"exp"`
	Iat   int64  `json:"iat"`
	Scope string `json:"scope"`
	Sub   string `json:"sub"`
}

// googleKafkaToken wraps a Google OAuth access token into the
// header.claims.token form Managed Service for Apache Kafka reads from
// OAUTHBEARER: each part JSON or text in unpadded base64url, the access
// token where a JWT has its signature.
func googleKafkaToken(tok *oauth2.Token, principal string, now time.Time) (string, error) {
	if tok.Expiry.IsZero() {
		return "", errors.New("the Google access token has no expiry")
	}
	claims, err := json.Marshal(googleKafkaClaims{Exp: tok.Expiry.Unix(), Iat: now.Unix(), Scope: "kafka", Sub: principal})
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(googleKafkaHeader)) + "." + enc.EncodeToString(claims) + "." +
		enc.EncodeToString([]byte(tok.AccessToken)), nil
}

// googleToken gives the tokens of GCP_MANAGED_KAFKA_IAM from the agent's
// application default credentials, whose token source keeps each access
// token until shortly before it expires.
type googleToken struct {
	creds *google.Credentials
	now   func() time.Time

	// mu guards principal, found at the first token.
	mu        sync.Mutex
	principal string
}

// newGoogleToken finds the agent's application default credentials:
// GOOGLE_APPLICATION_CREDENTIALS, gcloud's application default
// credentials file, or the metadata server of Google's compute services.
// Its token requests give up after 30 seconds: the token source keeps the
// context it was made with, not the authentication's.
func newGoogleToken(ctx context.Context) (*googleToken, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, &http.Client{Timeout: 30 * time.Second})
	creds, err := google.FindDefaultCredentials(ctx, googleCloudPlatformScope)
	if err != nil {
		return nil, fmt.Errorf("sasl: %s: find the agent's Google application default credentials: %w", spec.SASLGCPIAM, err)
	}
	return &googleToken{creds: creds, now: time.Now}, nil
}

// Token returns the access token wrapped as Managed Service for Apache
// Kafka reads it.
func (g *googleToken) Token(ctx context.Context) (string, error) {
	tok, err := g.creds.TokenSource.Token()
	if err != nil {
		return "", fmt.Errorf("sasl: %s: get a token with the agent's Google application default credentials: %w", spec.SASLGCPIAM, err)
	}
	principal, err := g.principalOf(ctx, tok)
	if err != nil {
		return "", fmt.Errorf("sasl: %s: %w", spec.SASLGCPIAM, err)
	}
	kt, err := googleKafkaToken(tok, principal, g.now())
	if err != nil {
		return "", fmt.Errorf("sasl: %s: %w", spec.SASLGCPIAM, err)
	}
	return kt, nil
}

// principalOf returns the e-mail address of the principal of the
// credentials, the token's subject, as Google's login handler finds it: a
// service account key's client_email, the service account an
// impersonating or workload-identity-federation configuration names, the
// default service account of the metadata server, or, for a user's own
// gcloud login, the e-mail address in the ID token that came with tok.
func (g *googleToken) principalOf(ctx context.Context, tok *oauth2.Token) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.principal != "" {
		return g.principal, nil
	}
	p, err := googlePrincipal(ctx, g.creds.JSON, tok)
	if err != nil {
		return "", err
	}
	g.principal = p
	return p, nil
}

// googlePrincipal finds the principal of the credentials file
// credsJSON, or of the metadata server when it is empty.
func googlePrincipal(ctx context.Context, credsJSON []byte, tok *oauth2.Token) (string, error) {
	if len(credsJSON) == 0 {
		email, err := metadata.EmailWithContext(ctx, "default")
		if err != nil {
			return "", fmt.Errorf("ask the metadata server for the e-mail address of the default service account: %w", err)
		}
		return email, nil
	}
	var f struct {
		Type             string `json:"type"`
		ClientEmail      string `json:"client_email"`
		ImpersonationURL string `json:"service_account_impersonation_url"`
	}
	if err := json.Unmarshal(credsJSON, &f); err != nil {
		return "", fmt.Errorf("read the application default credentials: %w", err)
	}
	switch {
	case f.ClientEmail != "":
		return f.ClientEmail, nil
	case f.ImpersonationURL != "":
		// ".../projects/-/serviceAccounts/NAME@PROJECT.iam.gserviceaccount.com:generateAccessToken"
		u, err := url.Parse(f.ImpersonationURL)
		if err == nil {
			_, rest, ok := strings.Cut(u.Path, "/serviceAccounts/")
			if email, _, _ := strings.Cut(rest, ":"); ok && email != "" {
				return email, nil
			}
		}
		return "", fmt.Errorf("the service_account_impersonation_url of the application default credentials names no service account")
	}
	if idToken, ok := tok.Extra("id_token").(string); ok {
		if email := idTokenEmail(idToken); email != "" {
			return email, nil
		}
	}
	return "", fmt.Errorf("the application default credentials (type %q) do not name their principal; use a service account "+
		"(the metadata server's, a key, or gcloud auth application-default login --impersonate-service-account)", f.Type)
}

// idTokenEmail returns the email claim of an OpenID Connect ID token, ""
// when it has none. The token came from Google's token endpoint over TLS
// with the access token, so its signature is not checked.
func idTokenEmail(idToken string) string {
	parts := strings.Split(idToken, ".")
	if len(parts) != 3 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return ""
	}
	var claims struct {
		Email string `json:"email"`
	}
	if json.Unmarshal(b, &claims) != nil {
		return ""
	}
	return claims.Email
}
