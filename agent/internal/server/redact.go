package server

import "github.com/tributary-io/terraform-provider-tributary/agent/spec"

// redactProblem returns p with the secrets of the stored connections
// scrubbed from its texts; p's list of problems is not changed.
func (s *Server) redactProblem(p spec.Problem) spec.Problem {
	p.Title = s.secrets.String(p.Title)
	p.Detail = s.secrets.String(p.Detail)
	if len(p.Errors) > 0 {
		errs := make([]spec.FieldError, len(p.Errors))
		for i, e := range p.Errors {
			e.Path, e.Detail = s.secrets.String(e.Path), s.secrets.String(e.Detail)
			errs[i] = e
		}
		p.Errors = errs
	}
	return p
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
		out[i] = t
	}
	return out
}
