// Package registry is the agent's client of a Confluent-compatible schema
// registry, and the parsers of the registry's wire framing.
//
// A Client fetches schemas over the registry's REST API (franz-go's sr
// package speaks the HTTP). A schema id names one schema forever, so
// SchemaByID caches every schema it fetches for the life of the Client, and
// concurrent callers asking for the same id share one request: a partition's
// worth of records written with a new schema costs one fetch. Latest is not
// cached unless WithLatestTTL says for how long; Version and References are
// not cached.
//
// Errors say what was asked and of which registry, and are classified with
// sentinels for errors.Is: ErrNotFound (an unknown id, subject or version),
// ErrRefused (the registry refused the credentials) and ErrUnavailable
// (the registry could not be reached or failed; worth retrying). The API
// secret never appears in an error.
//
// A record framed for the registry starts with a magic byte 0 and the
// schema id as a 4-byte big-endian integer (ParseHeader). A Protobuf
// payload then carries the message indexes, the path to the record's
// message type among the schema's nested types, before the serialized
// message (ParseMessageIndexes).
package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"golang.org/x/sync/singleflight"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// ErrNotFound is wrapped by errors for an unknown schema id, subject or
// version (HTTP 404 with the registry's error code 40401, 40402 or 40403).
var ErrNotFound = errors.New("not found")

// ErrRefused is wrapped by errors for a registry that refused the request's
// credentials (HTTP 401 or 403).
var ErrRefused = errors.New("the registry refused the API key")

// ErrUnavailable is wrapped by errors for a registry that could not be
// reached or did not answer as a registry does (transport failures,
// timeouts, an answer that is not JSON, HTTP 429, 5xx and any other status
// but its refusals and "not found"); the request is worth retrying later.
var ErrUnavailable = errors.New("registry unavailable")

// defaultTimeout bounds each request to the registry.
const defaultTimeout = 30 * time.Second

// maxMessage bounds how much of a registry's error message goes into an
// error: a proxy in front of it may answer with a whole HTML page.
const maxMessage = 200

// Config is how to reach one registry.
type Config struct {
	// URL is the registry's base URL, such as https://registry:8081; it
	// must not carry credentials.
	URL string
	// APIKey and APISecret, when APIKey is set, are sent as HTTP Basic
	// credentials key:secret.
	APIKey    string
	APISecret string
	// CAPEM holds the PEM certificates of the CAs trusted to sign an https
	// registry's certificate (see [spec.CertPool]); empty means the
	// system's roots.
	CAPEM string
}

// Option changes a Client from its defaults.
type Option func(*options)

// options are the settings Options change.
type options struct {
	timeout   time.Duration
	latestTTL time.Duration
}

// WithTimeout bounds each request to the registry; the default is 30s.
func WithTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
}

// WithLatestTTL makes Latest answer from a cache of each subject's latest
// schema for d after fetching it; the default, 0, fetches every time.
func WithLatestTTL(d time.Duration) Option {
	return func(o *options) { o.latestTTL = d }
}

// Schema types, as the registry names them in Schema.Type.
const (
	TypeAvro     = "AVRO"
	TypeProtobuf = "PROTOBUF"
	TypeJSON     = "JSON"
)

// Schema is one registered schema.
type Schema struct {
	// ID is the registry's id of the schema.
	ID int
	// Subject and Version are where the schema is registered; SchemaByID
	// leaves them empty, as one id may be registered under many subjects.
	Subject string
	Version int
	// Type is [TypeAvro] (also when the registry leaves it out),
	// [TypeProtobuf] or [TypeJSON].
	Type string
	// Text is the schema itself.
	Text string
	// References are the schemas this one imports.
	References []Reference
}

// Reference names another registered schema that a schema imports: Name is
// how the schema refers to it (a Protobuf import path, an Avro full name, a
// JSON Schema $ref), Subject and Version are where it is registered.
type Reference struct {
	Name    string
	Subject string
	Version int
}

// Client fetches schemas from one registry. It is safe for concurrent use.
type Client struct {
	sr        *sr.Client
	url       string
	hasKey    bool
	latestTTL time.Duration
	fetches   singleflight.Group

	mu     sync.RWMutex
	byID   map[int]Schema
	latest map[string]latestEntry
	// unknown holds, for a while, the ids the registry did not know, so
	// that a stream of records with made-up ids does not become a stream
	// of requests.
	unknown map[int]time.Time
}

