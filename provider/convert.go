package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// specConverter turns Terraform values into spec values. Unknown values
// become zero values, and their spec attribute paths are recorded in
// unknown, so that validation problems that depend on them can be dropped
// until they are known.
type specConverter struct {
	ctx context.Context
	// what names the object in diagnostics ("pipeline").
	what    string
	unknown pathSet
	diags   diag.Diagnostics
	// readFiles makes schema_file_path be read into SchemaFileContent; an
	// unreadable file is reported on its attribute and its path is added to
	// unreadable, so that no second problem is reported on it.
	readFiles  bool
	unreadable pathSet
}

// skip reports whether a validation problem must not be reported: it reads a
// value that is unknown, or it is about the content of a schema file that
// could not be read (which was reported already).
func (c *specConverter) skip(e spec.FieldError) bool {
	return c.unknown.anyCovered(e.Paths()) || c.unreadable[e.Path]
}

func newSpecConverter(ctx context.Context, readFiles bool) *specConverter {
	return &specConverter{ctx: ctx, what: "pipeline", unknown: pathSet{}, readFiles: readFiles, unreadable: pathSet{}}
}

// str returns the value of v at spec path p; "" for null and unknown.
func (c *specConverter) str(p string, v types.String) string {
	if v.IsUnknown() {
		c.unknown[p] = true
	}
	return v.ValueString()
}

// int64 returns the value of v at p; 0 (the spec's "unset") for null and
// unknown.
func (c *specConverter) int64(p string, v types.Int64) int64 {
	if v.IsUnknown() {
		c.unknown[p] = true
	}
	return v.ValueInt64()
}

// int64Or returns the value of v at p, or def when v is null: the default
// the plan will show, so that validation sees what will be applied and an
// explicit 0 stays distinct from "unset".
func (c *specConverter) int64Or(p string, v types.Int64, def int64) int64 {
	if v.IsNull() {
		return def
	}
	return c.int64(p, v)
}

// int64Ptr returns the value of v at p; nil (the spec's "unset") for null
// and unknown.
func (c *specConverter) int64Ptr(p string, v types.Int64) *int64 {
	if v.IsUnknown() {
		c.unknown[p] = true
	}
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	n := v.ValueInt64()
	return &n
}

// boolPtr returns the value of v at p; nil (the spec's "unset") for null and
// unknown.
func (c *specConverter) boolPtr(p string, v types.Bool) *bool {
	if v.IsUnknown() {
		c.unknown[p] = true
	}
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	b := v.ValueBool()
	return &b
}

// strList returns the elements of the list of strings v at p; an unknown
// element is "" and recorded as p[i].
func (c *specConverter) strList(p string, v types.List) []string {
	if v.IsUnknown() {
		c.unknown[p] = true
		return nil
	}
	if v.IsNull() {
		return nil
	}
	out := make([]string, 0, len(v.Elements()))
	for i, e := range v.Elements() {
		s, ok := e.(types.String)
		if !ok {
			c.diags.AddError("Internal provider error", fmt.Sprintf("%s[%d] is a %T, not a string", p, i, e))
			continue
		}
		out = append(out, c.str(fmt.Sprintf("%s[%d]", p, i), s))
	}
	return out
}

// objectState says whether an object value is null, unknown or known.
type objectState int

const (
	objectNull objectState = iota
	objectUnknown
	objectKnown
)

// object decodes the object v at p into target (a pointer to a model struct)
// when it is known. An unknown object is recorded in unknown; callers use an
// empty spec value for it, so that rules on its parent do not fire as if it
// were absent.
func (c *specConverter) object(p string, v types.Object, target any) objectState {
	switch {
	case v.IsNull():
		return objectNull
	case v.IsUnknown():
		c.unknown[p] = true
		return objectUnknown
	}
	c.diags.Append(v.As(c.ctx, target, basetypes.ObjectAsOptions{})...)
	return objectKnown
}

// convertObject converts the object v at p, decoded into a model M, with
// convert: nil when v is null, and an empty S when it is unknown (see
// object).
func convertObject[M, S any](c *specConverter, p string, v types.Object, convert func(m *M) *S) *S {
	var m M
	switch c.object(p, v, &m) {
	case objectNull:
		return nil
	case objectUnknown:
		return new(S)
	}
	return convert(&m)
}

// objects returns the elements of the list of objects v at p; nil for an
// unknown list, which is recorded.
func (c *specConverter) objects(p string, v types.List) []types.Object {
	if v.IsUnknown() {
		c.unknown[p] = true
		return nil
	}
	out := make([]types.Object, 0, len(v.Elements()))
	for i, e := range v.Elements() {
		o, ok := e.(types.Object)
		if !ok {
			c.diags.AddError("Internal provider error", fmt.Sprintf("%s[%d] is a %T, not an object", p, i, e))
			continue
		}
		out = append(out, o)
	}
	return out
}

