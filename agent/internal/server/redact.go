package server

import (
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/redact"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// redactProblem returns p with the secrets of the stored connections
// scrubbed from its texts; p's list of problems is not changed.
func (s *Server) redactProblem(p spec.Problem) spec.Problem {
	p.Title = s.secrets.String(p.Title)
	p.Detail = s.secrets.String(p.Detail)
	p.Errors = redactErrors(s.secrets, p.Errors)
	return p
}

// redactErrors returns a copy of errs scrubbed by r, or errs when empty.
func redactErrors(r *redact.Redactor, errs []spec.FieldError) []spec.FieldError {
	if len(errs) == 0 {
		return errs
	}
	out := make([]spec.FieldError, len(errs))
	for i, e := range errs {
		e.Path, e.Detail = r.String(e.Path), r.String(e.Detail)
		out[i] = e
	}
	return out
}

// learnSecrets makes the server scrub every secret of c, a connection or
// a catalog, from now on.
func (s *Server) learnSecrets(c interface{ SecretFields() []spec.SecretField }) {
	for _, f := range c.SecretFields() {
		s.secrets.Add(*f.Value)
	}
}

// redactTables returns tables with the secrets of the stored connections
// scrubbed from their last errors, copied rather than changed in place: the
// engine may hand out its own slice.
func (s *Server) redactTables(tables []spec.TableStatus) []spec.TableStatus {
	if len(tables) == 0 {
		return tables
	}
	out := make([]spec.TableStatus, len(tables))
	for i, t := range tables {
		t.LastError = s.secrets.String(t.LastError)
		if c := t.Catalog; c != nil {
			scrubbed := *c
			if scrubbed.Iceberg != nil {
				m := *scrubbed.Iceberg
				m.LastError = s.secrets.String(m.LastError)
				scrubbed.Iceberg = &m
			}
			if scrubbed.HiveMetastore != nil {
				h := *scrubbed.HiveMetastore
				h.LastError = s.secrets.String(h.LastError)
				scrubbed.HiveMetastore = &h
			}
			t.Catalog = &scrubbed
		}
		out[i] = t
	}
	return out
}
