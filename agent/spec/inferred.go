package spec

import "github.com/tributary-io/terraform-provider-tributary/agent/internal/schema"

// EvolutionMode returns SchemaEvolutionMode as one of
// [SchemaEvolutionModes], an Auto Loader alias replaced by the mode it
// stands for; "" when schema inference is off. A value that is neither is
// returned as is (Validate reports it).
func (jo *JSONOptions) EvolutionMode() string {
	if jo == nil {
		return ""
	}
	if m, ok := SchemaEvolutionAliases[jo.SchemaEvolutionMode]; ok {
		return m
	}
	return jo.SchemaEvolutionMode
}

// RescueColumn returns the name of the column that holds, as a JSON object,
// what a record's inferred schema cannot take: RescuedDataColumn, or
// [RescuedDataColumn] when it is empty, except in mode NONE, which has no
// such column unless RescuedDataColumn names one. "" means none, also when
// schema inference is off.
func (jo *JSONOptions) RescueColumn() string {
	switch mode := jo.EvolutionMode(); {
	case mode == "":
		return ""
	case jo.RescuedDataColumn != "":
		return jo.RescuedDataColumn
	case mode == SchemaEvolutionNone:
		return ""
	}
	return RescuedDataColumn
}

// InferOptions returns the inference switches of jo, with their defaults
// where unset: string type inference on, primitives as string off, and
// Spark's parser defaults (single quotes and non-numeric numbers accepted).
func (jo *JSONOptions) InferOptions() schema.InferOptions {
	on := func(b *bool, def bool) bool {
		if b == nil {
			return def
		}
		return *b
	}
	return schema.InferOptions{
		StringTypeInference:    on(jo.StringTypeInference, true),
		PrimitiveAsString:      on(jo.PrimitiveAsString, false),
		AllowSingleQuotes:      on(jo.AllowSingleQuotes, true),
		AllowNonNumericNumbers: on(jo.AllowNonNumericNumbers, true),
	}
}

// Inferred reports whether the part's columns are inferred from the records
// (json_options.schema_evolution_mode): it has no columns at plan time, and
// the agent sets Fields from the table's log, or from the first records of
// each partition for a new table, before it decodes.
func (p *Part) Inferred() bool {
	return p.Format == FormatJSON && p.Transformer != nil && p.Transformer.JSONOptions.EvolutionMode() != ""
}

// unresolved reports whether the part's columns are not known yet: it
// takes its schema from a registry or infers it, and the agent has not
// set Fields.
func (p *Part) unresolved() bool { return p.Fields == nil && (p.Pending() || p.Inferred()) }

// Changelog reports whether tr decodes change events (DEBEZIUM_JSON or
// CANAL_JSON): each record becomes zero or more rows with _op and _source.
func (tr *Transformer) Changelog() bool {
	return tr != nil && (tr.Format == FormatDebeziumJSON || tr.Format == FormatCanalJSON)
}

// DeletesOnEmpty reports whether a null value becomes a delete row (_op
// "d"): json_options.empty_value_as_delete on a JSON or changelog value.
func (tr *Transformer) DeletesOnEmpty() bool {
	return tr != nil && tr.JSONOptions != nil && tr.JSONOptions.EmptyValueAsDelete != nil && *tr.JSONOptions.EmptyValueAsDelete
}
