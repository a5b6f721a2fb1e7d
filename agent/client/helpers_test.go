package client_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
)

// fakeAgent serves h as an agent for the length of t and returns a client
// of it, without a token, with opts.
func fakeAgent(t *testing.T, h http.HandlerFunc, opts ...client.Option) *client.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "", opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
