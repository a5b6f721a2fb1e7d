package server

import (
	_ "embed"
	"net/http"
)

// openAPI is the API as an OpenAPI 3 document. TestOpenAPI checks that it
// documents every route and nothing else, and regenerates it from the
// route list and the spec types with -update.
//
//go:embed openapi.json
var openAPI []byte

// serveOpenAPI answers GET /openapi.json, which needs no token (see the
// package documentation).
func serveOpenAPI(w http.ResponseWriter, _ *http.Request) error {
	writeBody(w, http.StatusOK, "application/json", openAPI)
	return nil
}