// readFile returns the content of the file name (nil when name is "")
// named by the attribute at spec path p, when c reads files. what says what
// the file is ("schema file") and example is a file name for the hint. An
// unreadable file is reported on p, naming the resolved path, and p is
// added to unreadable.
func (c *specConverter) readFile(p, name, what, example string) []byte {
	if !c.readFiles || name == "" {
		return nil
	}
	b, err := readModuleFile(name, what, example)
	if err != nil {
		addFieldError(&c.diags, c.what, spec.FieldError{Path: p, Detail: err.Error()})
		c.unreadable[p] = true
	}
	return b
}

// maxModuleFileSize bounds the files the provider reads for a file
// attribute (schema files, descriptor sets): 4 MiB, far more than any
// schema needs, so that a wrong path (a log, a disk image) fails the plan
// instead of filling the provider's memory and the plan.
const maxModuleFileSize = 4 << 20

// readModuleFile reads a file attribute's file, which must be a regular
// file of at most maxModuleFileSize bytes (a named pipe would block the
// plan, a device never ends). Relative paths resolve against the
// provider's working directory, which Terraform sets to the directory it
// runs in (the root module).
func readModuleFile(name, what, example string) ([]byte, error) {
	resolved, err := filepath.Abs(name)
	if err != nil {
		resolved = name
	}
	b, err := readBoundedFile(resolved, maxModuleFileSize)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return nil, fmt.Errorf("cannot read the %s %s: %w. A relative path is resolved against the "+
			"directory Terraform runs in (the root module); in a child module write \"${path.module}/%s\"", what, resolved, pe.Err, example)
	case err != nil:
		return nil, fmt.Errorf("cannot read the %s %s: %w", what, resolved, err)
	}
	return b, nil
}

// readBoundedFile reads the regular file name of at most limit bytes. Its
// errors are *fs.PathError when the file cannot be opened or read, and
// otherwise say what the file is or how large it is.
func readBoundedFile(name string, limit int64) ([]byte, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if kind := fileKind(fi.Mode()); kind != "" {
		return nil, fmt.Errorf("it is %s, not a regular file; give the path of a file", kind)
	}
	tooLarge := fmt.Errorf("it is larger than %d MiB, the most the provider reads; check the path", limit>>20)
	if fi.Size() > limit {
		return nil, tooLarge
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The file may have grown since Stat.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, tooLarge
	}
	return b, nil
}

// fileKind names the type of a file that is not a regular file ("a
// directory"); "" for a regular file.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file (mode " + m.String() + ")"
}

// schemaSHA256 is the hex SHA-256 of a file's content.
func schemaSHA256(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// fileSHA256 is the hash attribute of the file named by name with content:
// null when name is "".
func fileSHA256(name string, content []byte) types.String {
	if name == "" {
		return types.StringNull()
	}
	return types.StringValue(schemaSHA256(content))
}

// stringOrNull maps the spec's "unset" ("") to null.
func stringOrNull(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// stringOrDefault maps the spec's "unset" ("") to def, the default the
// schema plans, so that an object stored without the value shows no diff.
func stringOrDefault(s, def string) types.String {
	if s == "" {
		s = def
	}
	return types.StringValue(s)
}

// listOrNull builds a list of elements of type t holding values, adding
// any problem to diags. An empty values is null, as the spec does not tell
// an empty list from none, unless keepEmpty (the configuration has the
// list empty).
func listOrNull[T any](ctx context.Context, diags *diag.Diagnostics, t attr.Type, values []T, keepEmpty bool) types.List {
	if len(values) == 0 && !keepEmpty {
		return types.ListNull(t)
	}
	// A nil slice would make a null list.
	l, d := types.ListValueFrom(ctx, t, append([]T{}, values...))
	diags.Append(d...)
	return l
}

// objectValue builds an object of type t from a model struct, adding any
// problem to diags.
func objectValue(ctx context.Context, diags *diag.Diagnostics, t types.ObjectType, model any) types.Object {
	v, d := types.ObjectValueFrom(ctx, t.AttrTypes, model)
	diags.Append(d...)
	return v
}

// objectOrNull is the object of type t whose model is model(o); null for
// a nil o. It undoes convertObject.
func objectOrNull[S, M any](ctx context.Context, diags *diag.Diagnostics, t types.ObjectType, o *S, model func(o *S) M) types.Object {
	if o == nil {
		return types.ObjectNull(t.AttrTypes)
	}
	return objectValue(ctx, diags, t, model(o))
}

// attrObjectType returns the object type of the attribute name of t.
func attrObjectType(t types.ObjectType, name string) types.ObjectType {
	ot, _ := t.AttrTypes[name].(types.ObjectType)
	return ot
}
