package spec

import (
	"fmt"
	"strings"
)

// ClaimConflicts returns a problem for every table of p whose
// <catalog>.<schema>.<table> (compared case-insensitively) another pipeline
// of others already writes: a destination table belongs to one pipeline.
// The same holds for the [DirtyRecordsTable] of a pipeline with a table
// that ignores errors: one pipeline per destination schema may have one.
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
		if o.dirtyTable() >= 0 {
			owner[strings.ToLower(o.DirtyRecordsName())] = o.Name
		}
	}
	var errs Errors
	if i := p.dirtyTable(); i >= 0 {
		if other, ok := owner[strings.ToLower(p.DirtyRecordsName())]; ok {
			errs = append(errs, FieldError{
				Path: fmt.Sprintf("table[%d].connector_options.kafka_options.ignore_errors", i),
				Detail: fmt.Sprintf("pipeline %q already keeps the records its tables could not decode in %s, and a pipeline "+
					"with ignore_errors writes that table too: choose another destination schema, or turn ignore_errors off in one of them",
					other, p.DirtyRecordsName()),
			})
		}
	}
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

// FanoutConflicts returns a problem for every table of p in the destination
// schema of one of fanouts (compared case-insensitively): a fanout schema
// owns every table of its <catalog>.<schema>.
func (p *Pipeline) FanoutConflicts(fanouts []FanoutSchema) Errors {
	f, ok := fanoutOwners(fanouts, "")[strings.ToLower(p.DestinationCatalog+"."+p.DestinationSchema)]
	if !ok {
		return nil
	}
	var errs Errors
	for i := range p.Tables {
		errs = append(errs, FieldError{
			Path: fmt.Sprintf("table[%d].destination_table", i),
			Detail: fmt.Sprintf("table %s is in schema %s.%s, which fanout schema %q owns: it creates every table there; "+
				"choose another destination schema, or delete fanout schema %q first",
				p.QualifiedName(&p.Tables[i]), p.DestinationCatalog, p.DestinationSchema, f, f),
		})
	}
	return errs
}

// ClaimConflicts returns a problem when f's destination <catalog>.<schema>
// (compared case-insensitively) holds a table of one of pipes or is another
// fanout schema's of others: a fanout schema owns its whole destination
// schema. others may include f itself, which is skipped by name.
func (f *FanoutSchema) ClaimConflicts(pipes []Pipeline, others []FanoutSchema) Errors {
	qs := f.QualifiedSchema()
	key := strings.ToLower(qs)
	if other, ok := fanoutOwners(others, f.Name)[key]; ok {
		return Errors{{
			Path:     "destination_schema",
			Involves: []string{"destination_catalog"},
			Detail: fmt.Sprintf("schema %s is already owned by fanout schema %q; choose another destination schema, or delete fanout schema %q first",
				qs, other, other),
		}}
	}
	for i := range pipes {
		p := &pipes[i]
		if len(p.Tables) > 0 && strings.ToLower(p.DestinationCatalog+"."+p.DestinationSchema) == key {
			return Errors{{
				Path:     "destination_schema",
				Involves: []string{"destination_catalog"},
				Detail: fmt.Sprintf("schema %s holds table %s of pipeline %q, and a fanout schema owns every table of its schema; "+
					"choose another destination schema, or move the pipeline's tables first",
					qs, p.QualifiedName(&p.Tables[0]), p.Name),
			}}
		}
	}
	return nil
}

// fanoutOwners maps each lower-case <catalog>.<schema> of fanouts to the
// name of the fanout schema that owns it, leaving out the one named skip.
func fanoutOwners(fanouts []FanoutSchema, skip string) map[string]string {
	owner := map[string]string{}
	for i := range fanouts {
		if f := &fanouts[i]; f.Name != skip {
			owner[strings.ToLower(f.QualifiedSchema())] = f.Name
		}
	}
	return owner
}

// DirtyRecordsName returns "<catalog>.<schema>._dirty_records", the table
// that keeps the records p's tables with ignore_errors could not decode.
func (p *Pipeline) DirtyRecordsName() string {
	return p.DestinationCatalog + "." + p.DestinationSchema + "." + DirtyRecordsTable
}

// dirtyTable returns the index of p's first table with ignore_errors, or
// -1 when none ignores errors (and p writes no dirty records table).
func (p *Pipeline) dirtyTable() int {
	for i := range p.Tables {
		if p.Tables[i].ConnectorOptions.KafkaOptions.IgnoresErrors() {
			return i
		}
	}
	return -1
}
