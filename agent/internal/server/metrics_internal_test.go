package server

import (
	"bytes"
	"testing"
)

func TestMetricFamilyEscapes(t *testing.T) {
	f := metricFamily{name: "m", typ: "gauge", help: "a \\ b\nc"}
	f.add(1, "l", "quote \" back \\ nl \n end")
	f.add(-2)
	var b bytes.Buffer
	f.writeTo(&b)
	want := "# HELP m a \\\\ b\\nc\n" +
		"# TYPE m gauge\n" +
		"m{l=\"quote \\\" back \\\\ nl \\n end\"} 1\n" +
		"m -2\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}
