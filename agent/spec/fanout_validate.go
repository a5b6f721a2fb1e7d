package spec

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/expr"
)

// Normalize fills every unset optional attribute of f with its default, so
// the agent stores and returns the same values Terraform plans: the Kafka
// options' defaults, as a table has them, format JSON for a transform, and
// on_invalid_route FAIL.
func (f *FanoutSchema) Normalize() {
	f.ConnectorOptions.KafkaOptions.normalize()
	fo := &f.FanoutOptions
	for i := range fo.Transforms {
		tr := &fo.Transforms[i]
		if tr.Format == "" {
			tr.Format = FormatJSON
		}
		if tr.JSONOptions != nil {
			tr.JSONOptions.normalizeInference()
		}
	}
	if fo.OnInvalidRoute == "" {
		fo.OnInvalidRoute = OnInvalidRouteFail
	}
}

// Validate returns every problem with f, each on its attribute path. It
// parses and type-checks fanout_by (or the expression table_id_fields
// stands for) with [expr.Compile].
func (f *FanoutSchema) Validate() Errors {
	col := newCollector()
	validateName(col, "name", f.Name)
	validateRequiredName(col, "pipeline_name", f.Pipeline, "the name of the pipeline the fanout schema belongs to")
	validateDestination(col, f.DestinationCatalog, f.DestinationSchema)
	kc := col.at("connector_options").at("kafka_options")
	f.ConnectorOptions.KafkaOptions.validate(kc)
	f.ConnectorOptions.KafkaOptions.refuseOnFanout(kc)
	f.TableConfiguration.validate(col.at("table_configuration"))
	if len(f.TableConfiguration.PartitionBy) > 0 {
		// The routed tables' columns differ from table to table, and their
		// writers keep one open file per table, not per partition value.
		col.at("table_configuration").add("partition_by", "a fanout schema's tables cannot be partitioned yet; remove "+
			"partition_by, or write the topic with a pipeline table block, which can")
	}
	fc := col.at("fanout_options")
	f.FanoutOptions.validateRoute(fc, f.ConnectorOptions.KafkaOptions.ValueTransformer)
	validateShardMerge(kc, &f.FanoutOptions, f.ConnectorOptions.KafkaOptions.ValueTransformer)
	transformsOK := f.validateTransforms(fc, kc)
	f.validateInitialSchemaNames(col)
	if oir := f.FanoutOptions.OnInvalidRoute; oir != "" && !slices.Contains(OnInvalidRoutes, oir) {
		fc.add("on_invalid_route", "%q is not one of %s", oir, strings.Join(OnInvalidRoutes, ", "))
	}
	if transformsOK {
		f.checkColumns(col)
	}
	return *col.errs
}

// validateRoute checks fanout_by or table_id_fields under the
// fanout_options collector fc; value is the value transformer, whose
// changelog format routes by default.
func (fo *FanoutOptions) validateRoute(fc collector, value *Transformer) {
	fieldsPath := fc.path("table_id_fields")
	switch {
	case fo.FanoutBy != "" && len(fo.TableIDFields) > 0:
		fc.addInvolving("fanout_by", []string{fieldsPath},
			"fanout_by and table_id_fields are mutually exclusive; set only one of them")
		return
	case fo.FanoutBy == "" && len(fo.TableIDFields) == 0 && value.Changelog():
		// Each event names its source table: the default route.
		checkRouteExpression(fc, "fanout_by", "the default route of format "+value.Format+" does not compile:\n", changelogRoute(value))
		return
	case fo.FanoutBy == "" && len(fo.TableIDFields) == 0:
		// Each record goes to the table of its topic: the default route.
		return
	case fo.FanoutBy != "":
		if validateMaxLen(fc, "fanout_by", fo.FanoutBy, MaxFanoutByLen) {
			checkRouteExpression(fc, "fanout_by", "", fo.FanoutBy)
		}
		return
	case !validateMaxItems(fc, "table_id_fields", len(fo.TableIDFields), MaxTableIDFields):
		return
	}
	seen := map[string]int{}
	ok := true
	for i, name := range fo.TableIDFields {
		switch j, dup := seen[name]; {
		case name == "":
			fc.index("table_id_fields", i).add("", "a field name is required")
			ok = false
		case !validateMaxLen(fc.index("table_id_fields", i), "", name, MaxShortStringLen):
			ok = false
		case dup:
			fc.index("table_id_fields", i).add("", "field %q is already listed as table_id_fields[%d]", name, j)
			ok = false
		default:
			seen[name] = i
		}
	}
	if ok {
		checkRouteExpression(fc, "table_id_fields",
			"the field names do not make a valid route expression; avoid quotes and backslashes in them:\n", routeExpression(fo, nil))
	}
}

