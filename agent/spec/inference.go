package spec

import (
	"maps"
	"slices"
	"strings"
)

// CanonicalSchemaEvolutionMode returns the mode that mode names: mode
// itself when it is one of [SchemaEvolutionModes], the mode an Auto Loader
// alias stands for ([SchemaEvolutionAliases]), and false for anything else
// (matching is case-sensitive, as Lakeflow's API and Auto Loader are).
func CanonicalSchemaEvolutionMode(mode string) (string, bool) {
	if slices.Contains(SchemaEvolutionModes, mode) {
		return mode, true
	}
	m, ok := SchemaEvolutionAliases[mode]
	return m, ok
}

// schemaEvolutionAliasNames returns the aliases of SchemaEvolutionAliases,
// sorted, for messages and docs.
func schemaEvolutionAliasNames() []string {
	return slices.Sorted(maps.Keys(SchemaEvolutionAliases))
}

// suggestSchemaEvolutionMode returns the mode a misspelt mode most likely
// means, ignoring case and underscores ("add_new_columns",
// "AddNewColumns"), or "".
func suggestSchemaEvolutionMode(mode string) string {
	fold := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }
	for _, m := range SchemaEvolutionModes {
		if fold(m) == fold(mode) {
			return m
		}
	}
	return ""
}

// Infers reports whether the transformer's columns are inferred from the
// records: format JSON with json_options.schema_evolution_mode set.
func (tr *Transformer) Infers() bool {
	return tr != nil && tr.Format == FormatJSON && tr.JSONOptions != nil && tr.JSONOptions.SchemaEvolutionMode != ""
}

// EvolutionMode returns the canonical schema evolution mode (one of
// [SchemaEvolutionModes]), or "" when the schema is not inferred or the
// mode is not valid (Validate reports it). The spec keeps the mode as the
// user wrote it, alias or not, so that Terraform sees back what it sent.
func (jo *JSONOptions) EvolutionMode() string {
	m, _ := CanonicalSchemaEvolutionMode(jo.SchemaEvolutionMode)
	return m
}

// RescueColumn returns the name of the column that takes the fields that do
// not fit the inferred schema: RescuedDataColumn when set, else
// [RescuedDataColumn] in every mode but [SchemaEvolutionNone], where an
// empty RescuedDataColumn means nothing is rescued and "" is returned. It
// returns "" too when the schema is not inferred.
func (jo *JSONOptions) RescueColumn() string {
	switch {
	case jo.SchemaEvolutionMode == "":
		return ""
	case jo.RescuedDataColumn != "":
		return jo.RescuedDataColumn
	case jo.EvolutionMode() == SchemaEvolutionNone:
		return ""
	}
	return RescuedDataColumn
}

// normalizeInference fills the unset inference options of jo with their
// defaults when it infers its schema, and leaves them unset otherwise.
func (jo *JSONOptions) normalizeInference() {
	if jo.SchemaEvolutionMode == "" {
		return
	}
	if jo.InferRecordsPerPartition == nil {
		n := int64(DefaultInferRecordsPerPartition)
		jo.InferRecordsPerPartition = &n
	}
	if jo.StringTypeInference == nil {
		t := true
		jo.StringTypeInference = &t
	}
	if jo.PrimitiveAsString == nil {
		f := false
		jo.PrimitiveAsString = &f
	}
}

// MaxInferRecordsPerPartition bounds infer_records_per_partition. The
// records a table infers its first schema from are held in memory, for
// every partition, until that schema is decided, and the schema decided
// then only grows afterwards: ten thousand records of each partition show
// every field a stream of uniform records has, and keep a table of a
// hundred partitions of 1 KiB records under a gigabyte before its first
// commit.
const MaxInferRecordsPerPartition = 10_000
