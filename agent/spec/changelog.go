package spec

import (
	"errors"
	"reflect"
	"regexp"
	"strings"
)

// Changelog formats: normalization, validation and the
// accessors of debezium_options and canal_options.

// normalizeChangelog gives a changelog transformer the JSON options it
// decodes its row image with ([Transformer.RowOptions]: inference with
// ADD_NEW_COLUMNS_WITH_TYPE_WIDENING unless json_options declare a schema) and fills the
// unset attributes of its format's options. Other transformers are left
// as they are.
func (tr *Transformer) normalizeChangelog() {
	if !tr.Changelog() {
		return
	}
	tr.JSONOptions = tr.RowOptions()
	f := false
	if do := tr.DebeziumOptions; do != nil {
		if do.SchemaInclude == nil {
			do.SchemaInclude = &f
		}
		if do.DistributedTables == nil {
			do.DistributedTables = &f
		}
	}
	if co := tr.CanalOptions; co != nil {
		t := true
		if co.InferSchemaStrategy == "" {
			co.InferSchemaStrategy = InferSchemaAuto
		}
		if co.Tinyint1AsBoolean == nil {
			co.Tinyint1AsBoolean = &t
		}
		if co.MySQLTimestampAsNTZ == nil {
			co.MySQLTimestampAsNTZ = &t
		}
		if co.DistributedTables == nil {
			co.DistributedTables = &f
		}
	}
}

// SchemaIncluded reports whether events carry their Connect schema
// (schema_include); false for nil.
func (do *DebeziumOptions) SchemaIncluded() bool {
	return do != nil && do.SchemaInclude != nil && *do.SchemaInclude
}

// Distributed reports whether tr, a changelog transformer, says one
// table's events are spread over several partitions (distributed_tables of
// its format's options, Flink's meaning); false otherwise. It changes no
// behaviour: a table's schema is always merged from all its partitions.
func (tr *Transformer) Distributed() bool {
	distributed, _ := tr.shardOptions()
	return distributed != nil && *distributed
}

// MergesShards reports whether tr, a changelog transformer, merges the
// tables of one name in several databases into one (merge_sharded_tables
// of its format's options); false otherwise. A spec that sets
// distributed_tables but not merge_sharded_tables merges: an earlier agent
// stored it when distributed_tables meant merging shards, and Validate
// refuses it from a client where that matters (a fanout schema's default
// route), so a stored fanout schema keeps routing as it did.
func (tr *Transformer) MergesShards() bool {
	distributed, merge := tr.shardOptions()
	if merge == nil {
		merge = distributed
	}
	return merge != nil && *merge
}

// shardOptions returns distributed_tables and merge_sharded_tables of the
// options of tr's changelog format; nil for unset ones and other
// transformers.
func (tr *Transformer) shardOptions() (distributed, merge *bool) {
	switch {
	case tr == nil:
	case tr.Format == FormatDebeziumJSON && tr.DebeziumOptions != nil:
		return tr.DebeziumOptions.DistributedTables, tr.DebeziumOptions.MergeShardedTables
	case tr.Format == FormatCanalJSON && tr.CanalOptions != nil:
		return tr.CanalOptions.DistributedTables, tr.CanalOptions.MergeShardedTables
	}
	return nil, nil
}

// validateShardMerge refuses, on a fanout schema whose value transformer
// value routes by the default route of its changelog format,
// distributed_tables = true without merge_sharded_tables: distributed_tables
// merged sharded databases into one table before it took Flink's meaning,
// and a configuration written then would now route each shard to a table
// of its own. kc is the kafka_options collector.
func validateShardMerge(kc collector, fo *FanoutOptions, value *Transformer) {
	distributed, merge := value.shardOptions()
	if fo.FanoutBy != "" || len(fo.TableIDFields) > 0 || distributed == nil || !*distributed || merge != nil {
		return
	}
	opts := "debezium_options"
	if value.Format == FormatCanalJSON {
		opts = "canal_options"
	}
	oc := kc.at("value_transformer").at(opts)
	oc.addInvolving("distributed_tables", []string{oc.path("merge_sharded_tables")},
		"distributed_tables now means, as Flink's, that one table's events are spread over several partitions "+
			"(the agent always merges a table's schema from all its partitions), and no longer merges sharded "+
			"databases into one table: set merge_sharded_tables = true to route each event to <table> as before, "+
			"or merge_sharded_tables = false to route it to <db>_<table>")
}

// Strategy returns InferSchemaStrategy, or [InferSchemaAuto] when unset
// or co is nil.
func (co *CanalOptions) Strategy() string {
	if co == nil || co.InferSchemaStrategy == "" {
		return InferSchemaAuto
	}
	return co.InferSchemaStrategy
}

// TinyintAsBoolean reports whether MySQL tinyint(1) is BOOLEAN
// (tinyint1_as_boolean, true by default and for nil).
func (co *CanalOptions) TinyintAsBoolean() bool {
	return co == nil || co.Tinyint1AsBoolean == nil || *co.Tinyint1AsBoolean
}

// TimestampAsNTZ reports whether MySQL timestamp is TIMESTAMP_NTZ
// (mysql_timestamp_as_ntz, true by default and for nil).
func (co *CanalOptions) TimestampAsNTZ() bool {
	return co == nil || co.MySQLTimestampAsNTZ == nil || *co.MySQLTimestampAsNTZ
}

// Includes compiles database_include and table_include so that each must
// match a whole name; nil for an unset one, which matches every name.
// Validate reports a pattern that does not compile; here its error names
// the attribute. A nil co has neither.
func (co *CanalOptions) Includes() (databases, tables *regexp.Regexp, err error) {
	if co == nil {
		return nil, nil, nil
	}
	if databases, err = compileInclude("database_include", co.DatabaseInclude); err != nil {
		return nil, nil, err
	}
	if tables, err = compileInclude("table_include", co.TableInclude); err != nil {
		return nil, nil, err
	}
	return databases, tables, nil
}

