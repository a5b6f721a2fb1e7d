package columns

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/decode"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Start returns the columns a new table's inferred part p starts
// with: those json_options.initial_schemas gives table (its key names the
// table, ignoring case as spec does when no key spells it exactly), in
// their order and with their types (STRUCT columns flattened with
// flatten_nested_columns), then the inferred fields they lack (names
// compare ignoring case). Without an entry for table, inferred.
func Start(p *spec.Part, table string, inferred []schema.Field) ([]schema.Field, error) {
	jo := p.Transformer.RowOptions()
	ddl, ok := jo.InitialSchemas[table]
	for name, d := range jo.InitialSchemas {
		if !ok && strings.EqualFold(name, table) {
			ddl, ok = d, true
		}
	}
	if !ok {
		return inferred, nil
	}
	initial, err := schema.ParseDDL(ddl)
	if err != nil {
		return nil, runner.Fatal(fmt.Errorf("json_options.initial_schemas[%q]: %w", table, err))
	}
	if decode.InferOptions(jo).FlattenNested {
		initial = schema.Flatten(initial)
	}
	cols := make([]schema.Field, 0, len(initial)+len(inferred))
	for _, f := range initial {
		cols = append(cols, schema.Nullable(f))
	}
	for _, f := range inferred {
		if !slices.ContainsFunc(initial, func(i schema.Field) bool { return strings.EqualFold(i.Name, f.Name) }) {
			cols = append(cols, f)
		}
	}
	return cols, nil
}

// InferredPart returns the part of layout whose columns are inferred, nil
// for none.
func InferredPart(layout *spec.Layout) (*spec.Part, error) {
	switch k, v := layout.Key.Inferred(), layout.Value.Inferred(); {
	case k && v:
		return nil, runner.Fatal(errors.New("schema_evolution_mode on both the key and the value transformer is not supported: " +
			"infer the schema of one of them only"))

	case k:
		return &layout.Key, nil
	case v:
		return &layout.Value, nil
	}
	return nil, nil
}

// Own returns the fields of the inferred part of layout, whose
// Fields are unset, that table columns prev hold: the columns of prev that
// none of layout's columns claims and that start with the part's prefix
// (key_fields_prefix or value_fields_prefix), named without it.
func Own(layout *spec.Layout, prev []schema.Field) []schema.Field {
	prefix := layout.Value.Prefix
	if layout.Key.Inferred() {
		prefix = layout.Key.Prefix
	}
	taken := map[string]bool{}
	for _, f := range layout.Columns() {
		taken[strings.ToLower(f.Name)] = true
	}
	var own []schema.Field
	for _, f := range prev {
		name, ok := strings.CutPrefix(f.Name, prefix)
		if ok && name != "" && !taken[strings.ToLower(f.Name)] {
			f.Name = name
			own = append(own, f)
		}
	}
	return own
}

// WithHints sets the Fields of inferred part p of layout: base with the
// schema hints applied, which may declare columns no record had yet. A
// field whose column name (the part's prefix, then the field's name) is
// one of the table's other columns (ignoring case, as Delta does) or an
// earlier field's is left out: its values are rescued.
func WithHints(layout *spec.Layout, p *spec.Part, base []schema.Field) error {
	hints, err := schema.ParseHints(p.Transformer.RowOptions().SchemaHints)
	if err != nil {
		return runner.Fatal(fmt.Errorf("json_options.schema_hints: %w", err))
	}
	taken := map[string]bool{}
	for _, f := range layout.Columns() {
		taken[strings.ToLower(f.Name)] = true
	}
	hinted, err := schema.ApplyHints(base, hints)
	if err != nil {
		return runner.Fatal(fmt.Errorf("json_options.schema_hints: %w", err))
	}
	fields := []schema.Field{}
	for _, f := range hinted {
		if k := strings.ToLower(p.Prefix + f.Name); !taken[k] {
			taken[k] = true
			fields = append(fields, schema.Nullable(f))
		}
	}
	p.Fields = fields
	return TooWide(layout)
}

// InferFrom infers the columns of inferred part p from recs: those of
// their row images for a changelog part (see Images).
func InferFrom(ctx context.Context, p *spec.Part, recs []record.Record) ([]schema.Field, error) {
	if p.Transformer.Changelog() {
		return Images(ctx, p, recs)
	}
	in := schema.NewInferrer(decode.InferOptions(p.Transformer.JSONOptions))
	for i := range recs {
		data := recs[i].Value
		if p.Column == spec.KeyColumn {
			data = recs[i].Key
		}
		if data != nil {
			_ = in.Add(data) // a record that is not a JSON object says nothing of the columns
		}
	}
	return in.Fields(), nil
}

// Keep makes layout keep the _corrupt_record column of a table
// whose columns were prev: a transformer that switched to FAILFAST stops
// filling it, but a column is never dropped. So does the default rescue
// column of an inferred part whose mode (NONE) no longer asks for one,
// which goes on rescuing values that do not fit.
func Keep(layout *spec.Layout, prev []schema.Field) {
	for _, f := range prev {
		switch f.Name {
		case spec.CorruptRecordColumn:
			layout.CorruptRecord = true
		case spec.RescuedDataColumn:
			for _, p := range []*spec.Part{&layout.Key, &layout.Value} {
				if p.Inferred() && p.Rescue == "" {
					p.Rescue = f.Name
				}
			}
		}
	}
}

// TooWide returns a fatal error when layout, whose inferred part has new
// columns, has more leaf columns than a Parquet file can hold: plan time
// cannot count the columns records bring.
func TooWide(layout *spec.Layout) error {
	if n := schema.LeafColumns(layout.Columns()); n > spec.MaxLeafColumns {
		return runner.Fatal(fmt.Errorf("the records' fields would give the table %d leaf columns (nested fields count one each), "+
			"more than Parquet's maximum of %d: give json_options a schema of the fields to keep, or use a VARIANT column (JSON without json_options)",
			n, spec.MaxLeafColumns))

	}
	return nil
}
