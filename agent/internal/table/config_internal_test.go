package table

import (
	"strings"
	"testing"
	"time"
)

func TestParseInterval(t *testing.T) {
	const day = 24 * time.Hour
	good := []struct {
		in   string
		want time.Duration
	}{
		{"interval 30 days", 30 * day},
		{"interval 1 week", 7 * day},
		{"INTERVAL 1 Day", day},
		{"12 hours", 12 * time.Hour},
		{"interval 1 week 2 days 3 hours", 9*day + 3*time.Hour},
		{"interval 90 seconds 500 milliseconds 7 microseconds", 90*time.Second + 500*time.Millisecond + 7*time.Microsecond},
		{"interval 0 days", 0},
	}
	for _, tt := range good {
		if got, err := parseInterval(tt.in); err != nil || got != tt.want {
			t.Errorf("parseInterval(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "interval", "30", "interval 30", "interval 1 month", "interval -1 days",
		"interval x days", "interval 1 day 2", "interval 99999999999 weeks"} {
		if got, err := parseInterval(in); err == nil {
			t.Errorf("parseInterval(%q) = %v, want an error", in, got)
		}
	}
}

func TestReadLogConfig(t *testing.T) {
	c, errs := readLogConfig(nil)
	if want := (logConfig{10, 30 * 24 * time.Hour, 7 * 24 * time.Hour, true}); c != want || errs != nil {
		t.Errorf("defaults = %+v, %v; want %+v", c, errs, want)
	}
	c, errs = readLogConfig(map[string]string{
		"delta.checkpointInterval":           "3",
		"delta.logRetentionDuration":         "interval 2 days",
		"delta.deletedFileRetentionDuration": "interval 1 hour",
		"delta.enableExpiredLogCleanup":      "false",
	})
	if want := (logConfig{3, 48 * time.Hour, time.Hour, false}); c != want || errs != nil {
		t.Errorf("configured = %+v, %v; want %+v", c, errs, want)
	}
	c, errs = readLogConfig(map[string]string{
		"delta.checkpointInterval":      "0",
		"delta.logRetentionDuration":    "forever",
		"delta.enableExpiredLogCleanup": "maybe",
	})
	if want := (logConfig{10, 30 * 24 * time.Hour, 7 * 24 * time.Hour, true}); c != want || len(errs) != 3 {
		t.Fatalf("invalid = %+v, %v; want the defaults and 3 errors", c, errs)
	}
	for i, key := range []string{"delta.checkpointInterval", "delta.logRetentionDuration", "delta.enableExpiredLogCleanup"} {
		if !strings.Contains(errs[i].Error(), key) {
			t.Errorf("error %q does not name %s", errs[i], key)
		}
	}
}
