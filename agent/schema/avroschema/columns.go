package avroschema

import (
	"errors"
	"fmt"

	"github.com/hamba/avro/v2"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// Columns maps s to table columns as spark-avro's SchemaConverters does:
// a record's fields become the columns, in order; any other schema becomes
// one column named column (the caller passes "key" or "value"). The types:
//
//	record                       STRUCT of its fields
//	["null", T] (either order)   T
//	[int, long] (+ null)         BIGINT
//	[float, double] (+ null)     DOUBLE
//	other unions                 STRUCT<member0, member1, ...>, one field per non-null branch
//	boolean, int, long           BOOLEAN, INT, BIGINT
//	float, double                FLOAT, DOUBLE
//	string, enum, uuid           STRING (an enum's symbol name)
//	bytes, fixed                 BINARY
//	decimal (bytes or fixed)     DECIMAL(p,s), p at most 38
//	date                         DATE
//	time-millis, time-micros     INT, BIGINT
//	timestamp-millis/micros      TIMESTAMP
//	local-timestamp-millis/micros TIMESTAMP_NTZ
//	array<T>, map<T>             ARRAY<T>, MAP<STRING,T>
//
// Every column and nested field is nullable, as Spark and Delta make the
// schema of a DataFrame they write to a table (asNullable); spark-avro's own
// result keeps non-union fields NOT NULL. A field of type null (Spark's
// NullType, which Delta drops) has no column. Deviations from spark-avro: a
// recursive record, a record left without fields, and a null, array or map
// of null are errors rather than NullType or an empty struct; spark-avro
// refuses recursion by default too.
func Columns(s avro.Schema, column string) ([]schema.Field, error) {
	if r, ok := Deref(s).(*avro.RecordSchema); ok {
		t, err := sparkType(r, nil)
		if err != nil {
			return nil, err
		}
		return t.Fields, nil
	}
	t, err := sparkType(s, nil)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", column, err)
	case t == nil:
		return nil, fmt.Errorf("%s: %w", column, errNullType)
	}
	return []schema.Field{{Name: column, Type: t, Nullable: true}}, nil
}

// ColumnType returns the table type of s as [Columns] maps it, nil for a
// schema of type null, which has no column.
func ColumnType(s avro.Schema) (*schema.Type, error) { return sparkType(s, nil) }

// errNullType says a schema holds nothing but nulls.
var errNullType = errors.New("a schema of type null has no column type")

// sparkType returns the table type of s, nil for null; open names the
// records being converted, to catch recursion.
func sparkType(s avro.Schema, open []string) (*schema.Type, error) {
	s = Deref(s)
	switch s.Type() {
	case avro.Null:
		return nil, nil
	case avro.Boolean:
		return &schema.Type{Kind: schema.Boolean}, nil
	case avro.Int:
		if Logical(s) == avro.Date {
			return &schema.Type{Kind: schema.Date}, nil
		}
		return &schema.Type{Kind: schema.Int}, nil
	case avro.Long:
		switch Logical(s) {
		case avro.TimestampMillis, avro.TimestampMicros:
			return &schema.Type{Kind: schema.Timestamp}, nil
		case avro.LocalTimestampMillis, avro.LocalTimestampMicros:
			return &schema.Type{Kind: schema.TimestampNTZ}, nil
		}
		return &schema.Type{Kind: schema.Long}, nil
	case avro.Float:
		return &schema.Type{Kind: schema.Float}, nil
	case avro.Double:
		return &schema.Type{Kind: schema.Double}, nil
	case avro.String, avro.Enum:
		return &schema.Type{Kind: schema.String}, nil
	case avro.Bytes, avro.Fixed:
		if d, ok := Decimal(s); ok {
			if d.Precision() > rows.MaxDecimalPrecision {
				return nil, fmt.Errorf("Decimal(%d,%d) has a precision above the table's maximum of %d", d.Precision(), d.Scale(), rows.MaxDecimalPrecision)
			}
			return &schema.Type{Kind: schema.Decimal, Precision: d.Precision(), Scale: d.Scale()}, nil
		}
		return &schema.Type{Kind: schema.Binary}, nil
	case avro.Array:
		elem, err := sparkType(s.(*avro.ArraySchema).Items(), open)
		if err == nil && elem == nil {
			err = errNullType
		}
		if err != nil {
			return nil, fmt.Errorf("array items: %w", err)
		}
		return &schema.Type{Kind: schema.Array, Elem: elem}, nil
	case avro.Map:
		val, err := sparkType(s.(*avro.MapSchema).Values(), open)
		if err == nil && val == nil {
			err = errNullType
		}
		if err != nil {
			return nil, fmt.Errorf("map values: %w", err)
		}
		return &schema.Type{Kind: schema.Map, Key: &schema.Type{Kind: schema.String}, Value: val}, nil
	case avro.Union:
		return unionType(s.(*avro.UnionSchema), open)
	case avro.Record:
		return recordType(s.(*avro.RecordSchema), open)
	}
	return nil, fmt.Errorf("unsupported avro type %s", s.Type())
}

// unionType returns the table type of a union.
func unionType(u *avro.UnionSchema, open []string) (*schema.Type, error) {
	branches, _ := NonNull(u)
	if len(branches) == 0 {
		return nil, nil
	}
	if len(branches) == 1 {
		return sparkType(branches[0], open)
	}
	if t, ok := Widened(branches); ok {
		return sparkType(avro.NewPrimitiveSchema(t, nil), open)
	}
	t := &schema.Type{Kind: schema.Struct}
	for k, b := range branches {
		bt, err := sparkType(b, open)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", MemberName(k), err)
		}
		t.Fields = append(t.Fields, schema.Field{Name: MemberName(k), Type: bt, Nullable: true})
	}
	return t, nil
}

// recordType returns the STRUCT of a record's fields.
func recordType(r *avro.RecordSchema, open []string) (*schema.Type, error) {
	for _, name := range open {
		if name == r.FullName() {
			return nil, fmt.Errorf("record %s is recursive, which a table cannot hold", r.FullName())
		}
	}
	open = append(open, r.FullName())
	t := &schema.Type{Kind: schema.Struct}
	for _, f := range r.Fields() {
		ft, err := sparkType(f.Type(), open)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name(), err)
		}
		if ft != nil {
			t.Fields = append(t.Fields, schema.Field{Name: f.Name(), Type: ft, Nullable: true})
		}
	}
	if len(t.Fields) == 0 {
		return nil, fmt.Errorf("record %s has no field a table can hold", r.FullName())
	}
	return t, nil
}
