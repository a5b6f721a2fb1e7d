package server

import (
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// A validation problem that quotes a secret of the connection being PUT,
// which no redactor knows yet, does not carry it back.
func TestWithoutOwnSecrets(t *testing.T) {
	c := &spec.Connection{Name: "c", TLS: &spec.TLS{KeyPEM: "not-a-pem-key"}}
	errs := spec.Errors{{Path: "tls.key_pem", Detail: `"not-a-pem-key" is not PEM`}, {Path: "name", Detail: "fine"}}
	got := withoutOwnSecrets(c, errs)
	if got[0].Detail != `"[redacted]" is not PEM` || got[1].Detail != "fine" {
		t.Errorf("withoutOwnSecrets = %v", got)
	}
	if errs[0].Detail != `"not-a-pem-key" is not PEM` {
		t.Errorf("the problems given were changed: %v", errs)
	}
}
