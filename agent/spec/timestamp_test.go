package spec

import (
	"strings"
	"testing"
)

func TestParseTimestamp(t *testing.T) {
	good := []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"1700000000000", 1_700_000_000_000},
		{" 1700000000000 ", 1_700_000_000_000},
		{"2023-11-14T22:13:20Z", 1_700_000_000_000},
		{"2023-11-14T22:13:20.123Z", 1_700_000_000_123},
		{"2023-11-14T22:13:20.123456789Z", 1_700_000_000_123},
		{"2023-11-15T00:13:20+02:00", 1_700_000_000_000},
		{"1970-01-01T00:00:00Z", 0},
	}
	for _, tt := range good {
		got, err := ParseTimestamp(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseTimestamp(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	bad := []struct {
		in, detail string
	}{
		{"", "empty"},
		{"-1", "neither milliseconds"},
		{"1.5", "neither milliseconds"},
		{"99999999999999999999", "too large"},
		{"2023-11-14", "neither milliseconds"},
		{"2023-11-14 22:13:20", "neither milliseconds"},
		{"2023-11-14T22:13:20", "neither milliseconds"}, // no zone
		{"1969-12-31T23:59:59Z", "before 1970"},
	}
	for _, tt := range bad {
		_, err := ParseTimestamp(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.detail) {
			t.Errorf("ParseTimestamp(%q) error = %v; want one containing %q", tt.in, err, tt.detail)
		}
	}
}
