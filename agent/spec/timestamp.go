package spec

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseTimestamp parses starting_timestamp or ending_timestamp: either
// milliseconds since the Unix epoch ("1700000000000") or an RFC 3339 time
// ("2023-11-14T22:13:20Z", fractional seconds allowed), and returns it as
// milliseconds since the epoch. A time before the epoch is refused: Kafka
// has no record timestamps before it.
func ParseTimestamp(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("the timestamp is empty: write milliseconds since the epoch (\"1700000000000\") or an RFC 3339 time (\"2023-11-14T22:13:20Z\")")
	}
	if isDigits(s) {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is too large for milliseconds since the epoch", s)
		}
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither milliseconds since the epoch (\"1700000000000\") nor an RFC 3339 time (\"2023-11-14T22:13:20Z\")", s)
	}
	ms := t.UnixMilli()
	if ms < 0 {
		return 0, fmt.Errorf("%q is before 1970-01-01T00:00:00Z, the earliest record timestamp", s)
	}
	return ms, nil
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
