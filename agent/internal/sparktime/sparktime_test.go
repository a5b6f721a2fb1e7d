package sparktime

import (
	"strings"
	"testing"
	"time"
)

// micros renders t as an RFC 3339 UTC instant.
func micros(t Time) string {
	return time.UnixMicro(t.UnixMicros()).UTC().Format("2006-01-02T15:04:05.999999Z07:00")
}

// TestParseDate checks Spark's lenient DATE text (no dateFormat).
func TestParseDate(t *testing.T) {
	for in, want := range map[string]string{
		"2024-05-01": "2024-05-01", "2024-5-1": "2024-05-01", " 2024-05-01\t": "2024-05-01",
		"+2024-05-01": "2024-05-01", "2024": "2024-01-01", "2024-05": "2024-05-01",
		"2024-05-01T23:59:59Z": "2024-05-01", "2024-05-01 junk": "2024-05-01", "2024-05-01T": "2024-05-01",
		"-1": "1969-12-31", "0": "1970-01-01", "2024-05-01GMT": "2024-05-01",
		"2023-02-29": "", "2024/05/01": "", "2024-05-01xyz": "", "2024-": "", "99999999999": "", "": "", "20240": "20240-01-01",
	} {
		days, ok := ParseDate([]byte(in))
		got := ""
		if ok {
			got = time.Unix(days*86400, 0).UTC().Format("2006-01-02")
		}
		if got != want {
			t.Errorf("ParseDate(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestParseTimestamp checks Spark's lenient TIMESTAMP text (no
// timestampFormat) and TIMESTAMP_NTZ.
func TestParseTimestamp(t *testing.T) {
	for in, want := range map[string]string{
		"2024-01-02T03:04:05.123Z":       "2024-01-02T03:04:05.123Z",
		"2024-1-2 3:4:5":                 "2024-01-02T03:04:05Z",
		"2024-01-02T03:04":               "2024-01-02T03:04:00Z",
		"2024-01-02":                     "2024-01-02T00:00:00Z",
		"2024-01-02T03:04:05.1234567":    "2024-01-02T03:04:05.123456Z",
		"2024-01-02T03:04:05.":           "2024-01-02T03:04:05Z",
		"2024-01-02T03:04:05+01:00":      "2024-01-02T02:04:05Z",
		"2024-01-02T03:04:05-0130":       "2024-01-02T04:34:05Z",
		"2024-01-02T03:04:05+1":          "2024-01-02T02:04:05Z",
		"2024-01-02T03:04:05+01:00:30":   "2024-01-02T02:03:35Z",
		"2024-01-02T03:04:05 UTC":        "2024-01-02T03:04:05Z",
		"2024-01-02T03:04:05GMT+01:00":   "2024-01-02T02:04:05Z",
		"2024-01-02T03:04:05 UTC-02":     "2024-01-02T05:04:05Z",
		"2024-01-02T25:00:00Z":           "",
		"2024-01-02T03:04:05 Paris":      "",
		"2024-01-02T03:04:05+19:00":      "",
		"2024-01-02T03:04Z":              "",
		"2024-01-02T":                    "",
		"03:04:05":                       "",
		"1704164645":                     "",
		"2024-01-02T03:04:05.5 trailing": "",
	} {
		ts, ok := ParseTimestamp([]byte(in))
		got := ""
		if ok {
			got = micros(ts)
		}
		if got != want {
			t.Errorf("ParseTimestamp(%q) = %q, want %q", in, got, want)
		}
	}
	if _, ok := ParseTimestampNTZ([]byte("2024-01-02T03:04:05Z")); ok {
		t.Error("ParseTimestampNTZ accepts a zone")
	}
	if ts, ok := ParseTimestampNTZ([]byte("2024-01-02 03:04")); !ok || micros(ts) != "2024-01-02T03:04:00Z" {
		t.Errorf("ParseTimestampNTZ = %v, %v", ts, ok)
	}
}

// TestPattern checks patterns: what they accept, and what Compile refuses.
func TestPattern(t *testing.T) {
	tests := []struct{ pattern, in, want string }{
		{"dd/MM/yyyy HH:mm:ss", "02/01/2024 03:04:05", "2024-01-02T03:04:05Z"},
		{"dd/MM/yyyy HH:mm:ss", "2/1/2024 03:04:05", ""},
		{"dd/MM/yyyy HH:mm:ss", "02/01/2024 03:04:05 x", ""},
		{"d/M/yyyy", "2/1/2024", "2024-01-02T00:00:00Z"},
		{"yyyyMMdd", "20240501", "2024-05-01T00:00:00Z"},
		{"yyyyMMdd", "2024051", ""},
		{"yyMMdd", "240501", "2024-05-01T00:00:00Z"},
		{"yMMdd", "20240501", "2024-05-01T00:00:00Z"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2024-01-02T03:04:05.12+01:00", "2024-01-02T02:04:05.12Z"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2024-01-02T03:04:05.123Z", "2024-01-02T03:04:05.123Z"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2024-01-02T03:04:05.123+0100", ""},
		{"yyyy-MM-dd HH:mm:ss.SSSSSSSSS", "2024-01-02 03:04:05.123456789", "2024-01-02T03:04:05.123456Z"},
		{"MM/dd/yyyy hh:mm:ss a", "01/02/2024 03:04:05 pm", "2024-01-02T15:04:05Z"},
		{"MM/dd/yyyy hh:mm:ss a", "01/02/2024 12:00:00 AM", "2024-01-02T00:00:00Z"},
		{"MM/dd/yyyy hh:mm:ss a", "01/02/2024 13:04:05 PM", ""},
		{"yyyyMMddHHmmssZ", "20240102030405-0530", "2024-01-02T08:34:05Z"},
		{"yyyyMMddHHmmssZ", "20240102030405Z", ""},
		{"yyyyMMddHHmmssZZZZZ", "20240102030405Z", "2024-01-02T03:04:05Z"},
		{"yyyy-MM-dd HH:mm x", "2024-01-02 03:04 +0130", "2024-01-02T01:34:00Z"},
		{"yyyy-MM-dd HH:mm x", "2024-01-02 03:04 +01", "2024-01-02T02:04:00Z"},
		{"yyyy-MM-dd HH:mm xxxxx", "2024-01-02 03:04 +01:00:30", "2024-01-02T02:03:30Z"},
		{"yyyy-MM-dd HH:mm X", "2024-01-02 03:04 Z", "2024-01-02T03:04:00Z"},
		{"'at' yyyy 'o''clock'", "AT 2024 o'clock", "2024-01-01T00:00:00Z"},
		{"dd.MM.yyyy", "31.02.2024", ""},
	}
	for _, tc := range tests {
		p, err := Compile(tc.pattern)
		if err != nil {
			t.Errorf("Compile(%q): %v", tc.pattern, err)
			continue
		}
		ts, ok := p.Parse([]byte(tc.in))
		got := ""
		if ok {
			got = micros(ts)
		}
		if got != tc.want {
			t.Errorf("%q.Parse(%q) = %q, want %q", tc.pattern, tc.in, got, tc.want)
		}
	}
	for pattern, want := range map[string]string{
		"yyyy-MM-dd EEE":     `"EEE" at position 12: unsupported pattern letter`,
		"yyyy-MM-dd[ HH]":    `'[' at position 11: optional sections`,
		"yyyy 'x":            "unterminated quote at position 6",
		"MMM":                "text months are not supported",
		"hh:mm":              "h (hour of AM/PM) and a (AM/PM) go together",
		"ZZZZ":               "only Z, ZZ, ZZZ and ZZZZZ are supported",
		"SSSSSSSSSS":         "at most 9 fraction digits",
		"yyyy-MM-dd VV":      "unsupported pattern letter",
		"yyyy-MM-dd HH:mm z": "unsupported pattern letter",
	} {
		if _, err := Compile(pattern); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile(%q) = %v, want %q", pattern, err, want)
		}
	}
}

// TestParseAllocs fails when parsing allocates.
func TestParseAllocs(t *testing.T) {
	p, err := Compile("yyyy-MM-dd'T'HH:mm:ss.SSSXXX")
	if err != nil {
		t.Fatal(err)
	}
	in, lenient := []byte("2024-01-02T03:04:05.123+01:00"), []byte("2024-1-2 3:4:5.5 UTC+01:00")
	if n := testing.AllocsPerRun(100, func() {
		p.Parse(in)
		ParseTimestamp(lenient)
		ParseDate(lenient)
	}); n > 0 {
		t.Errorf("%v allocations per parse", n)
	}
}
