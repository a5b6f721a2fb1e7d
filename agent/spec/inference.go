package spec

import (
	"maps"
	"slices"
	"strings"
)

// knownSchemaEvolutionMode reports whether mode is one of
// [SchemaEvolutionModes] or an Auto Loader alias of one
// ([SchemaEvolutionAliases]); matching is case-sensitive, as Lakeflow's
// API and Auto Loader are.
func knownSchemaEvolutionMode(mode string) bool {
	_, alias := SchemaEvolutionAliases[mode]
	return alias || slices.Contains(SchemaEvolutionModes, mode)
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
