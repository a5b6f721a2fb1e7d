package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// This file is the OAUTHBEARER mechanism (RFC 7628) and the sources of its
// tokens: the OAuth 2.0 client-credentials grant (RFC 6749 section 4.4),
// a static token, or a token file.

// tokenSource gives the bearer token for the next authentication.
type tokenSource interface {
	Token(ctx context.Context) (string, error)
}

// newTokenSource returns the token source o describes (a valid spec.OAuth
// has exactly one).
func newTokenSource(o *spec.OAuth) (tokenSource, error) {
	switch {
	case o == nil:
		return nil, errors.New("sasl.oauth: OAUTHBEARER needs an oauth block")
	case o.TokenEndpointURL != "":
		return &clientCredentials{endpoint: o.TokenEndpointURL, clientID: o.ClientID, clientSecret: o.ClientSecret, scope: o.Scope,
			http: &http.Client{Timeout: 30 * time.Second}, now: time.Now}, nil
	case o.Token != "":
		return staticToken(o.Token), nil
	case o.TokenFile != "":
		return tokenFile(o.TokenFile), nil
	}
	return nil, errors.New("sasl.oauth: set token_endpoint_url, client_id and client_secret, or token, or token_file")
}

// staticToken is a token given in the spec.
type staticToken string

// Token returns the token.
func (t staticToken) Token(context.Context) (string, error) { return string(t), nil }

// tokenFile is the path of a file that holds the token, read again for
// each authentication so that whatever renews the file is picked up.
type tokenFile string

// Token reads the file; surrounding white space is dropped.
func (f tokenFile) Token(context.Context) (string, error) {
	b, err := os.ReadFile(string(f))
	if err != nil {
		return "", fmt.Errorf("sasl.oauth.token_file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("sasl.oauth.token_file: %s is empty", f)
	}
	return tok, nil
}

// refreshAt is the part of a token's lifetime after which
// clientCredentials asks for a new one.
const refreshAt = 0.8

// clientCredentials gets tokens with the client-credentials grant and
// keeps each until refreshAt of its lifetime has passed. A token without
// expires_in is not kept. When a refresh fails while the kept token is
// still valid, that token is used. Its errors name the endpoint and the
// status, never the secret.
type clientCredentials struct {
	endpoint, clientID, clientSecret, scope string
	http                                    *http.Client
	now                                     func() time.Time

	// mu is held while a token is requested: concurrent authentications
	// wait for one answer.
	mu      sync.Mutex
	token   string
	refresh time.Time // when to ask for a new token
	expires time.Time // when token stops being valid
}

// tokenResponse is the part of a token endpoint's answer the agent reads:
// the token, its lifetime, and an error's code and description.
type tokenResponse struct {
	AccessToken      string  `json:"access_token"`
	ExpiresIn        float64 `json:"expires_in"`
	Error            string  `json:"error"`
	ErrorDescription string  `json:"error_description"`
}

// Token returns the kept token, or a new one once it is due for refresh.
func (cc *clientCredentials) Token(ctx context.Context) (string, error) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	now := cc.now()
	if cc.token != "" && now.Before(cc.refresh) {
		return cc.token, nil
	}
	tok, lifetime, err := cc.request(ctx)
	if err != nil {
		if cc.token != "" && now.Before(cc.expires) {
			return cc.token, nil // still valid: try again at the next authentication
		}
		return "", err
	}
	cc.token, cc.refresh, cc.expires = "", now, now
	if lifetime > 0 {
		cc.token = tok
		cc.refresh = now.Add(time.Duration(float64(lifetime) * refreshAt))
		cc.expires = now.Add(lifetime)
	}
	return tok, nil
}

// request asks the endpoint for a token; it returns the token and its
// lifetime (0 when the answer does not say).
func (cc *clientCredentials) request(ctx context.Context) (string, time.Duration, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if cc.scope != "" {
		form.Set("scope", cc.scope)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cc.endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, fmt.Errorf("OAuth token endpoint %s: %w", cc.endpoint, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// RFC 6749 section 2.3.1: the client id and secret are form-encoded
	// before they go into HTTP Basic credentials.
	req.SetBasicAuth(url.QueryEscape(cc.clientID), url.QueryEscape(cc.clientSecret))
	res, err := cc.http.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("OAuth token endpoint %s: %w", cc.endpoint, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return "", 0, fmt.Errorf("OAuth token endpoint %s: read the answer: %w", cc.endpoint, err)
	}
	var tr tokenResponse
	jsonErr := json.Unmarshal(body, &tr)
	switch {
	case res.StatusCode != http.StatusOK:
		detail := tr.Error
		if tr.ErrorDescription != "" {
			detail += ": " + tr.ErrorDescription
		}
		if jsonErr != nil || detail == "" {
			detail = strings.TrimSpace(string(body[:min(len(body), 200)]))
		}
		if cc.clientSecret != "" {
			detail = strings.ReplaceAll(detail, cc.clientSecret, "***")
		}
		return "", 0, fmt.Errorf("OAuth token endpoint %s answered %s (check sasl.oauth.client_id, client_secret and scope): %s",
			cc.endpoint, res.Status, detail)
	case jsonErr != nil:
		return "", 0, fmt.Errorf("OAuth token endpoint %s: the answer is not JSON: %w", cc.endpoint, jsonErr)
	case tr.AccessToken == "":
		return "", 0, fmt.Errorf("OAuth token endpoint %s: the answer has no access_token", cc.endpoint)
	}
	return tr.AccessToken, time.Duration(tr.ExpiresIn * float64(time.Second)), nil
}

// oauthBearer is the OAUTHBEARER SASL mechanism of RFC 7628, with tokens
// from src.
type oauthBearer struct {
	src tokenSource
}

// Name returns "OAUTHBEARER".
func (m *oauthBearer) Name() string { return spec.SASLOAuthBearer }

// Start gets a token and returns the client's first message.
func (m *oauthBearer) Start(ctx context.Context) (sasl.StateMachine, []byte, error) {
	tok, err := m.src.Token(ctx)
	if err != nil {
		return nil, nil, err
	}
	if strings.ContainsAny(tok, "\x01 \t\r\n") {
		return nil, nil, errors.New("the OAuth token holds white space or control characters")
	}
	return &oauthSession{}, oauthFirstMessage(tok), nil
}

// oauthFirstMessage is RFC 7628's client first message for tok: no
// authorization identity, the token in the auth key.
func oauthFirstMessage(tok string) []byte {
	return []byte("n,,\x01auth=Bearer " + tok + "\x01\x01")
}

// oauthSession is one OAUTHBEARER exchange.
type oauthSession struct {
	failed bool
}

// Next ends the exchange when the broker accepted the token (an empty
// answer). A refusal comes as a JSON error challenge, which RFC 7628 has
// the client acknowledge with a single 0x01, after which the broker
// answers with the authentication error; a second challenge is an error.
func (s *oauthSession) Next(_ context.Context, challenge []byte) (bool, []byte, error) {
	switch {
	case len(challenge) == 0:
		return true, nil, nil
	case !s.failed:
		s.failed = true
		return false, []byte{0x01}, nil
	}
	return false, nil, fmt.Errorf("%w: %s", kafkago.SASLAuthenticationFailed, challenge)
}
