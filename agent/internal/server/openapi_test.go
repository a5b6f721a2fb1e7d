package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// The OpenAPI document is served without a token: it holds nothing of the
// agent's state.
func TestServeOpenAPI(t *testing.T) {
	a := newAgent(t, "")
	status, h, body := raw(t, http.MethodGet, a.url+"/openapi.json", "", "")
	var doc struct {
		OpenAPI string         `json:"openapi"`
		Paths   map[string]any `json:"paths"`
	}
	if status != http.StatusOK || h.Get("Content-Type") != "application/json" || json.Unmarshal([]byte(body), &doc) != nil ||
		doc.OpenAPI != "3.0.3" || doc.Paths["/v1/pipelines/{name}"] == nil {
		t.Fatalf("GET /openapi.json without a token: %d %s %.200s", status, h.Get("Content-Type"), body)
	}
}
