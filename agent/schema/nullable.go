package schema

// Nullable returns f with it and every field nested in its type nullable:
// the schema Spark's from_json gives parsed columns, whatever NOT NULL the
// DDL declared.
func Nullable(f Field) Field {
	f.Nullable = true
	f.Type = nullableType(f.Type)
	return f
}

// nullableType returns t with every nested struct field nullable.
func nullableType(t *Type) *Type {
	if t == nil {
		return nil
	}
	switch t.Kind {
	case Struct:
		c := *t
		c.Fields = make([]Field, len(t.Fields))
		for i, f := range t.Fields {
			c.Fields[i] = Nullable(f)
		}
		return &c
	case Array:
		c := *t
		c.Elem = nullableType(t.Elem)
		return &c
	case Map:
		c := *t
		c.Key, c.Value = nullableType(t.Key), nullableType(t.Value)
		return &c
	}
	return t
}
