package spec

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

// Inferred reports whether the part's columns are inferred from the records
// (json_options.schema_evolution_mode): it has no columns at plan time, and
// the agent sets Fields from the table's log, or from the first records of
// each partition for a new table, before it decodes.
//
// A changelog format (DEBEZIUM_JSON, CANAL_JSON) infers the columns of its
// row image unless its json_options declare a schema: see
// [Transformer.RowOptions].
func (p *Part) Inferred() bool {
	return jsonish(p.Format) && p.Transformer != nil && p.Transformer.RowOptions().EvolutionMode() != ""
}

// jsonish reports whether format decodes JSON text into columns with
// json_options: JSON and the changelog formats.
func jsonish(format string) bool {
	return format == FormatJSON || format == FormatDebeziumJSON || format == FormatCanalJSON
}

// RowOptions returns the JSON options tr decodes its columns with: its
// json_options, except that a changelog transformer whose json_options are
// unset or declare no schema (schema, schema_file_path or
// schema_evolution_mode) infers its row image with
// ADD_NEW_COLUMNS_WITH_TYPE_WIDENING, Flink's default continuous strategy,
// which adds the new fields of each event and widens a column whose values
// no longer fit it; then the result is a copy with that mode. Nil for a
// JSON transformer without json_options (a VARIANT column) and for nil.
func (tr *Transformer) RowOptions() *JSONOptions {
	if tr == nil {
		return nil
	}
	jo := tr.JSONOptions
	if !tr.Changelog() || jo.declaresSchema() {
		return jo
	}
	out := &JSONOptions{}
	if jo != nil {
		c := *jo
		out = &c
	}
	out.SchemaEvolutionMode = SchemaEvolutionAddNewColumnsWithTypeWidening
	return out
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

// declaresSchema reports whether jo says where the columns come from:
// schema, schema_file_path or schema_evolution_mode. False for nil.
func (jo *JSONOptions) declaresSchema() bool {
	return jo != nil && (jo.Schema != "" || jo.SchemaFilePath != "" || jo.SchemaEvolutionMode != "")
}
