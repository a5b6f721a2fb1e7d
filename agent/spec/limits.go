package spec

import "github.com/tributary-io/terraform-provider-tributary/agent/schema"

// Limits on the size of a spec. Validate enforces them, so the provider
// checks them at plan time where the values are known, and the agent on
// every PUT: no list or string of a spec can grow without bound (a request
// body is at most 4 MiB, but a spec that fits could still ask for millions
// of tables, topics or columns). Names and identifiers have their own
// limits ([ValidName], [ValidIdentifier], [ValidTopic]).
const (
	// MaxLeafColumns is how many leaf columns a table may have, counted as
	// Parquet counts them (a struct is its fields' leaves, an array its
	// element's, a map its key's and value's, a VARIANT two): Parquet's
	// limit of 65,535 columns in a row group.
	MaxLeafColumns = 65_535
	// MaxTablesPerPipeline is how many table blocks a pipeline may have.
	MaxTablesPerPipeline = 1000
	// MaxTopics is how many topics one table or fanout schema may list;
	// more call for a topic_pattern.
	MaxTopics = 1000
	// MaxTopicPatternLen is the longest topic_pattern, in bytes.
	MaxTopicPatternLen = 1024
	// MaxFanoutByLen is the longest fanout_by expression, in bytes.
	MaxFanoutByLen = 4096
	// MaxTableIDFields is how many table_id_fields a fanout schema may
	// list.
	MaxTableIDFields = 64
	// MaxShortStringLen is the longest of the short string options, in
	// bytes: datetime patterns, registry subjects, Protobuf message names.
	MaxShortStringLen = 1024
	// MaxStorageLocationLen is the longest storage_location, in bytes.
	MaxStorageLocationLen = 4096
	// MaxAssignedPartitions is how many partitions assign, and each map
	// of offsets or timestamps by partition, may list in all.
	MaxAssignedPartitions = 100_000
	// MaxMinPartitions is the largest min_partitions: more ranges than
	// that would cost more in parallel fetches than they save.
	MaxMinPartitions = 1024
	// MaxGroupIDLen is the longest group_id and group_id_prefix, in bytes.
	MaxGroupIDLen = 255
)

// checkWidth reports, under the table collector tc, a layout with more
// than MaxLeafColumns leaf columns, on the transformer whose schema has
// the most.
func (l *Layout) checkWidth(tc collector) {
	n := schema.LeafColumns(l.Columns())
	if n <= MaxLeafColumns {
		return
	}
	kc := tc.at("connector_options").at("kafka_options")
	side, p := kc.at("value_transformer"), &l.Value
	if schema.LeafColumns(l.Key.Fields) > schema.LeafColumns(l.Value.Fields) {
		side, p = kc.at("key_transformer"), &l.Key
	}
	attr := p.attr
	if attr == "" {
		attr = p.registryAttr()
	}
	side.add(attr, "the table would have %d leaf columns (nested fields count one each), more than Parquet's maximum of %d; "+
		"declare fewer fields, or keep part of the record as one STRING or VARIANT column", n, MaxLeafColumns)
}

// validateMaxLen reports attr when its value v is longer than max bytes,
// and reports whether it is not.
func validateMaxLen(col collector, attr, v string, limit int) bool {
	if len(v) > limit {
		col.add(attr, "%q is %d bytes long, more than the maximum of %d", clip(v), len(v), limit)
		return false
	}
	return true
}

// validateMaxItems reports attr when its list has more than limit items
// (n), and reports whether it has not; the items of a list that is too
// long are not checked one by one.
func validateMaxItems(col collector, attr string, n, limit int) bool {
	if n > limit {
		col.add(attr, "%d items, more than the maximum of %d", n, limit)
		return false
	}
	return true
}
