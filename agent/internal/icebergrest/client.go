// Package icebergrest is a client of the Iceberg REST catalog protocol
// (the REST catalog OpenAPI spec of apache/iceberg), as much of it as the
// Iceberg mirror of a Delta table needs: the catalog's config, namespaces,
// loading and creating a table, and committing updates to it under
// requirements, which is how two writers of one table never both commit
// the same change.
//
// It sits at the end of the mirror's data flow: package mirror builds the
// metadata (package iceberg) and commits it here; nothing here reads a
// table's files.
package icebergrest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/iceberg"
)

// Errors the catalog answers with, wrapped by the client's errors.
var (
	// ErrNotFound: the namespace or the table does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict: a commit's requirements no longer hold (another
	// writer committed first), or the table or namespace exists.
	ErrConflict = errors.New("conflict")
	// ErrUnauthorized: the catalog refused the credentials.
	ErrUnauthorized = errors.New("unauthorized")
)

// Config says how to reach a catalog.
type Config struct {
	// URI is the catalog's base URI, without /v1.
	URI string
	// Warehouse, when set, is sent to the catalog's config endpoint,
	// which may answer with the prefix of the warehouse's paths.
	Warehouse string
	// Token, when set, is sent as a bearer token on every request.
	Token string
	// HTTP is the client to use; http.DefaultClient when nil.
	HTTP *http.Client
}

// Client talks to one Iceberg REST catalog. It is safe for concurrent
// use.
type Client struct {
	cfg  Config
	base string // URI + /v1 + the catalog's prefix
}

// New reads the catalog's config (GET /v1/config) and returns a client
// for it.
func New(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.HTTP == nil {
		cfg.HTTP = http.DefaultClient
	}
	u, err := url.Parse(cfg.URI)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("iceberg REST catalog uri %q is not an http(s) URL", cfg.URI)
	}
	c := &Client{cfg: cfg, base: strings.TrimSuffix(cfg.URI, "/") + "/v1"}
	path := "/config"
	if cfg.Warehouse != "" {
		path += "?warehouse=" + url.QueryEscape(cfg.Warehouse)
	}
	var conf struct {
		Defaults  map[string]string `json:"defaults"`
		Overrides map[string]string `json:"overrides"`
	}
	if err := c.do(ctx, http.MethodGet, path, nil, &conf); err != nil {
		return nil, fmt.Errorf("reading the config of iceberg REST catalog %s: %w", cfg.URI, err)
	}
	prefix := conf.Defaults["prefix"]
	if p, ok := conf.Overrides["prefix"]; ok {
		prefix = p
	}
	if prefix != "" {
		c.base += "/" + strings.Trim(prefix, "/")
	}
	return c, nil
}

// CreateNamespace creates namespace ns; one that exists is not an error.
func (c *Client) CreateNamespace(ctx context.Context, ns []string) error {
	err := c.do(ctx, http.MethodPost, "/namespaces", map[string]any{"namespace": ns, "properties": map[string]string{}}, nil)
	if errors.Is(err, ErrConflict) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating namespace %s: %w", strings.Join(ns, "."), err)
	}
	return nil
}

// CreateTableRequest is what a new table starts with.
type CreateTableRequest struct {
	Name          string                 `json:"name"`
	Location      string                 `json:"location"`
	Schema        *iceberg.Schema        `json:"schema"`
	PartitionSpec *iceberg.PartitionSpec `json:"partition-spec"`
	Properties    map[string]string      `json:"properties"`
}

// tableResult is the catalog's answer to a load, a create or a commit.
type tableResult struct {
	MetadataLocation string                 `json:"metadata-location"`
	Metadata         *iceberg.TableMetadata `json:"metadata"`
}

// CreateTable creates table name in namespace ns and returns its
// metadata; an existing table is an error wrapping [ErrConflict].
func (c *Client) CreateTable(ctx context.Context, ns []string, req CreateTableRequest) (*iceberg.TableMetadata, error) {
	var res tableResult
	if err := c.do(ctx, http.MethodPost, "/namespaces/"+namespacePath(ns)+"/tables", req, &res); err != nil {
		return nil, fmt.Errorf("creating table %s.%s: %w", strings.Join(ns, "."), req.Name, err)
	}
	return res.Metadata, nil
}

// LoadTable returns the metadata of table name in namespace ns; one that
// does not exist is an error wrapping [ErrNotFound].
func (c *Client) LoadTable(ctx context.Context, ns []string, name string) (*iceberg.TableMetadata, error) {
	var res tableResult
	if err := c.do(ctx, http.MethodGet, tablePath(ns, name), nil, &res); err != nil {
		return nil, fmt.Errorf("loading table %s.%s: %w", strings.Join(ns, "."), name, err)
	}
	return res.Metadata, nil
}

