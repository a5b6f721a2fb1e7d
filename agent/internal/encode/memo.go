package encode

import (
	"sync/atomic"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// fieldsMemo keeps the last value computed from a row's fields and a key:
// the rows of a batch share one Fields slice ([Rows] makes it once per
// batch and nothing changes it after), so a value made once serves the
// whole batch. It is safe for concurrent use.
type fieldsMemo[T any] struct{ last atomic.Pointer[memoEntry[T]] }

// memoEntry is a value of fieldsMemo and what it was made from.
type memoEntry[T any] struct {
	fields []schema.Field
	key    string
	value  T
}

// get returns build's value for fields and key: the kept one when fields
// is the same slice (same first element and length) and key the same,
// else a new one, which it keeps.
func (m *fieldsMemo[T]) get(fields []schema.Field, key string, build func() T) T {
	if e := m.last.Load(); e != nil && e.key == key && sameSlice(e.fields, fields) {
		return e.value
	}
	e := &memoEntry[T]{fields: fields, key: key, value: build()}
	m.last.Store(e)
	return e.value
}

// sameSlice reports whether a and b are the same slice of one array.
func sameSlice(a, b []schema.Field) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
