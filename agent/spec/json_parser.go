package spec

import (
	"fmt"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/sparktime"
)

// SingleQuotes reports whether the JSON parser accepts 'single-quoted'
// strings and names: AllowSingleQuotes, true by default as in Spark. A nil
// receiver has the defaults.
func (o *JSONOptions) SingleQuotes() bool {
	return o == nil || o.AllowSingleQuotes == nil || *o.AllowSingleQuotes
}

// NonNumericNumbers reports whether the JSON parser accepts NaN, Infinity,
// +Infinity and -Infinity as numbers (and "NaN", "Infinity", "+INF",
// "-INF" ... strings for FLOAT and DOUBLE): AllowNonNumericNumbers, true by
// default as in Spark. A nil receiver has the defaults.
func (o *JSONOptions) NonNumericNumbers() bool {
	return o == nil || o.AllowNonNumericNumbers == nil || *o.AllowNonNumericNumbers
}

// Formats compiles TimestampFormat and DateFormat; nil for an empty one,
// which means Spark's lenient parsing. A nil receiver has neither. The
// timestamp format names [TimestampFormatSQL] and [TimestampFormatISO8601]
// are nil too: the lenient parser reads both "yyyy-MM-dd HH:mm:ss[.fraction]"
// and ISO 8601 text; [JSONOptions.TimestampFormatName] tells them apart.
func (o *JSONOptions) Formats() (timestamps, dates *sparktime.Pattern, err error) {
	if o == nil {
		return nil, nil, nil
	}
	if o.TimestampFormat != "" && o.TimestampFormatName() == "" {
		if timestamps, err = sparktime.Compile(o.TimestampFormat); err != nil {
			return nil, nil, fmt.Errorf("timestamp_format %q: %w", o.TimestampFormat, err)
		}
	}
	if o.DateFormat != "" {
		if dates, err = sparktime.Compile(o.DateFormat); err != nil {
			return nil, nil, fmt.Errorf("date_format %q: %w", o.DateFormat, err)
		}
	}
	return timestamps, dates, nil
}

// TimestampFormatName returns TimestampFormat when it is one of Flink's
// names of timestamp formats, [TimestampFormatSQL] or
// [TimestampFormatISO8601], and "" when it is a Spark pattern or unset. A
// nil receiver has none.
func (o *JSONOptions) TimestampFormatName() string {
	if o != nil && (o.TimestampFormat == TimestampFormatSQL || o.TimestampFormat == TimestampFormatISO8601) {
		return o.TimestampFormat
	}
	return ""
}

// validateParser checks the Spark parser options: the datetime patterns
// must compile, except the names of timestamp formats.
func (jo *JSONOptions) validateParser(col collector) {
	for _, f := range []struct{ attr, pattern string }{
		{"timestamp_format", jo.TimestampFormat}, {"date_format", jo.DateFormat},
	} {
		if f.pattern == "" || f.attr == "timestamp_format" && jo.TimestampFormatName() != "" ||
			!validateMaxLen(col, f.attr, f.pattern, MaxShortStringLen) {
			continue
		}
		if _, err := sparktime.Compile(f.pattern); err != nil {
			col.add(f.attr, "%q is not a supported Spark datetime pattern: %v", f.pattern, err)
		}
	}
}
