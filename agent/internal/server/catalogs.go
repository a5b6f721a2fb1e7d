package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/registration"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// A catalog registers the tables of the pipelines and fanout schemas whose
// destination_catalog is its name; the engine looks it up in the store
// when it applies them (store.Store.Catalog), so a change of a catalog
// applies its users again.

// publicCatalog returns c as the API shows it, without its secrets.
func publicCatalog(c *spec.Catalog) *spec.Catalog { return c.Redacted() }

func (s *Server) getCatalog(w http.ResponseWriter, r *http.Request) error {
	return getStored(w, r, s.store.Catalogs, "catalog", publicCatalog)
}

func (s *Server) listCatalogs(w http.ResponseWriter, _ *http.Request) error {
	return listStored(w, s.store.Catalogs, publicCatalog)
}

// putCatalog creates or replaces a catalog (with If-None-Match: *, only
// creates) and applies again the pipelines and fanout schemas whose
// tables it registers, whose tables restart with it.
func (s *Server) putCatalog(w http.ResponseWriter, r *http.Request) error {
	var c spec.Catalog
	err := decodeSpec(w, r, "catalog", &c, &c.Name)
	// No answer may quote its secret, whether it is stored or not.
	s.learnSecrets(&c)
	if err != nil {
		return err
	}
	// secrets_set is in answers only.
	c.SecretsSet = nil
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	old, existed, err := storedFor(r, s.store.Catalogs, "catalog", c.Name)
	if err != nil {
		return err
	}
	if existed && sameJSON(&old, &c) {
		return writeJSON(w, http.StatusOK, publicCatalog(&c))
	}
	if err := s.store.Catalogs.Put(&c); err != nil {
		return err
	}
	if err := s.applyCatalogUsers(context.WithoutCancel(r.Context()), c.Name); err != nil {
		return fmt.Errorf("catalog %q was saved, but applying again the pipelines and fanout schemas whose tables it registers failed "+
			"(each is retried on its next PUT or the agent's restart): %w", c.Name, err)
	}
	return writeJSON(w, http.StatusOK, publicCatalog(&c))
}

