package spec

import (
	"fmt"
	"strings"
)

// FieldError is one validation problem. Path is the attribute it belongs to,
// in Terraform syntax (`table[0].destination_table`); an empty Path means the
// object as a whole. Involves lists other attribute paths the rule read, so a
// caller that does not know some values yet (Terraform at plan time) can drop
// a problem that depends on an unknown value.
type FieldError struct {
	Path     string   `json:"path"`
	Detail   string   `json:"detail"`
	Involves []string `json:"-"`
}

// Error implements error as "path: detail".
func (e FieldError) Error() string {
	if e.Path == "" {
		return e.Detail
	}
	return e.Path + ": " + e.Detail
}

// Errors is the list of problems Validate found; nil when there are none.
type Errors []FieldError

// Error joins every problem on its own line.
func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Err returns es as an error, or nil when es is empty.
func (es Errors) Err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// Paths returns every path a problem names or involves.
func (e FieldError) Paths() []string {
	return append([]string{e.Path}, e.Involves...)
}

// collector gathers problems under a path prefix.
type collector struct {
	errs *Errors
	base string
}

func newCollector() collector { return collector{errs: new(Errors)} }

// at returns a collector for the child attribute name.
func (c collector) at(name string) collector {
	if c.base == "" {
		return collector{errs: c.errs, base: name}
	}
	return collector{errs: c.errs, base: c.base + "." + name}
}

// index returns a collector for element i of the list attribute name.
func (c collector) index(name string, i int) collector {
	return collector{errs: c.errs, base: c.at(name).base + fmt.Sprintf("[%d]", i)}
}

// path returns the full path of the child attribute name.
func (c collector) path(name string) string { return c.at(name).base }

// add records a problem on the child attribute name ("" for c itself).
func (c collector) add(name, format string, args ...any) {
	p := c.base
	if name != "" {
		p = c.path(name)
	}
	*c.errs = append(*c.errs, FieldError{Path: p, Detail: fmt.Sprintf(format, args...)})
}

// addInvolving records a problem that also depends on the other attributes.
func (c collector) addInvolving(name string, involves []string, format string, args ...any) {
	c.add(name, format, args...)
	(*c.errs)[len(*c.errs)-1].Involves = involves
}
