package spec

import (
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

// TimestampPattern returns TimestampFormat when it is a Spark datetime
// pattern, and "" when it is unset, which means Spark's lenient parsing, or
// one of the timestamp format names [TimestampFormatSQL] and
// [TimestampFormatISO8601]: the lenient parser reads both
// "yyyy-MM-dd HH:mm:ss[.fraction]" and ISO 8601 text, and
// [JSONOptions.TimestampFormatName] tells them apart. A nil receiver has
// none.
func (o *JSONOptions) TimestampPattern() string {
	if o == nil || o.TimestampFormatName() != "" {
		return ""
	}
	return o.TimestampFormat
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
func (o *JSONOptions) validateParser(col collector) {
	for _, f := range []struct{ attr, pattern string }{
		{"timestamp_format", o.TimestampPattern()}, {"date_format", o.DateFormat},
	} {
		if f.pattern == "" || !validateMaxLen(col, f.attr, f.pattern, MaxShortStringLen) {
			continue
		}
		if _, err := sparktime.Compile(f.pattern); err != nil {
			col.add(f.attr, "%q is not a supported Spark datetime pattern: %v", f.pattern, err)
		}
	}
}