// Bounds of the memory of ids the registry did not know.
const (
	// unknownFor is how long SchemaByID answers ErrNotFound for an id
	// without asking again: a registry replica that lags behind a new
	// registration knows it by then.
	unknownFor = 30 * time.Second
	// maxUnknown is how many such ids are kept; past it they are all
	// forgotten.
	maxUnknown = 4096
)

// latestEntry is a cached answer of Latest.
type latestEntry struct {
	schema  Schema
	fetched time.Time
}

// New returns a Client of the registry cfg names.
func New(cfg Config, opts ...Option) (*Client, error) {
	o := options{timeout: defaultTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	u, err := url.Parse(cfg.URL)
	switch {
	case err != nil:
		// The parse error quotes the url, which may hold a secret.
		return nil, errors.New("schema registry url does not parse")
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return nil, fmt.Errorf("schema registry url %q: want http:// or https:// and a host", u.Redacted())
	case u.User != nil:
		return nil, fmt.Errorf("schema registry url %q: credentials go in the API key and secret, not the url", u.Redacted())
	}
	httpClient := &http.Client{Timeout: o.timeout}
	if cfg.CAPEM != "" {
		pool, err := spec.CertPool(cfg.CAPEM)
		if err != nil {
			return nil, fmt.Errorf("schema registry %s: ca_pem: %w", u.Redacted(), err)
		}
		transport := http.DefaultTransport.(*http.Transport).Clone()
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		httpClient.Transport = transport
	}
	srOpts := []sr.ClientOpt{
		sr.URLs(cfg.URL),
		sr.HTTPClient(httpClient),
		sr.UserAgent("tributary-agent"),
	}
	if cfg.APIKey != "" {
		srOpts = append(srOpts, sr.BasicAuth(cfg.APIKey, cfg.APISecret))
	}
	cl, err := sr.NewClient(srOpts...)
	if err != nil {
		return nil, fmt.Errorf("schema registry %s: %w", cfg.URL, err)
	}
	return &Client{
		sr:        cl,
		url:       cfg.URL,
		hasKey:    cfg.APIKey != "",
		latestTTL: o.latestTTL,
		byID:      map[int]Schema{},
		latest:    map[string]latestEntry{},
		unknown:   map[int]time.Time{},
	}, nil
}

// SchemaByID returns the schema with the registry id id. Each id is fetched
// once and cached for the life of the Client; callers asking for an id being
// fetched wait for that fetch, or until their ctx is done.
func (c *Client) SchemaByID(ctx context.Context, id int) (Schema, error) {
	if s, ok := c.cached(id); ok {
		return s, nil
	}
	if c.knownUnknown(id) {
		return Schema{}, fmt.Errorf("schema id %d from %s: %w (asked less than %s ago)", id, c.url, ErrNotFound, unknownFor)
	}
	// The fetch is shared, so one caller giving up must not cancel it
	// for the others; the request timeout bounds it.
	fetch := context.WithoutCancel(ctx)
	ch := c.fetches.DoChan(strconv.Itoa(id), func() (any, error) {
		// A fetch that ended since the look above has cached the id.
		if s, ok := c.cached(id); ok {
			return s, nil
		}
		got, err := c.sr.SchemaByID(fetch, id)
		if err != nil {
			err = c.classify(fetch, err)
			if errors.Is(err, ErrNotFound) {
				c.mu.Lock()
				if len(c.unknown) >= maxUnknown {
					clear(c.unknown)
				}
				c.unknown[id] = time.Now().Add(unknownFor)
				c.mu.Unlock()
			}
			return nil, err
		}
		s := convert(sr.SubjectSchema{ID: id, Schema: got})
		c.mu.Lock()
		c.byID[id] = s
		c.mu.Unlock()
		return s, nil
	})
	select {
	case <-ctx.Done():
		return Schema{}, fmt.Errorf("schema id %d from %s: %w", id, c.url, ctx.Err())
	case r := <-ch:
		if r.Err != nil {
			return Schema{}, fmt.Errorf("schema id %d from %s: %w", id, c.url, r.Err)
		}
		return r.Val.(Schema), nil
	}
}

// knownUnknown reports whether the registry did not know id a moment ago.
func (c *Client) knownUnknown(id int) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	until, ok := c.unknown[id]
	return ok && time.Now().Before(until)
}

// cached returns the schema with id id if SchemaByID fetched it before.
func (c *Client) cached(id int) (Schema, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	s, ok := c.byID[id]
	return s, ok
}

