package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

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

// conditionalCreate answers a PUT that carries If-None-Match: it must be
// "*", which makes the PUT a create only: 412 when the named object of the
// kind ("pipeline") exists. Terraform's create sends it, so that it never
// takes over an object someone else made. There are no entity tags, so
// any other value is refused (400) rather than ignored.
func conditionalCreate(r *http.Request, kind, name string, existed bool) error {
	cond := r.Header.Values("If-None-Match")
	switch {
	case len(cond) == 0:
		return nil
	case len(cond) > 1 || strings.TrimSpace(cond[0]) != "*":
		return problemf(http.StatusBadRequest, "If-None-Match must be \"*\" (create only, never replace): the agent has no entity tags; got %q",
			strings.Join(cond, ", "))
	case existed:
		return problemf(http.StatusPreconditionFailed, "%s %q already exists; a create (If-None-Match: *) does not replace it: "+
			"import it, delete it first, or pick another name", kind, name)
	}
	return nil
}

// notFoundOr turns a store.ErrNotFound into a 404 problem about the kind
// ("connection") and passes any other error on.
func notFoundOr(err error, kind, name string) error {
	if errors.Is(err, store.ErrNotFound) {
		return problemf(http.StatusNotFound, "%s %q does not exist", kind, name)
	}
	return err
}

// getStored answers a GET of the object of c named by the URL, of the kind
// ("pipeline"), as show presents it.
func getStored[T, R any](w http.ResponseWriter, r *http.Request, c *store.Collection[T], kind string, show func(*T) R) error {
	name := r.PathValue("name")
	v, err := c.Get(name)
	if err != nil {
		return notFoundOr(err, kind, name)
	}
	return writeJSON(w, http.StatusOK, show(&v))
}

// listStored answers a GET of every object of c, each as show presents it.
func listStored[T, R any](w http.ResponseWriter, c *store.Collection[T], show func(*T) R) error {
	all, err := c.List()
	if err != nil {
		return err
	}
	out := make([]R, len(all))
	for i := range all {
		out[i] = show(&all[i])
	}
	return writeJSON(w, http.StatusOK, out)
}

// checkedSpec is a spec that a PUT normalizes and validates.
type checkedSpec interface {
	Normalize()
	Validate() spec.Errors
}

// decodeSpec reads the spec v of the kind ("pipeline") in the body of r,
// fills its name (at *name) from the URL, normalizes and validates it
// (422 with its problems).
func decodeSpec(w http.ResponseWriter, r *http.Request, kind string, v checkedSpec, name *string) error {
	if err := decodeBody(w, r, kind, v); err != nil {
		return err
	}
	if err := pathName(r, name); err != nil {
		return err
	}
	v.Normalize()
	if errs := v.Validate(); len(errs) > 0 {
		return invalid("the "+kind+" is not valid", errs)
	}
	return nil
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
	return storedWhere(s.store.Pipelines, func(p *spec.Pipeline) bool { return p.Connection == conn || usesRegistryOf(p, conn) })
}

// usesRegistryOf says whether a transformer of p takes its schemas from
// the schema registry of the named connection.
func usesRegistryOf(p *spec.Pipeline, conn string) bool {
	return slices.ContainsFunc(p.RegistryRefs(), func(r spec.RegistryRef) bool { return r.Connection == conn })
}

// storedWhere returns the stored objects of c that keep accepts.
func storedWhere[T any](c *store.Collection[T], keep func(*T) bool) ([]T, error) {
	all, err := c.List()
	if err != nil {
		return nil, err
	}
	var out []T
	for i := range all {
		if keep(&all[i]) {
			out = append(out, all[i])
		}
	}
	return out, nil
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
