package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// publicConnection returns c as the API shows it. Secrets are write-only:
// the store keeps them (mode 0600) for the engine, and every answer that
// carries a connection goes through here, which clears them (the schema
// registry's API secret).
func publicConnection(c *spec.Connection) *spec.Connection { return c.Redacted() }

func (s *Server) getConnection(w http.ResponseWriter, r *http.Request) error {
	return getStored(w, r, s.store.Connections, "connection", publicConnection)
}

func (s *Server) listConnections(w http.ResponseWriter, _ *http.Request) error {
	return listStored(w, s.store.Connections, publicConnection)
}

// putConnection creates or replaces a connection (with If-None-Match: *,
// only creates: 412 when it exists). A changed connection is stored only
// once the engine's dry run of every pipeline that uses it accepts it
// (checkUsers), then re-applies them; an unchanged one re-applies only
// those the engine does not run (their last start failed).
func (s *Server) putConnection(w http.ResponseWriter, r *http.Request) error {
	var c spec.Connection
	if err := decodeBody(w, r, "connection", &c); err != nil {
		return err
	}
	if err := pathName(r, &c.Name); err != nil {
		return err
	}
	// secrets_set is in answers only: the stored connection's is what
	// Redacted makes of its secrets.
	c.SecretsSet = nil
	// No answer about c may quote its secrets, whether c is stored by then
	// or not: its problems, an engine's check or apply with it.
	s.learnSecrets(&c)
	if errs := c.Validate(); len(errs) > 0 {
		return invalid("the connection is not valid", errs)
	}
	if err := s.checkTokenFile(&c); err != nil {
		return err
	}

	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	old, existed, err := storedFor(r, s.store.Connections, "connection", c.Name)
	if err != nil {
		return err
	}
	if c.SchemaRegistry == nil {
		if err := s.refuseDroppedRegistry(c.Name); err != nil {
			return err
		}
	}
	changed := !existed || !sameJSON(&old, &c)
	if changed {
		if err := s.checkUsers(&c); err != nil {
			return err
		}
		if err := s.store.Connections.Put(&c); err != nil {
			return err
		}
	}
	users, err := s.pipelinesUsing(c.Name)
	if err != nil {
		return err
	}
	// The engine's work must not stop half-way because the client gave up.
	ctx := context.WithoutCancel(r.Context())
	var errs []error
	for i := range users {
		if _, known := s.engine.Status(users[i].Name); known && !changed {
			continue
		}
		if err := s.applyStored(ctx, &users[i]); err != nil {
			errs = append(errs, fmt.Errorf("pipeline %q: %w", users[i].Name, err))
			continue
		}
		// As after a pipeline's PUT, a fanout schema that fails is
		// logged and shown FAILED; the connection's PUT succeeded.
		_ = s.applyFanouts(ctx, users[i].Name)
	}
	if err := s.applySinks(ctx, c.Name, changed); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("connection %q was saved, but re-applying the pipelines and kafka sinks that use it failed (each is retried on the next PUT or agent restart): %w",
			c.Name, errors.Join(errs...))
	}
	return writeJSON(w, http.StatusOK, publicConnection(&c))
}

// checkUsers asks the engine whether every stored pipeline that uses
// connection c, as it would be after the PUT, takes the change (its
// dry run), and answers 422 naming the pipelines that refuse it, so that a
// refused connection is never stored. The caller holds changeMu.
func (s *Server) checkUsers(c *spec.Connection) error {
	users, err := s.pipelinesUsing(c.Name)
	if err != nil {
		return err
	}
	var refused spec.Errors
	for i := range users {
		conn, regs, err := s.connectionsWith(&users[i], c)
		if err == nil {
			err = s.engine.Check(&users[i], &conn, regs)
		}
		var errs spec.Errors
		var pe *problemError
		switch {
		case errors.As(err, &errs):
		case errors.As(err, &pe):
			errs = pe.Errors
		default:
			// Another error of the check is the re-apply's to report.
			continue
		}
		for _, e := range errs {
			refused = append(refused, spec.FieldError{Detail: fmt.Sprintf("pipeline %q refuses the change: %s", users[i].Name, e.Error())})
		}
	}
	if len(refused) > 0 {
		return invalid(fmt.Sprintf("connection %q is used by pipelines that cannot take the change; it was not saved", c.Name), refused)
	}
	return nil
}

// refuseDroppedRegistry returns a 409 when a stored pipeline takes the
// schema registry of the named connection, which a PUT without one would
// take away.
func (s *Server) refuseDroppedRegistry(name string) error {
	users, err := storedWhere(s.store.Pipelines, func(p *spec.Pipeline) bool { return usesRegistryOf(p, name) })
	if err != nil {
		return err
	}
	if len(users) > 0 {
		return problemf(http.StatusConflict, "connection %q has no schema_registry, but pipeline(s) %s take their schemas from it; "+
			"keep the schema_registry, or point their schema_registry blocks at another connection first", name, quotedNames(users))
	}
	return nil
}

// deleteConnection deletes a connection no pipeline uses.
func (s *Server) deleteConnection(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	if _, err := s.store.Connections.Get(name); err != nil {
		return notFoundOr(err, "connection", name)
	}
	users, err := s.pipelinesUsing(name)
	if err != nil {
		return err
	}
	sinks, err := s.sinksUsing(name)
	if err != nil {
		return err
	}
	if len(users) > 0 || len(sinks) > 0 {
		return problemf(http.StatusConflict, "connection %q is used by %s; delete them or point them at another connection first",
			name, usersOf(users, sinks))
	}
	if err := s.store.Connections.Delete(name); err != nil {
		return notFoundOr(err, "connection", name)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