// Latest returns the latest version of subject's schema, fetched anew
// unless WithLatestTTL allows a recent answer.
func (c *Client) Latest(ctx context.Context, subject string) (Schema, error) {
	if c.latestTTL > 0 {
		c.mu.RLock()
		e, ok := c.latest[subject]
		c.mu.RUnlock()
		if ok && time.Since(e.fetched) < c.latestTTL {
			return e.schema, nil
		}
	}
	got, err := c.sr.SchemaByVersion(ctx, subject, -1)
	if err != nil {
		return Schema{}, fmt.Errorf("latest schema of subject %q from %s: %w", subject, c.url, c.classify(ctx, err))
	}
	s := convert(got)
	if c.latestTTL > 0 {
		c.mu.Lock()
		c.latest[subject] = latestEntry{schema: s, fetched: time.Now()}
		c.mu.Unlock()
	}
	return s, nil
}

// Version returns version version of subject's schema.
func (c *Client) Version(ctx context.Context, subject string, version int) (Schema, error) {
	got, err := c.sr.SchemaByVersion(ctx, subject, version)
	if err != nil {
		return Schema{}, fmt.Errorf("schema version %d of subject %q from %s: %w", version, subject, c.url, c.classify(ctx, err))
	}
	return convert(got), nil
}

// References returns the text of every schema s imports, directly or
// through the schemas it imports, by reference name. Each subject version is
// fetched once, however many schemas import it; the first name given to a
// reference wins.
func (c *Client) References(ctx context.Context, s Schema) (map[string]string, error) {
	texts := map[string]string{}
	fetched := map[Reference]Schema{}
	var walk func(refs []Reference) error
	walk = func(refs []Reference) error {
		for _, ref := range refs {
			if _, ok := texts[ref.Name]; ok {
				continue
			}
			at := Reference{Subject: ref.Subject, Version: ref.Version}
			got, ok := fetched[at]
			if !ok {
				var err error
				if got, err = c.Version(ctx, ref.Subject, ref.Version); err != nil {
					return fmt.Errorf("reference %q: %w", ref.Name, err)
				}
				fetched[at] = got
			}
			texts[ref.Name] = got.Text
			if err := walk(got.References); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(s.References); err != nil {
		return nil, err
	}
	return texts, nil
}

// classify wraps err, from a request made with ctx, in the sentinel that
// says what went wrong. Only the registry's own "not found" answers (a 404
// with error code 40401, 40402 or 40403) are ErrNotFound: a 404 from
// something else, a proxy in front of a registry being deployed, say, is
// ErrUnavailable, as is every answer that is not the registry's refusal,
// since it says nothing about the schema asked for. It never includes the
// request's credentials: sr's errors carry the URL, which New made sure has
// none, and the response of a refusal is left out.
func (c *Client) classify(ctx context.Context, err error) error {
	var re *sr.ResponseError
	switch {
	case errors.As(err, &re):
		switch {
		case re.StatusCode == http.StatusUnauthorized || re.StatusCode == http.StatusForbidden:
			if !c.hasKey {
				return fmt.Errorf("%w (HTTP %d): no API key is configured", ErrRefused, re.StatusCode)
			}
			return fmt.Errorf("%w (HTTP %d): check the API key and secret", ErrRefused, re.StatusCode)
		case re.StatusCode == http.StatusNotFound && re.ErrorCode >= 40401 && re.ErrorCode <= 40403:
			return fmt.Errorf("%w (registry error %d: %s)", ErrNotFound, re.ErrorCode, message(re))
		case re.StatusCode == http.StatusNotFound:
			return fmt.Errorf("%w: HTTP 404 without a registry error code (is the URL the registry's?): %s", ErrUnavailable, message(re))
		default:
			return fmt.Errorf("%w: HTTP %d: %s", ErrUnavailable, re.StatusCode, message(re))
		}
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.As(err, new(x509.UnknownAuthorityError)):
		return fmt.Errorf("%w: the registry's certificate is not signed by a trusted CA (set schema_registry.ca_pem to the CA that signed it): %w",
			ErrUnavailable, err)
	default:
		// A failed connection, a reset or timeout while reading the
		// answer, an answer that is not JSON.
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
}

// message returns the registry's message of re, cut to maxMessage bytes.
func message(re *sr.ResponseError) string {
	m := re.Error()
	if len(m) > maxMessage {
		m = m[:maxMessage] + "..."
	}
	return m
}

// convert returns our Schema of sr's.
func convert(s sr.SubjectSchema) Schema {
	out := Schema{ID: s.ID, Subject: s.Subject, Version: s.Version, Type: s.Type.String(), Text: s.Schema.Schema}
	for _, r := range s.References {
		out.References = append(out.References, Reference{Name: r.Name, Subject: r.Subject, Version: r.Version})
	}
	return out
}
