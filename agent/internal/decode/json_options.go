package decode

import (
	"fmt"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/sparktime"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// jsonFormats compiles the datetime patterns of o, a part's JSON options:
// nil for one that is unset, which means Spark's lenient parsing, and for a
// timestamp_format that names a format rather than spelling a pattern
// ([spec.JSONOptions.TimestampPattern]). A nil o has neither.
func jsonFormats(o *spec.JSONOptions) (timestamps, dates *sparktime.Pattern, err error) {
	if p := o.TimestampPattern(); p != "" {
		if timestamps, err = sparktime.Compile(p); err != nil {
			return nil, nil, fmt.Errorf("timestamp_format %q: %w", p, err)
		}
	}
	if o != nil && o.DateFormat != "" {
		if dates, err = sparktime.Compile(o.DateFormat); err != nil {
			return nil, nil, fmt.Errorf("date_format %q: %w", o.DateFormat, err)
		}
	}
	return timestamps, dates, nil
}

// InferOptions returns the inference switches of jo, with their defaults
// where unset: string type inference on, primitives as string off, and
// Spark's parser defaults (single quotes and non-numeric numbers accepted).
func InferOptions(jo *spec.JSONOptions) schema.InferOptions {
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
		FlattenNested:          on(jo.FlattenNestedColumns, false),
	}
}
