package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// pathName fills *name from the {name} of the URL when the body left it
// out, and refuses a body that names another object.
func pathName(r *http.Request, name *string) error {
	want := r.PathValue("name")
	switch *name {
	case "":
		*name = want
		return nil
	case want:
		return nil
	default:
		return invalid("the body names another object than the URL", spec.Errors{{
			Path:   "name",
			Detail: fmt.Sprintf("%q does not match %q, the name in the URL; they must be the same", *name, want),
		}})
	}
}

// notFoundOr turns a store.ErrNotFound into a 404 problem about the kind
// ("connection") and passes any other error on.
func notFoundOr(err error, kind, name string) error {
	if errors.Is(err, store.ErrNotFound) {
		return problemf(http.StatusNotFound, "%s %q does not exist", kind, name)
	}
	return err
}

// sameJSON reports whether a and b encode to the same JSON, which is what
// the store keeps; unlike reflect.DeepEqual it treats a nil and an empty
// list alike when the field is omitempty.
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// pipelinesUsing returns the stored pipelines that read through the named
// connection or use its schema registry.
func (s *Server) pipelinesUsing(conn string) ([]spec.Pipeline, error) {
	all, err := s.store.Pipelines.List()
	if err != nil {
		return nil, err
	}
	var users []spec.Pipeline
	for _, p := range all {
		if p.Connection == conn || slices.ContainsFunc(p.RegistryRefs(), func(r spec.RegistryRef) bool { return r.Connection == conn }) {
			users = append(users, p)
		}
	}
	return users, nil
}

// quotedNames returns the pipelines' names as `"a", "b"`.
func quotedNames(pipes []spec.Pipeline) string {
	return joinQuoted(pipes, func(p *spec.Pipeline) string { return p.Name })
}

// fanoutNames returns the fanout schemas' names as `"a", "b"`.
func fanoutNames(fanouts []spec.FanoutSchema) string {
	return joinQuoted(fanouts, func(f *spec.FanoutSchema) string { return f.Name })
}

// joinQuoted returns the names of items, quoted and joined by ", ".
func joinQuoted[T any](items []T, name func(*T) string) string {
	var b bytes.Buffer
	for i := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", name(&items[i]))
	}
	return b.String()
}
