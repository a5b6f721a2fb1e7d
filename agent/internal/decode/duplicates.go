package decode

import (
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// droppedFields returns the test of the top-level field names of layout's
// key (key true) or value that kafka_options.duplicate_field_strategy
// leaves out, nil when it leaves out none: those of the losing side whose
// column name (its prefix, then the name) a column of the preferred side
// takes, ignoring case, as [spec.Layout] drops them from the side's Fields.
// A decoder whose schema has more fields than the columns (Avro) skips
// them.
func droppedFields(layout *spec.Layout, key bool) func(name string) bool {
	lose, win := &layout.Value, &layout.Key
	switch {
	case layout.Duplicate == spec.DuplicateFieldPreferKey && !key:
	case layout.Duplicate == spec.DuplicateFieldPreferValue && key:
		lose, win = win, lose
	default:
		return nil
	}
	taken := map[string]bool{}
	switch {
	case win.Fields != nil:
		for _, f := range win.Fields {
			taken[strings.ToLower(win.Prefix+f.Name)] = true
		}
	case !win.Pending() && !win.Inferred():
		taken[strings.ToLower(win.Column)] = true
	}
	prefix := lose.Prefix
	return func(name string) bool { return taken[strings.ToLower(prefix+name)] }
}