// deleteCatalog deletes a catalog: its users' tables are no longer
// registered, and with on_delete = DROP_REGISTRATION their registrations
// are dropped (never their files) first: a catalog that cannot drop them
// is kept, so that the DELETE can be tried again.
func (s *Server) deleteCatalog(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	c, err := s.store.Catalogs.Get(name)
	if err != nil {
		return notFoundOr(err, "catalog", name)
	}
	ctx := context.WithoutCancel(r.Context())
	tables, err := s.catalogTables(name)
	if err != nil {
		return err
	}
	if err := s.dropRegistrations(ctx, &c, tables); err != nil {
		return err
	}
	if err := s.store.Catalogs.Delete(name); err != nil {
		return notFoundOr(err, "catalog", name)
	}
	if err := s.applyCatalogUsers(ctx, name); err != nil {
		return fmt.Errorf("catalog %q was deleted, but applying again the pipelines and fanout schemas whose tables it registered failed "+
			"(each is retried on its next PUT or the agent's restart): %w", name, err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// catalogOf returns the stored catalog named name, nil when there is none.
func (s *Server) catalogOf(name string) *spec.Catalog { return s.store.Catalog(name) }

// applyCatalogUsers applies again every stored pipeline and fanout schema
// whose destination_catalog is the named catalog. The caller holds
// changeMu.
func (s *Server) applyCatalogUsers(ctx context.Context, name string) error {
	pipes, err := storedWhere(s.store.Pipelines, func(p *spec.Pipeline) bool { return p.DestinationCatalog == name })
	if err != nil {
		return err
	}
	fanouts, err := storedWhere(s.store.FanoutSchemas, func(f *spec.FanoutSchema) bool { return f.DestinationCatalog == name })
	if err != nil {
		return err
	}
	var errs []error
	for i := range pipes {
		if err := s.applyStored(ctx, &pipes[i]); err != nil {
			errs = append(errs, fmt.Errorf("pipeline %q: %w", pipes[i].Name, err))
		}
		_ = s.applyFanouts(ctx, pipes[i].Name)
	}
	for i := range fanouts {
		if err := s.applyStoredFanout(ctx, &fanouts[i]); err != nil {
			errs = append(errs, fmt.Errorf("fanout schema %q: %w", fanouts[i].Name, err))
		}
	}
	return errors.Join(errs...)
}

// catalogTables returns the tables the named catalog registers: every
// table of the stored pipelines of its destination_catalog, and every
// table the fanout schemas of it made so far.
func (s *Server) catalogTables(name string) ([]registration.Table, error) {
	pipes, err := storedWhere(s.store.Pipelines, func(p *spec.Pipeline) bool { return p.DestinationCatalog == name })
	if err != nil {
		return nil, err
	}
	fanouts, err := storedWhere(s.store.FanoutSchemas, func(f *spec.FanoutSchema) bool { return f.DestinationCatalog == name })
	if err != nil {
		return nil, err
	}
	var out []registration.Table
	for i := range pipes {
		out = append(out, s.pipelineTables(&pipes[i])...)
	}
	for i := range fanouts {
		out = append(out, s.fanoutTables(&fanouts[i])...)
	}
	return out, nil
}

// pipelineTables returns the tables of p as its catalog names them, with
// their locations as the status reports them ("" for a table that has not
// run: nothing of it is registered).
func (s *Server) pipelineTables(p *spec.Pipeline) []registration.Table {
	st := s.status(p)
	out := make([]registration.Table, len(p.Tables))
	for i := range p.Tables {
		out[i] = registration.Table{Schema: p.DestinationSchema, Name: p.Tables[i].DestinationTable}
		for _, ts := range st.Tables {
			if strings.EqualFold(ts.DestinationTable, p.Tables[i].DestinationTable) {
				out[i].Location = ts.Location
			}
		}
	}
	return out
}

// fanoutTables returns the tables fanout schema f made so far, as its
// catalog names them, with their locations.
func (s *Server) fanoutTables(f *spec.FanoutSchema) []registration.Table {
	st := s.fanoutStatus(f)
	out := make([]registration.Table, len(st.Tables))
	for i, t := range st.Tables {
		out[i] = registration.Table{Schema: f.DestinationSchema, Name: t.DestinationTable, Location: t.Location}
	}
	return out
}

// dropLeft drops the registrations of the tables of old that next (nil
// when the object goes) does not name, when the catalog of old's
// destination_catalog drops them; catalog is that destination_catalog.
// It runs before the change is made, so that a refusal changes nothing;
// check, when not nil, is the change's own check, run first when there is
// something to drop, so that a change the engine refuses drops nothing.
func (s *Server) dropLeft(ctx context.Context, catalog string, old, next []registration.Table, check func() error) error {
	c := s.catalogOf(catalog)
	if c == nil || !c.DropsRegistrations() {
		return nil
	}
	var left []registration.Table
	for _, t := range old {
		if !slices.ContainsFunc(next, func(n registration.Table) bool { return n.Schema == t.Schema && n.Name == t.Name }) {
			left = append(left, t)
		}
	}
	if len(left) > 0 && check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	return s.dropRegistrations(ctx, c, left)
}

// dropRegistrations drops the registrations of tables in c, when c's
// on_delete says so; a failure is a 502, before the stored objects change.
func (s *Server) dropRegistrations(ctx context.Context, c *spec.Catalog, tables []registration.Table) error {
	if !c.DropsRegistrations() || len(tables) == 0 {
		return nil
	}
	if err := registration.Drop(ctx, c, tables); err != nil {
		return problemf(http.StatusBadGateway, "catalog %q (on_delete = %s) could not drop every registration of the tables that would leave it; "+
			"the stored objects are unchanged, so the change can be retried once the catalog is reachable (or set on_delete = %q first); "+
			"registrations already dropped stay dropped: %v", c.Name, c.OnDelete, spec.OnDeleteKeep, err)
	}
	for _, t := range tables {
		if t.Location == "" {
			s.log.Warn("table left registered: it has not run, so its location, which a registration must name to be dropped, is unknown",
				"catalog", c.Name, "table", t.Schema+"."+t.Name)
			continue
		}
		s.log.Info("table registration dropped, where it named the table's location", "catalog", c.Name, "table", t.Schema+"."+t.Name)
	}
	return nil
}