// compileInclude compiles pattern, the value of attr, as a whole-name
// match; nil for "".
func compileInclude(attr, pattern string) (*regexp.Regexp, error) {
	if pattern == "" {
		return nil, nil
	}
	re, err := CompileTopicPattern(pattern)
	if err != nil {
		return nil, &FieldError{Path: attr, Detail: regexpProblem(pattern, err)}
	}
	return re, nil
}

// regexpProblem says why pattern does not compile (err), in the words of
// the syntax the agent supports.
func regexpProblem(pattern string, err error) string {
	msg := strings.TrimPrefix(err.Error(), "error parsing regexp: ")
	hint := "the syntax is RE2: Java's, without look-around or back-references"
	if strings.Contains(pattern, "(?=") || strings.Contains(pattern, "(?!") || strings.Contains(pattern, "(?<=") || strings.Contains(pattern, "(?<!") {
		hint = "Java's look-around ((?=, (?!, (?<=, (?<!) is not supported: the syntax is RE2"
	}
	return "\"" + pattern + "\" does not compile: " + msg + " (" + hint + ")"
}

// validateChangelog checks the options of a changelog transformer tr, at
// the transformer collector col: canal_options' patterns and strategy,
// and the options that type the row image from the events, which a fixed
// json_options schema contradicts.
func (tr *Transformer) validateChangelog(col collector) {
	fixed := tr.JSONOptions != nil && (tr.JSONOptions.Schema != "" || tr.JSONOptions.SchemaFilePath != "")
	schemaAttrs := []string{col.path("json_options.schema"), col.path("json_options.schema_file_path")}
	if tr.DebeziumOptions.SchemaIncluded() && fixed {
		col.addInvolving("debezium_options.schema_include", schemaAttrs,
			"schema_include types the columns from each event's own schema, and json_options declares a fixed schema; remove one of them")
	}
	co := tr.CanalOptions
	if co == nil {
		return
	}
	cc := col.at("canal_options")
	for _, inc := range []struct{ attr, pattern string }{{"database_include", co.DatabaseInclude}, {"table_include", co.TableInclude}} {
		if inc.pattern == "" || !validateMaxLen(cc, inc.attr, inc.pattern, MaxTopicPatternLen) {
			continue
		}
		var fe *FieldError
		if _, err := compileInclude(inc.attr, inc.pattern); errors.As(err, &fe) {
			cc.add(inc.attr, "%s", fe.Detail)
		}
	}
	if s := co.InferSchemaStrategy; s != "" {
		if !validateChoice(cc, "infer_schema_strategy", s, InferSchemaStrategies, "strategies") {
			return
		}
		if s != InferSchemaAuto && fixed {
			cc.addInvolving("infer_schema_strategy", schemaAttrs,
				"infer_schema_strategy %s types the columns from each event's %s, and json_options declares a fixed schema; "+
					"remove one of them", s, map[string]string{InferSchemaSQLType: "sqlType", InferSchemaMySQLType: "mysqlType"}[s])
		}
	}
}

// changelogRoute returns the default route expression of a fanout schema
// whose value transformer tr is a changelog format: the source database
// and table of each event, lower case and joined by '_' ("inventory_customers"),
// or the table alone with merge_sharded_tables. "" for other transformers.
//
// A Debezium event whose source has a schema (PostgreSQL, SQL Server,
// Oracle, Db2: db is the database, schema the schema) routes to
// <db>_<schema>_<table> ("postgres_inventory_customers"). The three name
// the source table whatever the connector: one PostgreSQL database holds
// the same table name in several schemas (public.orders, audit.orders),
// and one SQL Server connector reads several databases (db1.dbo.orders,
// db2.dbo.orders), so neither <db>_<table> nor Flink CDC's <schema>.<table>
// alone keeps those tables apart; and none of them changes while the
// source table lives, so an event's route is stable. MySQL's events have
// no schema and keep <db>_<table>. A null or absent schema is left out,
// while a null db or table still makes the route NULL, an invalid route.
func changelogRoute(tr *Transformer) string {
	const v = "cast(value AS STRING)"
	// debezium reads source.<field> of an event, wrapped in
	// {"schema", "payload"} (schema_include) or not.
	debezium := func(field string) string {
		return "coalesce(" + v + ":['payload']['source']['" + field + "'], " + v + ":['source']['" + field + "'])"
	}
	// qualifier is what comes before the table name, '_' included.
	var qualifier, table string
	switch {
	case tr == nil:
		return ""
	case tr.Format == FormatDebeziumJSON:
		qualifier = debezium("db") + " || '_' || coalesce(" + debezium("schema") + " || '_', '')"
		table = debezium("table")
	case tr.Format == FormatCanalJSON:
		qualifier, table = v+":['database'] || '_'", v+":['table']"
	default:
		return ""
	}
	if tr.MergesShards() {
		return "lower(" + table + ")"
	}
	return "lower(" + qualifier + " || " + table + ")"
}

// RowOptionsImplied reports whether tr's json_options are exactly those
// Normalize gives a changelog transformer configured without them, so
// that a client can show them as not set. A client that sends json_options
// sets its parser options (allow_single_quotes ...), which these leave
// unset.
func (tr *Transformer) RowOptionsImplied() bool {
	if !tr.Changelog() || tr.JSONOptions == nil {
		return false
	}
	implied := &Transformer{Format: tr.Format}
	implied.normalizeChangelog()
	implied.JSONOptions.normalizeInference()
	return reflect.DeepEqual(implied.JSONOptions, tr.JSONOptions)
}
