package pipeline

// Stand-ins for the spec methods of fanout schemas (helper fanout-api):
// replace fanoutTableSpec(f, name) with f.TableSpec(name),
// fanoutRouteExpression(f) with f.RouteExpression() and checkRoutedName with
// spec.CheckRoutedName, and delete this file at merge.

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// fanoutTableSpec returns the table spec a routed table runs with: the
// fanout schema's connector options, with its transform as the input
// column's JSON transformer, and its table configuration.
//
// A stand-in for spec's FanoutSchema.TableSpec, which replaces it.
func fanoutTableSpec(f *spec.FanoutSchema, name string) spec.Table {
	t := spec.Table{DestinationTable: name, ConnectorOptions: f.ConnectorOptions, TableConfiguration: f.TableConfiguration}
	if len(f.FanoutOptions.Transforms) > 0 {
		tr := f.FanoutOptions.Transforms[0]
		x := &spec.Transformer{Format: spec.FormatJSON, JSONOptions: tr.JSONOptions}
		ko := &t.ConnectorOptions.KafkaOptions
		if tr.InputColumn == spec.KeyColumn {
			ko.KeyTransformer = x
		} else {
			ko.ValueTransformer = x
		}
	}
	return t
}

// fanoutRouteExpression returns the expression that names a record's
// table: fanout_by, or the one table_id_fields stands for.
//
// A stand-in for spec's FanoutSchema.RouteExpression, which replaces it.
func fanoutRouteExpression(f *spec.FanoutSchema) string {
	o := &f.FanoutOptions
	if len(o.TableIDFields) == 0 {
		return o.FanoutBy
	}
	parts := make([]string, len(o.TableIDFields))
	for i, f := range o.TableIDFields {
		parts[i] = fmt.Sprintf("cast(value AS STRING):['%s']", strings.ReplaceAll(f, "'", `\'`))
	}
	return strings.Join(parts, " || '_' || ")
}

// checkRoutedName reports why s is not a valid routed table name: letters,
// digits and underscores, not only digits, 1 to [spec.MaxRoutedNameLen]
// characters, and not [spec.FanoutErrorsTable].
//
// A stand-in for spec.CheckRoutedName, which replaces it.
func checkRoutedName(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("fanout_by returned an empty string, which is no table name")
	case len(s) > spec.MaxRoutedNameLen:
		return fmt.Errorf("fanout_by returned a name of %d characters, longer than the %d a table name may have",
			len(s), spec.MaxRoutedNameLen)
	case strings.EqualFold(s, spec.FanoutErrorsTable):
		return fmt.Errorf("fanout_by returned %q, the table of records that cannot be routed", s)
	}
	digits := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			digits = false
		default:
			return fmt.Errorf("fanout_by returned %q, which is no table name: it holds %q, and a table name has only "+
				"letters, digits and underscores", s, firstRune(s[i:]))
		}
	}
	if digits {
		return fmt.Errorf("fanout_by returned %q, which is no table name: a table name is not only digits", s)
	}
	return nil
}

// firstRune returns the first character of s.
func firstRune(s string) string {
	r, _ := utf8.DecodeRuneInString(s)
	return string(r)
}