// validateInitialSchemaNames checks that the keys of initial_schemas of
// f's JSON options (the transformers' and the transform's) can name
// routed tables.
func (f *FanoutSchema) validateInitialSchemaNames(col collector) {
	type optionsAt struct {
		c  collector
		jo *JSONOptions
	}
	ko := &f.ConnectorOptions.KafkaOptions
	opts := []optionsAt{
		{col.at("connector_options.kafka_options.key_transformer.json_options"), ko.KeyTransformer.RowOptions()},
		{col.at("connector_options.kafka_options.value_transformer.json_options"), ko.ValueTransformer.RowOptions()},
	}
	for i := range f.FanoutOptions.Transforms {
		opts = append(opts, optionsAt{col.index("fanout_options.transforms", i).at("json_options"), f.FanoutOptions.Transforms[i].JSONOptions})
	}
	for _, o := range opts {
		if o.jo == nil {
			continue
		}
		for _, table := range slices.Sorted(maps.Keys(o.jo.InitialSchemas)) {
			if err := CheckRoutedName(table); err != nil && table != "" {
				o.c.add("initial_schemas", "%v: key each initial schema by the name of the routed table it applies to", err)
			}
		}
	}
}

// checkRouteExpression compiles src, the route expression of attribute
// attr, and reports its parse, resolution or type error (the
// [*expr.Error] text, with a caret under the position, after intro) or a
// result that is not a STRING.
func checkRouteExpression(fc collector, attr, intro, src string) {
	prog, err := expr.Compile(src)
	if err != nil {
		fc.add(attr, "%s%s", intro, err.Error())
		return
	}
	if t := prog.Type(); t != expr.TypeString {
		fc.add(attr, "%s returns %v; the table name is a STRING: cast it, e.g. cast(x AS STRING)", attr, t)
	}
}

// validateTransforms checks fanout_options.transforms under fc; kc is the
// kafka_options collector, whose transformers a transform must not double.
// It reports whether the transforms are fine enough to lay out the routed
// tables' columns.
func (f *FanoutSchema) validateTransforms(fc collector, kc collector) bool {
	trs := f.FanoutOptions.Transforms
	if len(trs) > 1 {
		fc.add("transforms", "%d transforms are set; fanout_options takes at most one", len(trs))
		return false
	}
	ok := true
	ko := &f.ConnectorOptions.KafkaOptions
	for i := range trs {
		tr := &trs[i]
		tc := fc.index("transforms", i)
		switch up := strings.ToUpper(tr.Format); {
		case tr.Format == "" || tr.Format == FormatJSON:
		case up == FormatJSON:
			tc.add("format", "%q is not JSON; formats are upper case: %q", tr.Format, FormatJSON)
			ok = false
		case slices.Contains(Formats, up):
			tc.add("format", "format %s is not supported for fanout transforms: only JSON is", up)
			ok = false
		default:
			tc.add("format", "%q is not a format of fanout transforms: only JSON is", tr.Format)
			ok = false
		}
		switch tr.InputColumn {
		case "":
			tc.add("input_column", "input_column is required: %s or %s, the column the transform parses in place", KeyColumn, ValueColumn)
			ok = false
		case KeyColumn, ValueColumn:
			side, own := KeyColumn+"_transformer", ko.KeyTransformer
			if tr.InputColumn == ValueColumn {
				side, own = ValueColumn+"_transformer", ko.ValueTransformer
			}
			if own != nil {
				tc.addInvolving("input_column", []string{kc.path(side)},
					"the transform is the %s column's transformer, and connector_options.kafka_options.%s is set too; remove one of them",
					tr.InputColumn, side)
				ok = false
			}
		default:
			tc.add("input_column", "%q is not %s or %s: the transform parses a column of the raw record in place",
				tr.InputColumn, KeyColumn, ValueColumn)
			ok = false
		}
		if tr.JSONOptions != nil {
			n := len(*fc.errs)
			tr.JSONOptions.validate(tc.at("json_options"))
			if tr.InputColumn == KeyColumn && tr.JSONOptions.EmptyValueAsDelete != nil && *tr.JSONOptions.EmptyValueAsDelete {
				tc.add("json_options.empty_value_as_delete", "empty_value_as_delete applies only to a transform of the value: "+
					"it makes a record whose value is null (a tombstone) a delete row")
			}
			ok = ok && len(*fc.errs) == n
		}
	}
	return ok
}

// checkColumns reports what is wrong with the columns of the routed tables
// (colliding names, a reserved source metadata column, a schema that does
// not parse), as [Table.Layout] finds it, on the fanout schema's paths: a
// problem of the transformer the transform becomes is reported on the
// transform.
func (f *FanoutSchema) checkColumns(col collector) {
	t := f.TableSpec("routed")
	_, errs := t.Layout()
	folded := ""
	if len(f.FanoutOptions.Transforms) == 1 {
		folded = "connector_options.kafka_options." + f.FanoutOptions.Transforms[0].InputColumn + "_transformer."
	}
	for _, e := range errs {
		if folded != "" {
			if rest, ok := strings.CutPrefix(e.Path, folded); ok {
				e.Path = "fanout_options.transforms[0]." + rest
			}
		}
		*col.errs = append(*col.errs, e)
	}
}

