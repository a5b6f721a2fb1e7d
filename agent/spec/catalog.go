package spec

import (
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Catalogs: where engines find a pipeline's tables by name.

// Values of catalog.on_delete.
const (
	// OnDeleteKeep leaves a table's registrations in the catalogs when the
	// table leaves its pipeline or the catalog is deleted, as its files are
	// kept.
	OnDeleteKeep = "KEEP"
	// OnDeleteDropRegistration drops them (the files stay): the Iceberg
	// table without purging, and the metastore table without its data.
	OnDeleteDropRegistration = "DROP_REGISTRATION"
)

// OnDeletes lists the accepted on_delete values.
var OnDeletes = []string{OnDeleteKeep, OnDeleteDropRegistration}

// Catalog names the catalogs that the tables of destination_catalog Name
// are registered in: every table of a pipeline or fanout schema whose
// destination_catalog is Name, as "<destination_schema>.<table>".
type Catalog struct {
	// Name is the destination_catalog whose tables are registered.
	Name string `json:"name"`
	// IcebergREST, when set, mirrors every table as an Iceberg table in
	// an Iceberg REST catalog.
	IcebergREST *IcebergREST `json:"iceberg_rest,omitempty"`
	// HiveMetastore, when set, registers every table as an external Delta
	// table in a Hive Metastore.
	HiveMetastore *HiveMetastore `json:"hive_metastore,omitempty"`
	// OnDelete is what happens to a table's registrations when it leaves
	// its pipeline or the catalog is deleted: [OnDeleteKeep] (the default)
	// or [OnDeleteDropRegistration].
	OnDelete string `json:"on_delete,omitempty"`
	// SecretsSet lists, in the API's answers only, the paths of the
	// secrets that are set (see [Catalog.Redacted]).
	SecretsSet []string `json:"secrets_set,omitempty"`
}

// IcebergREST is an Iceberg REST catalog.
type IcebergREST struct {
	// URI is the catalog's base URI, http or https, without /v1.
	URI string `json:"uri"`
	// Warehouse is sent to the catalog's config endpoint; empty sends
	// none.
	Warehouse string `json:"warehouse,omitempty"`
	// Token is sent as a bearer token; write-only.
	Token string `json:"token,omitempty"`
}

// HiveMetastore is a Hive Metastore's Thrift endpoint.
type HiveMetastore struct {
	// URI is "thrift://host:port".
	URI string `json:"uri"`
}

// DropsRegistrations reports whether the tables' registrations go when
// they leave the catalog.
func (c *Catalog) DropsRegistrations() bool { return c.OnDelete == OnDeleteDropRegistration }

// SecretFields returns every secret field of c that its blocks can hold,
// set or not (see [Connection.SecretFields]).
func (c *Catalog) SecretFields() []SecretField {
	if c.IcebergREST == nil {
		return nil
	}
	return []SecretField{{"iceberg_rest.token", &c.IcebergREST.Token}}
}

// Redacted returns a deep copy of c without its secrets, as the agent's
// API shows it (see [Connection.Redacted]).
func (c *Catalog) Redacted() *Catalog {
	out := *c
	out.SecretsSet = nil
	if c.IcebergREST != nil {
		r := *c.IcebergREST
		out.IcebergREST = &r
	}
	if c.HiveMetastore != nil {
		h := *c.HiveMetastore
		out.HiveMetastore = &h
	}
	for _, f := range out.SecretFields() {
		if *f.Value != "" {
			out.SecretsSet = append(out.SecretsSet, f.Path)
			*f.Value = ""
		}
	}
	return &out
}

// Normalize sets the defaults of what c leaves out.
func (c *Catalog) Normalize() {
	if c.OnDelete == "" {
		c.OnDelete = OnDeleteKeep
	}
}

// Validate returns every problem with c.
func (c *Catalog) Validate() Errors {
	col := newCollector()
	if !ValidIdentifier(c.Name) {
		col.add("name", "%q is not a valid catalog name: it is the destination_catalog of the tables it registers, "+
			"a letter or '_' followed by letters, digits or '_' (at most 255)", c.Name)
	}
	if c.IcebergREST == nil && c.HiveMetastore == nil {
		col.add("", "a catalog needs iceberg_rest, hive_metastore or both: where the tables are registered")
	}
	if r := c.IcebergREST; r != nil {
		validateHTTPURI(col.at("iceberg_rest"), "uri", r.URI, "the catalog's URI", "http://iceberg-rest:8181", "set token instead")
		if strings.ContainsAny(r.Token, "\r\n") {
			col.at("iceberg_rest").add("token", "the token must not contain line breaks (it is sent in an HTTP header)")
		}
	}
	if h := c.HiveMetastore; h != nil {
		validateThriftURI(col.at("hive_metastore"), "uri", h.URI)
	}
	if c.OnDelete != "" && !slices.Contains(OnDeletes, c.OnDelete) {
		col.add("on_delete", "%q is not one of %s", c.OnDelete, strings.Join(OnDeletes, ", "))
	}
	return *col.errs
}

// validateHTTPURI checks attr, what (as "the registry URL"), the base URL
// v of an HTTP service, of which example is one; credentials says where
// credentials go instead of the URL.
func validateHTTPURI(col collector, attr, v, what, example, credentials string) {
	u, err := url.Parse(v)
	switch {
	case v == "":
		col.add(attr, "%s is required, e.g. %q", what, example)
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		if strings.Contains(v, "@") {
			// It may hold credentials: say so without repeating it.
			col.add(attr, "the value is not an http or https URL and seems to hold credentials; give the base URL, e.g. %q, and %s", example, strings.TrimSuffix(credentials, " instead"))
		} else {
			col.add(attr, "%q is not an http or https URL, e.g. %q", v, example)
		}
	case u.User != nil:
		col.add(attr, "the URL carries credentials; %s, so the secret stays sensitive", credentials)
	case u.RawQuery != "" || u.Fragment != "":
		col.add(attr, "the URL must not have a query or fragment; give the base URL, e.g. %q", example)
	}
}

// validateThriftURI checks attr, a Thrift endpoint v: thrift://host:port.
func validateThriftURI(col collector, attr, v string) {
	const example = "thrift://metastore:9083"
	host, ok := strings.CutPrefix(v, "thrift://")
	if v == "" {
		col.add(attr, "the URI is required, e.g. %q", example)
		return
	}
	h, port, err := net.SplitHostPort(host)
	n, perr := strconv.Atoi(port)
	if !ok || err != nil || h == "" || perr != nil || n < 1 || n > 65535 {
		col.add(attr, "%q is not a Thrift URI: give thrift://<host>:<port>, e.g. %q", v, example)
	}
}
