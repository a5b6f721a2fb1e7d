package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// PutCatalog creates or replaces a catalog and returns it as stored,
// without its secrets. The tables of the pipelines and fanout schemas
// whose destination_catalog is the catalog's name are registered in it.
// With [CreateOnly] it only creates.
func (c *Client) PutCatalog(ctx context.Context, cat *spec.Catalog) (*spec.Catalog, error) {
	var out spec.Catalog
	return &out, c.do(ctx, http.MethodPut, catalogPath(cat.Name), cat, &out)
}

// GetCatalog returns the named catalog, without its secrets;
// errors.Is(err, ErrNotFound) when it does not exist.
func (c *Client) GetCatalog(ctx context.Context, name string) (*spec.Catalog, error) {
	var out spec.Catalog
	return &out, c.do(ctx, http.MethodGet, catalogPath(name), nil, &out)
}

// DeleteCatalog deletes the named catalog: its tables are no longer
// registered, and with on_delete = DROP_REGISTRATION their registrations
// are dropped (never their files). Deleting one that does not exist is
// not an error.
func (c *Client) DeleteCatalog(ctx context.Context, name string) error {
	return ignoreNotFound(c.do(ctx, http.MethodDelete, catalogPath(name), nil, nil))
}

func catalogPath(name string) string { return "/v1/catalogs/" + url.PathEscape(name) }