// DropTable drops table name in namespace ns from the catalog, keeping
// its files (no purge); one that does not exist is not an error.
func (c *Client) DropTable(ctx context.Context, ns []string, name string) error {
	err := c.do(ctx, http.MethodDelete, tablePath(ns, name)+"?purgeRequested=false", nil, nil)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("dropping table %s.%s: %w", strings.Join(ns, "."), name, err)
	}
	return nil
}

// Requirement is a condition a commit needs to hold on the catalog's
// side (the spec's TableRequirement).
type Requirement map[string]any

// AssertRefSnapshotID requires branch ref to point at snapshot id, or not
// to exist when id is nil.
func AssertRefSnapshotID(ref string, id *int64) Requirement {
	return Requirement{"type": "assert-ref-snapshot-id", "ref": ref, "snapshot-id": id}
}

// AssertCurrentSchemaID requires the table's current schema to be id.
func AssertCurrentSchemaID(id int) Requirement {
	return Requirement{"type": "assert-current-schema-id", "current-schema-id": id}
}

// Update is a change to a table's metadata (the spec's TableUpdate).
type Update map[string]any

// AddSnapshot adds snapshot s.
func AddSnapshot(s iceberg.Snapshot) Update { return Update{"action": "add-snapshot", "snapshot": s} }

// RemoveSnapshots removes the snapshots ids from the table's metadata; the
// files they list stay.
func RemoveSnapshots(ids []int64) Update {
	return Update{"action": "remove-snapshots", "snapshot-ids": ids}
}

// SetMainBranch points branch main at snapshot id.
func SetMainBranch(id int64) Update {
	return Update{"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": id}
}

// AddSchema adds schema s, whose highest field id is lastColumnID.
func AddSchema(s iceberg.Schema, lastColumnID int) Update {
	return Update{"action": "add-schema", "schema": s, "last-column-id": lastColumnID}
}

// SetCurrentSchema makes the schema added last the current one.
func SetCurrentSchema() Update { return Update{"action": "set-current-schema", "schema-id": -1} }

// SetProperties sets table properties.
func SetProperties(p map[string]string) Update {
	return Update{"action": "set-properties", "updates": p}
}

// Commit applies updates to table name in namespace ns if every
// requirement holds, and returns the new metadata. A requirement that no
// longer holds is an error wrapping [ErrConflict]: load the table again
// and start over.
func (c *Client) Commit(ctx context.Context, ns []string, name string, reqs []Requirement, updates []Update) (*iceberg.TableMetadata, error) {
	var res tableResult
	body := map[string]any{"requirements": reqs, "updates": updates}
	if err := c.do(ctx, http.MethodPost, tablePath(ns, name), body, &res); err != nil {
		return nil, fmt.Errorf("committing to table %s.%s: %w", strings.Join(ns, "."), name, err)
	}
	return res.Metadata, nil
}

// do sends a request with body as JSON and decodes the answer into out.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.Token)
	}
	resp, err := c.cfg.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("reading the answer of %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return answerError(resp.StatusCode, data)
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decoding the answer of %s %s: %w", method, path, err)
	}
	return nil
}

// answerError is the error of an answer with HTTP status code status and
// body data (the spec's ErrorModel, when the catalog sends one).
func answerError(status int, data []byte) error {
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	msg := strings.TrimSpace(string(data))
	if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
		msg = e.Error.Type + ": " + e.Error.Message
	}
	if len(msg) > 500 {
		msg = msg[:500] + "..."
	}
	var kind error
	switch status {
	case http.StatusNotFound:
		kind = ErrNotFound
	case http.StatusConflict:
		kind = ErrConflict
	case http.StatusUnauthorized, http.StatusForbidden:
		kind = ErrUnauthorized
	default:
		return fmt.Errorf("the catalog answered HTTP %d: %s", status, msg)
	}
	return fmt.Errorf("%w: the catalog answered HTTP %d: %s", kind, status, msg)
}

// namespacePath is namespace ns in a request path: its levels joined by
// the unit separator, escaped.
func namespacePath(ns []string) string { return url.PathEscape(strings.Join(ns, "\x1f")) }

// tablePath is the request path of table name in namespace ns.
func tablePath(ns []string, name string) string {
	return "/namespaces/" + namespacePath(ns) + "/tables/" + url.PathEscape(name)
}
