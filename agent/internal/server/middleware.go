package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// MinTokenLength is the shortest API token the server accepts, in bytes:
// 32 random hex characters carry 128 bits.
const MinTokenLength = 32

// tokenSet is the set of accepted API tokens, by their SHA-256 hashes: the
// server never keeps a token itself.
type tokenSet []tokenHash

// tokenHash is one accepted token's SHA-256 hash.
type tokenHash [sha256.Size]byte

// fingerprint is the hash's start in hex (see [TokenFingerprint]).
func (h *tokenHash) fingerprint() string { return hex.EncodeToString(h[:4]) }

// TokenFingerprint names token in logs without revealing it: the first 8
// hex characters of its SHA-256 hash. The request log carries the
// fingerprint of the token each request used.
func TokenFingerprint(token string) string {
	h := tokenHash(sha256.Sum256([]byte(token)))
	return h.fingerprint()
}

// newTokenSet hashes tokens, refusing an empty list and any token shorter
// than MinTokenLength. The error names the token by its position only.
func newTokenSet(tokens []string) (tokenSet, error) {
	if len(tokens) == 0 {
		return nil, errors.New("no API token given")
	}
	set := make(tokenSet, len(tokens))
	for i, t := range tokens {
		if len(t) < MinTokenLength {
			return nil, fmt.Errorf("API token %d of %d is %d bytes long, shorter than the minimum of %d: "+
				"use a random secret, e.g. made with `openssl rand -hex 32`", i+1, len(tokens), len(t), MinTokenLength)
		}
		set[i] = sha256.Sum256([]byte(t))
	}
	return set, nil
}

// match returns the hash of the accepted token equal to token, or nil.
// Every hash is compared, in constant time, whatever matches.
func (set tokenSet) match(token string) *tokenHash {
	got := tokenHash(sha256.Sum256([]byte(token)))
	var found *tokenHash
	for i := range set {
		if subtle.ConstantTimeCompare(got[:], set[i][:]) == 1 {
			found = &set[i]
		}
	}
	return found
}

// SetTokens replaces the accepted API tokens, for a rotation without
// downtime: requests carrying any of tokens are accepted from now on, and
// the previous tokens are not. It refuses, keeping the previous tokens, an
// empty list or a token shorter than MinTokenLength; a server in insecure
// mode (no tokens) refuses any change.
func (s *Server) SetTokens(tokens []string) error {
	if s.tokens.Load() == nil {
		return errors.New("the server runs without a token (InsecureNoAuth); it cannot start requiring one")
	}
	set, err := newTokenSet(tokens)
	if err != nil {
		return err
	}
	s.tokens.Store(&set)
	return nil
}

// authenticate reports whether r may go on to its handler: it carries one
// of the server's bearer tokens, or the server runs without any. A request
// that may not is answered 401 here, before anything reads its body, and
// its connection is closed at once: whatever body an unauthenticated
// client is still sending is not waited for.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) bool {
	set := s.tokens.Load()
	if set == nil {
		return true
	}
	header := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(header, " ")
	if ok && strings.EqualFold(scheme, "Bearer") {
		if h := set.match(strings.TrimSpace(token)); h != nil {
			if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
				info.token = h.fingerprint()
			}
			return true
		}
	}
	w.Header().Set("Connection", "close")
	// A past read deadline makes the server's drain of the unread body
	// fail at once, and so close the connection after the answer.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	w.Header().Set("WWW-Authenticate", `Bearer realm="tributary-agent"`)
	msg := "send the agent's token as \"Authorization: Bearer <token>\" (the provider's token attribute or TRIBUTARY_TOKEN)"
	if header != "" {
		msg = "the token was rejected: use one of the tokens in the agent's --token-file (or its TRIBUTARY_TOKEN)"
	}
	s.writeError(w, r, problemf(http.StatusUnauthorized, "%s", msg))
	return false
}

// requestInfo is what the handlers tell the request log about a request.
type requestInfo struct {
	// token is the fingerprint of the token the request carried, once
	// authenticated.
	token string
}

// requestInfoKey is the context key of a request's *requestInfo.
type requestInfoKey struct{}

// logRequests logs one line per request: method, path, status, duration
// and the fingerprint of the token used (see [TokenFingerprint]).
// Bodies and headers are never logged: they carry secrets and the token.
// Successful reads (health checks, status polls, metrics scrapes) log at
// debug level, as they are polled; changes and failures log at info.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{}
		ctx := context.WithValue(r.Context(), requestInfoKey{}, info)
		r = r.WithContext(ctx)
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		level := slog.LevelInfo
		if r.Method == http.MethodGet && rec.status < 300 {
			level = slog.LevelDebug
		}
		attrs := []slog.Attr{
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", rec.status),
			slog.Duration("duration", time.Since(start)),
		}
		if info.token != "" {
			attrs = append(attrs, slog.String("token_sha256", info.token))
		}
		s.log.LogAttrs(ctx, level, "request", attrs...)
	})
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

// WriteHeader records status and passes it on.
func (r *statusRecorder) WriteHeader(status int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = status, true
	}
	r.ResponseWriter.WriteHeader(status)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
