package provider

import (
	"errors"
	"net/http"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

func TestParseAttrPath(t *testing.T) {
	t.Parallel()
	good := []struct {
		in   string
		want path.Path
	}{
		{"", path.Empty()},
		{"name", path.Root("name")},
		{"table[0].destination_table", path.Root("table").AtListIndex(0).AtName("destination_table")},
		{"table[12].connector_options.kafka_options.topics",
			path.Root("table").AtListIndex(12).AtName("connector_options").AtName("kafka_options").AtName("topics")},
		{"table[0].connector_options.kafka_options.topics[1]",
			path.Root("table").AtListIndex(0).AtName("connector_options").AtName("kafka_options").AtName("topics").AtListIndex(1)},
		{"bootstrap_servers[3]", path.Root("bootstrap_servers").AtListIndex(3)},
		{"a[1][2].b", path.Root("a").AtListIndex(1).AtListIndex(2).AtName("b")},
	}
	for _, tc := range good {
		got, err := parseAttrPath(tc.in)
		if err != nil {
			t.Errorf("parseAttrPath(%q): %v", tc.in, err)
			continue
		}
		if !got.Equal(tc.want) {
			t.Errorf("parseAttrPath(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, in := range []string{".name", "table[", "table[x]", "table[-1]", "table[0]x", "a..b", "[0]"} {
		if got, err := parseAttrPath(in); err == nil {
			t.Errorf("parseAttrPath(%q) = %s, want an error", in, got)
		}
	}
}

func TestPathSetCovers(t *testing.T) {
	t.Parallel()
	s := pathSet{"table[1]": true, "table[0].connector_options.kafka_options.topics": true}
	for p, want := range map[string]bool{
		"table[1]":                   true,
		"table[1].destination_table": true,
		"table[1].connector_options.kafka_options.topics[0]":     true,
		"table[0].connector_options.kafka_options.topics":        true,
		"table[0].connector_options.kafka_options.topics[2]":     true,
		"table[0].connector_options.kafka_options":               false,
		"table[0].connector_options.kafka_options.topic_pattern": false,
		"table[10].destination_table":                            false,
		"table":                                                  false,
		"":                                                       false,
	} {
		if got := s.covers(p); got != want {
			t.Errorf("covers(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestAddFieldErrorsSkipsUnknown(t *testing.T) {
	t.Parallel()
	errs := []spec.FieldError{
		{Path: "name", Detail: "bad name"},
		{Path: "table[0].connector_options.kafka_options.topics", Detail: "xor",
			Involves: []string{"table[0].connector_options.kafka_options.topic_pattern"}},
		{Path: "table[1].destination_table", Detail: "dup", Involves: []string{"table[0].destination_table"}},
		{Path: "", Detail: "whole object"},
	}
	var diags diag.Diagnostics
	unknown := pathSet{
		"table[0].connector_options.kafka_options.topic_pattern": true,
		"table[0].destination_table":                             true,
	}
	addFieldErrors(&diags, "pipeline", errs, func(e spec.FieldError) bool { return unknown.anyCovered(e.Paths()) })
	if len(diags) != 2 {
		t.Fatalf("got %d diagnostics, want 2 (name, whole object): %v", len(diags), diags)
	}
	withPath, ok := diags[0].(diag.DiagnosticWithPath)
	if !ok || !withPath.Path().Equal(path.Root("name")) || diags[0].Detail() != "bad name" {
		t.Errorf("first diagnostic = %v, want one on name with detail %q", diags[0], "bad name")
	}
	if _, ok := diags[1].(diag.DiagnosticWithPath); ok {
		t.Errorf("a problem with an empty path must not be an attribute diagnostic: %v", diags[1])
	}
}

func TestAddAgentError(t *testing.T) {
	t.Parallel()
	var diags diag.Diagnostics
	addAgentError(&diags, "pipeline", "Cannot apply", &client.APIError{Status: http.StatusUnprocessableEntity,
		Problems: []spec.FieldError{{Path: "table[0].destination_table", Detail: "taken"}}})
	want := path.Root("table").AtListIndex(0).AtName("destination_table")
	if d, ok := diags[0].(diag.DiagnosticWithPath); len(diags) != 1 || !ok || !d.Path().Equal(want) {
		t.Fatalf("422 problems: got %v, want one diagnostic on %s", diags, want)
	}
	diags = nil
	addAgentError(&diags, "pipeline", "Cannot apply", errors.New("connection refused"))
	if len(diags) != 1 || diags[0].Summary() != "Cannot apply" || diags[0].Detail() != "connection refused" {
		t.Fatalf("plain error: got %v", diags)
	}
}
