package spec

import (
	"fmt"
	"strings"
)

// ClaimConflicts returns a problem for every table of p whose
// <catalog>.<schema>.<table> (compared case-insensitively) another pipeline
// of others already writes: a destination table belongs to one pipeline.
// others may include p itself, which is skipped by name.
func (p *Pipeline) ClaimConflicts(others []Pipeline) Errors {
	owner := map[string]string{}
	for i := range others {
		o := &others[i]
		if o.Name == p.Name {
			continue
		}
		for j := range o.Tables {
			owner[strings.ToLower(o.QualifiedName(&o.Tables[j]))] = o.Name
		}
	}
	var errs Errors
	for i := range p.Tables {
		qn := p.QualifiedName(&p.Tables[i])
		if other, ok := owner[strings.ToLower(qn)]; ok {
			errs = append(errs, FieldError{
				Path: fmt.Sprintf("table[%d].destination_table", i),
				Detail: fmt.Sprintf("table %s is already written by pipeline %q; choose another destination table, or delete pipeline %q first",
					qn, other, other),
			})
		}
	}
	return errs
}