// Warnings returns what f sets that the agent accepts but ignores: an
// output_column of a transform, which always writes back to its input
// column, as the reference says.
func (f *FanoutSchema) Warnings() Errors {
	col := newCollector()
	for i, tr := range f.FanoutOptions.Transforms {
		if tr.OutputColumn != "" {
			col.index("fanout_options.transforms", i).add("output_column",
				"output_column %q is ignored: the transform writes its result back to input_column, as the reference says",
				tr.OutputColumn)
		}
	}
	return *col.errs
}

// RouteExpression returns the expression that names each record's table:
// fanout_by, or for table_id_fields the values of those top-level fields
// of the JSON value joined by '_',
//
//	cast(value AS STRING):['f1'] || '_' || cast(value AS STRING):['f2']
//
// so that a missing field makes the result NULL, an invalid route. With
// neither, a value transformer of a changelog format routes each event by
// its source database and table: lower(db || '_' || table), or the table
// alone with merge_sharded_tables; any other value routes each record by its
// topic ([RouteByTopic]).
func (f *FanoutSchema) RouteExpression() string {
	return routeExpression(&f.FanoutOptions, f.ConnectorOptions.KafkaOptions.ValueTransformer)
}

// routeExpression is [FanoutSchema.RouteExpression] of fo, whose value
// transformer is value.
func routeExpression(fo *FanoutOptions, value *Transformer) string {
	switch {
	case fo.FanoutBy != "":
		return fo.FanoutBy
	case len(fo.TableIDFields) == 0 && value.Changelog():
		return changelogRoute(value)
	case len(fo.TableIDFields) == 0:
		return RouteByTopic
	}
	quote := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	var b strings.Builder
	for i, name := range fo.TableIDFields {
		if i > 0 {
			b.WriteString(" || '_' || ")
		}
		fmt.Fprintf(&b, "cast(value AS STRING):['%s']", quote.Replace(name))
	}
	return b.String()
}

// RouteByTopic is the route of a fanout schema with neither fanout_by nor
// table_id_fields whose value is not a changelog format: the record's
// topic, as Flink names a JSON table after its topic. A table name holds
// only letters, digits and '_', so every other character of the topic
// ('.', '-') becomes '_', and the name is lower case: topic "Orders.v1"
// goes to table orders_v1. A topic of digits only ("2024") has no valid
// name: an invalid route.
const RouteByTopic = "lower(regexp_replace(topic, '[^A-Za-z0-9_]', '_'))"

// TableSpec returns the table a routed table named name runs as: its
// destination table is name (pass the routed name lowercased), its Kafka
// options are f's with the transform folded into its input column's
// transformer (JSON with the transform's json_options; without them, a
// VARIANT column), and its table configuration is f's. The result shares
// f's transformers and JSON options: treat it as read-only.
func (f *FanoutSchema) TableSpec(name string) Table {
	ko := f.ConnectorOptions.KafkaOptions
	ko.Topics = slices.Clone(ko.Topics)
	for _, tr := range f.FanoutOptions.Transforms {
		folded := &Transformer{Format: FormatJSON, JSONOptions: tr.JSONOptions}
		switch tr.InputColumn {
		case KeyColumn:
			ko.KeyTransformer = folded
		case ValueColumn:
			ko.ValueTransformer = folded
		}
	}
	return Table{
		DestinationTable:   name,
		ConnectorOptions:   ConnectorOptions{KafkaOptions: ko},
		TableConfiguration: f.TableConfiguration,
	}
}

// QualifiedSchema returns "<catalog>.<schema>", the destination schema f
// owns.
func (f *FanoutSchema) QualifiedSchema() string {
	return f.DestinationCatalog + "." + f.DestinationSchema
}

// CheckRoutedName returns nil when s, a fanout_by result, can name a routed
// table: 1 to [MaxRoutedNameLen] ASCII letters, digits and '_', not all
// digits ("2024_events" is fine, "123" is not), and not
// [FanoutErrorsTable] in any case. Otherwise its error says what is wrong
// and quotes what was found. It does not allocate when s is valid.
func CheckRoutedName(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("the table name is empty")
	case len(s) > MaxRoutedNameLen:
		return fmt.Errorf("the table name %q is %d bytes long, more than the maximum of %d", clip(s), len(s), MaxRoutedNameLen)
	case strings.EqualFold(s, FanoutErrorsTable):
		return fmt.Errorf("the table name %q is reserved for the records that cannot be routed", s)
	case strings.EqualFold(s, DirtyRecordsTable):
		return fmt.Errorf("the table name %q is reserved for the records that do not decode (ignore_errors)", s)
	}
	digits := true
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
			digits = false
		default:
			return fmt.Errorf("the table name %q has %q at byte %d; a table name is letters, digits and '_' only", clip(s), c, i)
		}
	}
	if digits {
		return fmt.Errorf("the table name %q is all digits; it needs a letter or '_' too", s)
	}
	return nil
}

// clip shortens s for a message to its first 64 bytes and "...".
func clip(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
