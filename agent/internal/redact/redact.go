// Package redact scrubs secret values out of text the agent shows: error
// messages in API answers, pipeline status and log lines.
//
// A [Redactor] learns the secrets to scrub (the agent feeds it every secret
// of every stored connection, see [spec.Connection.SecretFields]) and
// replaces each occurrence with [Placeholder]. It is the last line of
// defence: code should not put a secret into an error in the first place,
// but a library error may echo a credential it was given (a URL with a
// password, a SASL exchange), and the redactor catches that.
package redact

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Placeholder is what every occurrence of a secret is replaced with.
const Placeholder = "[redacted]"

// MinLen is the length, in bytes, below which a secret is not scrubbed:
// replacing every "ab" or "x1" in every message would mangle the text and
// tell a reader the secret anyway, and a secret that short is no secret.
const MinLen = 4

// Redactor replaces known secret values in text with [Placeholder]. The
// zero value is not usable; call [New]. A nil *Redactor scrubs nothing.
// It is safe for concurrent use: [Redactor.String] takes no lock.
type Redactor struct {
	mu    sync.Mutex // serialises Add
	known map[string]struct{}
	// replacer scrubs every form of every known secret; nil until the
	// first secret is added.
	replacer atomic.Pointer[strings.Replacer]
}

// New returns a Redactor that knows no secret yet.
func New() *Redactor {
	return &Redactor{known: map[string]struct{}{}}
}

// Add makes r scrub values from now on; values shorter than [MinLen] are
// ignored. Secrets are never forgotten: an error recorded before a
// connection's password changed may still carry the old password, so r
// keeps scrubbing it for the life of the process.
//
// Besides each value as it is, r scrubs the forms it takes when an error
// quotes it: escaped as by %q and by JSON, and URL-encoded.
func (r *Redactor) Add(values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	added := false
	for _, v := range values {
		if len(v) < MinLen {
			continue
		}
		for _, form := range forms(v) {
			if _, ok := r.known[form]; !ok {
				r.known[form] = struct{}{}
				added = true
			}
		}
	}
	if !added {
		return
	}
	secrets := make([]string, 0, len(r.known))
	for s := range r.known {
		secrets = append(secrets, s)
	}
	// strings.Replacer tries the old strings in argument order at each
	// position, so the longest go first: a secret that starts with another
	// one is scrubbed whole, not leaving its tail behind.
	slices.SortFunc(secrets, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	pairs := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		pairs = append(pairs, s, Placeholder)
	}
	r.replacer.Store(strings.NewReplacer(pairs...))
}

// forms returns v and the other forms an error message may show it in.
func forms(v string) []string {
	out := []string{v}
	add := func(f string) {
		if len(f) >= MinLen && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if q := strconv.Quote(v); len(q) >= 2 {
		add(q[1 : len(q)-1])
	}
	if j, err := json.Marshal(v); err == nil && len(j) >= 2 {
		add(string(j[1 : len(j)-1]))
	}
	add(url.QueryEscape(v))
	add(url.PathEscape(v))
	return out
}

// String returns s with every known secret replaced by [Placeholder].
func (r *Redactor) String(s string) string {
	if !r.active() || s == "" {
		return s
	}
	return r.replacer.Load().Replace(s)
}

// active reports whether r knows any secret to scrub.
func (r *Redactor) active() bool {
	return r != nil && r.replacer.Load() != nil
}
