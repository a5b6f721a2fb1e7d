package expr

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
)

// Test-only functions stand in for functions.go's, which another change
// brings: they exercise the registry, argument checks and error wrapping.
func init() {
	functions["test_upper"] = &function{minArgs: 1, maxArgs: 1,
		check: func(args []Type) (Type, error) {
			if args[0] != TypeString && args[0] != TypeNull {
				return 0, errors.New("the argument must be a STRING, found " + args[0].String())
			}
			return TypeString, nil
		},
		eval: func(args []Value) (Value, error) {
			if args[0].Null {
				return nullOf(TypeString), nil
			}
			return Value{Type: TypeString, Str: strings.ToUpper(args[0].Str)}, nil
		}}
	functions["test_fail"] = &function{minArgs: 0, maxArgs: -1,
		check: func([]Type) (Type, error) { return TypeString, nil },
		eval:  func([]Value) (Value, error) { return Value{}, errors.New("it always fails") }}
	functions["test_split"] = &function{minArgs: 1, maxArgs: 1,
		check: func([]Type) (Type, error) { return TypeStringArray, nil },
		eval: func(args []Value) (Value, error) {
			return Value{Type: TypeStringArray, Strs: strings.Split(args[0].Str, ","), Null: args[0].Null}, nil
		}}
	functions["test_header"] = &function{minArgs: 2, maxArgs: 2,
		check: func([]Type) (Type, error) { return TypeHeader, nil },
		eval: func(args []Value) (Value, error) {
			i := args[1].Int - 1
			if args[0].Null || i < 0 || i >= int64(len(args[0].Headers)) {
				return nullOf(TypeHeader), nil
			}
			return Value{Type: TypeHeader, Header: args[0].Headers[i]}, nil
		}}
}

// sample is a record with every column set.
func sample() *record.Record {
	return &record.Record{
		Topic:     "orders",
		Partition: 3,
		Offset:    42,
		Timestamp: time.Date(2024, 1, 2, 3, 4, 5, 600_000_000, time.UTC),
		Key:       []byte("k1"),
		Value:     []byte(`{"event_type":"click","n":7}`),
		Headers:   []record.Header{{Key: "h1", Value: []byte("v1")}, {Key: "h2"}},
	}
}

// nullRecord is a record whose key, value and timestamp are NULL.
func nullRecord() *record.Record {
	return &record.Record{Topic: "t", Partition: -1, Offset: 0}
}

// render shows an evaluated value for the tables: its SQL literal form,
// with its type when it is NULL.
func render(v Value) string {
	if v.Null {
		return "NULL " + v.Type.String()
	}
	if v.Type == TypeHeader {
		return "{" + v.Header.Key + ", " + string(v.Header.Value) + "}"
	}
	return show(v)
}

func TestEval(t *testing.T) {
	tests := []struct {
		src  string
		typ  Type
		want string // render of the result, or "error: <message>"
		null bool   // evaluate on nullRecord instead
	}{
		// Literals.
		{src: `'it''s'`, typ: TypeString, want: `'it''s'`},
		{src: `"dq"`, typ: TypeString, want: `'dq'`},
		{src: `'a' 'b'`, typ: TypeString, want: `'ab'`},
		{src: `'a\tb\\c\'d\u0041\101\%\_\x'`, typ: TypeString, want: "'a\tb\\c''dAA\\%\\_x'"},
		{src: `r'a\tb'`, typ: TypeString, want: `'a\tb'`},
		{src: `1`, typ: TypeInt, want: `1`},
		{src: `2147483647`, typ: TypeInt, want: `2147483647`},
		{src: `2147483648`, typ: TypeBigInt, want: `2147483648`},
		{src: `-2147483648`, typ: TypeBigInt, want: `-2147483648`},
		{src: `7L`, typ: TypeBigInt, want: `7`},
		{src: `1.5`, typ: TypeDouble, want: `1.5`},
		{src: `1e3`, typ: TypeDouble, want: `1000.0`},
		{src: `.5`, typ: TypeDouble, want: `0.5`},
		{src: `2D`, typ: TypeDouble, want: `2.0`},
		{src: `TRUE`, typ: TypeBoolean, want: `true`},
		{src: `false`, typ: TypeBoolean, want: `false`},
		{src: `NULL`, typ: TypeNull, want: `NULL NULL`},
		{src: `/* c */ 1 -- comment`, typ: TypeInt, want: `1`},

		// Columns.
		{src: `topic`, typ: TypeString, want: `'orders'`},
		{src: `TOPIC`, typ: TypeString, want: `'orders'`},
		{src: "`Topic`", typ: TypeString, want: `'orders'`},
		{src: `partition`, typ: TypeInt, want: `3`},
		{src: `offset`, typ: TypeBigInt, want: `42`},
		{src: `timestamp`, typ: TypeTimestamp, want: `TIMESTAMP '2024-01-02 03:04:05.6'`},
		{src: `timestampType`, typ: TypeInt, want: `0`},
		{src: `key`, typ: TypeBinary, want: `X'6B31'`},
		{src: `key`, typ: TypeBinary, want: `NULL BINARY`, null: true},
		{src: `value IS NULL`, typ: TypeBoolean, want: `true`, null: true},
		{src: `timestamp IS NULL`, typ: TypeBoolean, want: `true`, null: true},
		{src: `headers IS NOT NULL`, typ: TypeBoolean, want: `true`, null: true},
		{src: `headers[0]`, typ: TypeHeader, want: `{h1, v1}`},
		{src: `headers[0].key`, typ: TypeString, want: `'h1'`},
		{src: `headers[1].VALUE`, typ: TypeBinary, want: `NULL BINARY`},
		{src: `headers[2]`, typ: TypeHeader, want: `error: headers[2]: the index 2 is out of bounds: the array has 2 elements (indexes start at 0)`},
		{src: `headers[0]`, typ: TypeHeader, want: `error: headers[0]: the index 0 is out of bounds: the array has 0 elements (indexes start at 0)`, null: true},
		{src: `headers[NULL]`, typ: TypeHeader, want: `NULL STRUCT<key: STRING, value: BINARY>`},
		{src: `test_header(headers, 1).key`, typ: TypeString, want: `'h1'`},
		{src: `test_header(headers, 5).key`, typ: TypeString, want: `NULL STRING`},
		{src: `test_split('a,b')[1]`, typ: TypeString, want: `'b'`},

		// Arithmetic and widening.
		{src: `1 + 2 * 3`, typ: TypeInt, want: `7`},
		{src: `(1 + 2) * 3`, typ: TypeInt, want: `9`},
		{src: `partition + offset`, typ: TypeBigInt, want: `45`},
		{src: `partition + 0.5`, typ: TypeDouble, want: `3.5`},
		{src: `7 / 2`, typ: TypeDouble, want: `3.5`},
		{src: `7 % 3`, typ: TypeInt, want: `1`},
		{src: `-7 % 3`, typ: TypeInt, want: `-1`},
		{src: `7.5 % 2`, typ: TypeDouble, want: `1.5`},
		{src: `- partition`, typ: TypeInt, want: `-3`},
		{src: `+partition`, typ: TypeInt, want: `3`},
		{src: `-(-1.5)`, typ: TypeDouble, want: `1.5`},
		{src: `1 - 2 - 3`, typ: TypeInt, want: `-4`},
		{src: `'1' + 1`, typ: TypeBigInt, want: `2`},
		{src: `'1.5' + 1.0`, typ: TypeDouble, want: `2.5`},
		{src: `'1' + '2'`, typ: TypeDouble, want: `3.0`},
		{src: `'x' + 1`, typ: TypeBigInt, want: `error: 'x' + 1: 'x' is not a BIGINT`},
		{src: `1 / 0`, typ: TypeDouble, want: `error: 1 / 0: division by zero`},
		{src: `1.0 / 0`, typ: TypeDouble, want: `error: 1.0 / 0: division by zero`},
		{src: `5 % 0`, typ: TypeInt, want: `error: 5 % 0: division by zero`},
		{src: `2147483647 + 1`, typ: TypeInt, want: `error: 2147483647 + 1: the result overflows INT`},
		{src: `2147483647L + 1`, typ: TypeBigInt, want: `2147483648`},
		{src: `9223372036854775807 + 1`, typ: TypeBigInt, want: `error: 9223372036854775807 + 1: the result overflows BIGINT`},
		{src: `-9223372036854775807 - 2`, typ: TypeBigInt, want: `error: -9223372036854775807 - 2: the result overflows BIGINT`},
		{src: `4611686018427387904 * 2`, typ: TypeBigInt, want: `error: 4611686018427387904 * 2: the result overflows BIGINT`},
		{src: `-(-2147483647 - 1)`, typ: TypeInt, want: `error: -(-2147483647 - 1): the result overflows INT`},
		{src: `-(cast(-9223372036854775807 AS BIGINT) - 1)`, typ: TypeBigInt, want: `error: -(cast(-9223372036854775807 AS BIGINT) - 1): the result overflows BIGINT`},
		{src: `NULL + 1`, typ: TypeInt, want: `NULL INT`},
		{src: `1 + NULL`, typ: TypeInt, want: `NULL INT`},
		{src: `NULL / 0`, typ: TypeDouble, want: `NULL DOUBLE`},
		{src: `-NULL`, typ: TypeInt, want: `NULL INT`},
		{src: `NULL + cast('x' AS INT)`, typ: TypeInt, want: `NULL INT`},

		// Concatenation.
		{src: `topic || '_' || partition`, typ: TypeString, want: `'orders_3'`},
		{src: `'a' || NULL`, typ: TypeString, want: `NULL STRING`},
		{src: `key || key`, typ: TypeBinary, want: `X'6B316B31'`},
		{src: `key || 'x'`, typ: TypeString, want: `'k1x'`},
		{src: `'t=' || timestamp`, typ: TypeString, want: `'t=2024-01-02 03:04:05.6'`},
		{src: `'d=' || 1.0 || true`, typ: TypeString, want: `'d=1.0true'`},

		// Comparisons.
		{src: `topic = 'orders'`, typ: TypeBoolean, want: `true`},
		{src: `topic == 'x'`, typ: TypeBoolean, want: `false`},
		{src: `topic != 'x'`, typ: TypeBoolean, want: `true`},
		{src: `topic <> 'orders'`, typ: TypeBoolean, want: `false`},
		{src: `partition < 4 AND partition <= 3 AND partition > 2 AND partition >= 3`, typ: TypeBoolean, want: `true`},
		{src: `partition = 3.0`, typ: TypeBoolean, want: `true`},
		{src: `offset > partition`, typ: TypeBoolean, want: `true`},
		{src: `partition = '3'`, typ: TypeBoolean, want: `true`},
		{src: `'3' = partition`, typ: TypeBoolean, want: `true`},
		{src: `partition = ' 3 '`, typ: TypeBoolean, want: `true`},
		{src: `partition = 'three'`, typ: TypeBoolean, want: `error: partition = 'three': 'three' is not a BIGINT`},
		{src: `1.5 = '1.5'`, typ: TypeBoolean, want: `true`},
		{src: `'b' > 'a'`, typ: TypeBoolean, want: `true`},
		{src: `true > false`, typ: TypeBoolean, want: `true`},
		{src: `key = 'k1'`, typ: TypeBoolean, want: `true`},
		{src: `timestamp > '2024-01-01'`, typ: TypeBoolean, want: `true`},
		{src: `timestamp = '2024-01-02T03:04:05.6Z'`, typ: TypeBoolean, want: `true`},
		{src: `cast(timestamp AS DATE) = '2024-01-02'`, typ: TypeBoolean, want: `true`},
		{src: `cast(timestamp AS DATE) < timestamp`, typ: TypeBoolean, want: `true`},
		{src: `cast('NaN' AS DOUBLE) = cast('nan' AS DOUBLE)`, typ: TypeBoolean, want: `true`},
		{src: `cast('NaN' AS DOUBLE) > 1e308`, typ: TypeBoolean, want: `true`},
		{src: `NULL = NULL`, typ: TypeBoolean, want: `NULL BOOLEAN`},
		{src: `topic = NULL`, typ: TypeBoolean, want: `NULL BOOLEAN`},
		{src: `key = 'k1'`, typ: TypeBoolean, want: `NULL BOOLEAN`, null: true},
		{src: `NULL <=> NULL`, typ: TypeBoolean, want: `true`},
		{src: `topic <=> NULL`, typ: TypeBoolean, want: `false`},
		{src: `topic <=> 'orders'`, typ: TypeBoolean, want: `true`},
		{src: `key <=> value`, typ: TypeBoolean, want: `true`, null: true},

		// Three-valued logic.
		{src: `true AND NULL`, typ: TypeBoolean, want: `NULL BOOLEAN`},
		{src: `false AND NULL`, typ: TypeBoolean, want: `false`},
		{src: `NULL AND false`, typ: TypeBoolean, want: `false`},
		{src: `NULL AND NULL`, typ: TypeBoolean, want: `NULL BOOLEAN`},
		{src: `true OR NULL`, typ: TypeBoolean, want: `true`},
		{src: `NULL OR true`, typ: TypeBoolean, want: `true`},
		{src: `false OR NULL`, typ: TypeBoolean, want: `NULL BOOLEAN`},
		{src: `false OR false`, typ: TypeBoolean, want: `false`},
		{src: `NOT NULL`, typ: TypeBoolean, want: `NULL BOOLEAN`},
		{src: `NOT true`, typ: TypeBoolean, want: `false`},
		{src: `!false`, typ: TypeBoolean, want: `true`},
		{src: `NOT topic = 'x' AND true`, typ: TypeBoolean, want: `true`},
		{src: `true OR false AND false`, typ: TypeBoolean, want: `true`},
		{src: `false AND 1 / 0 = 1`, typ: TypeBoolean, want: `false`},
		{src: `true OR 1 / 0 = 1`, typ: TypeBoolean, want: `true`},
		{src: `true AND 1 / 0 = 1`, typ: TypeBoolean, want: `error: 1 / 0: division by zero`},

		// IS NULL, IN, BETWEEN.
		{src: `NULL IS NULL`, typ: TypeBoolean, want: `true`},
		{src: `topic IS NOT NULL`, typ: TypeBoolean, want: `true`},
		{src: `1 = 1 IS NULL`, typ: TypeBoolean, want: `false`},
		{src: `partition IN (1, 2, 3)`, typ: TypeBoolean, want: `true`},
		{src: `partition IN (1, 2)`, typ: TypeBoolean, want: `false`},
		{src: `partition NOT IN (1, 2)`, typ: TypeBoolean, want: `true`},
		{src: `partition IN (1, NULL)`, typ: TypeBoolean, want: `NULL BOOLEAN`},
		{src: `partition IN (3, NULL)`, typ: TypeBoolean, want: `true`},
		{src: `partition NOT IN (1, NULL)`, typ: TypeBoolean, want: `NULL BOOLEAN`},
		{src: `NULL IN (1)`, typ: TypeBoolean, want: `NULL BOOLEAN`},
		{src: `topic IN ('a', 'orders')`, typ: TypeBoolean, want: `true`},
		{src: `partition IN ('3', 4.5)`, typ: TypeBoolean, want: `true`},
		{src: `partition IN (1, 'x')`, typ: TypeBoolean, want: `error: partition IN (1, 'x'): 'x' is not a BIGINT`},
		{src: `CASE partition WHEN 'x' THEN 1 END`, typ: TypeInt, want: `error: CASE partition WHEN 'x' THEN 1 END: 'x' is not a BIGINT`},
		{src: `partition IN (1, 1 / 0)`, typ: TypeBoolean, want: `error: 1 / 0: division by zero`},
		{src: `partition IN (3, 1 / 0)`, typ: TypeBoolean, want: `true`},
		{src: `partition BETWEEN 1 AND 3`, typ: TypeBoolean, want: `true`},
		{src: `partition NOT BETWEEN 1 AND 3`, typ: TypeBoolean, want: `false`},
		{src: `partition BETWEEN 4 AND NULL`, typ: TypeBoolean, want: `false`},
		{src: `partition BETWEEN 1 AND NULL`, typ: TypeBoolean, want: `NULL BOOLEAN`},
		{src: `partition BETWEEN NULL AND 1`, typ: TypeBoolean, want: `false`},
		{src: `partition NOT BETWEEN 4 AND NULL`, typ: TypeBoolean, want: `true`},
		{src: `NULL BETWEEN 1 AND 2`, typ: TypeBoolean, want: `NULL BOOLEAN`},
		{src: `timestamp BETWEEN '2024-01-01' AND cast('2024-01-03' AS DATE)`, typ: TypeBoolean, want: `true`},
		{src: `partition BETWEEN 4 AND 1 / 0`, typ: TypeBoolean, want: `false`},

		// LIKE.
		{src: `topic LIKE 'ord%'`, typ: TypeBoolean, want: `true`},
		{src: `topic LIKE '%der%'`, typ: TypeBoolean, want: `true`},
		{src: `topic LIKE '_rders'`, typ: TypeBoolean, want: `true`},
		{src: `topic LIKE 'orders_'`, typ: TypeBoolean, want: `false`},
		{src: `topic LIKE '%s'`, typ: TypeBoolean, want: `true`},
		{src: `topic LIKE 'o%s%'`, typ: TypeBoolean, want: `true`},
		{src: `topic LIKE '%%%'`, typ: TypeBoolean, want: `true`},
		{src: `topic LIKE ''`, typ: TypeBoolean, want: `false`},
		{src: `'' LIKE ''`, typ: TypeBoolean, want: `true`},
		{src: `'' LIKE '%'`, typ: TypeBoolean, want: `true`},
		{src: `'' LIKE '_'`, typ: TypeBoolean, want: `false`},
		{src: `'aXbXc' LIKE 'a%b%c'`, typ: TypeBoolean, want: `true`},
		{src: `'abcabd' LIKE '%abd'`, typ: TypeBoolean, want: `true`},
		{src: `'été' LIKE '_t_'`, typ: TypeBoolean, want: `true`},
		{src: `'Orders' LIKE 'orders'`, typ: TypeBoolean, want: `false`},
		{src: `'50%' LIKE '50\%'`, typ: TypeBoolean, want: `true`},
		{src: `'50x' LIKE '50\%'`, typ: TypeBoolean, want: `false`},
		{src: `'a_b' LIKE 'a\\_b'`, typ: TypeBoolean, want: `true`},
		{src: `'a\\b' LIKE 'a\\\\b'`, typ: TypeBoolean, want: `true`},
		{src: `'a%b' LIKE 'a!%b' ESCAPE '!'`, typ: TypeBoolean, want: `true`},
		{src: `topic NOT LIKE 'x%'`, typ: TypeBoolean, want: `true`},
		{src: `NULL LIKE 'x%'`, typ: TypeBoolean, want: `NULL BOOLEAN`},
		{src: `topic LIKE NULL`, typ: TypeBoolean, want: `NULL BOOLEAN`},
		{src: `topic LIKE topic`, typ: TypeBoolean, want: `true`},
		{src: `'a' LIKE 'a' || '\\'`, typ: TypeBoolean, want: `error: 'a' LIKE 'a' || '\\': the LIKE pattern 'a\' ends with the escape character '\\'`},

		// CASE, if, coalesce, nvl.
		{src: `CASE WHEN partition = 3 THEN 'three' ELSE 'other' END`, typ: TypeString, want: `'three'`},
		{src: `CASE WHEN partition = 1 THEN 'one' END`, typ: TypeString, want: `NULL STRING`},
		{src: `CASE WHEN NULL THEN 1 ELSE 2 END`, typ: TypeInt, want: `2`},
		{src: `CASE WHEN false THEN 1 WHEN true THEN 2.5 END`, typ: TypeDouble, want: `2.5`},
		{src: `CASE WHEN true THEN 1 ELSE 1 / 0 END`, typ: TypeDouble, want: `1.0`},
		{src: `CASE partition WHEN 1 THEN 'a' WHEN 3 THEN 'c' END`, typ: TypeString, want: `'c'`},
		{src: `CASE partition WHEN '3' THEN 'c' END`, typ: TypeString, want: `'c'`},
		{src: `CASE NULL WHEN NULL THEN 'x' ELSE 'y' END`, typ: TypeString, want: `'y'`},
		{src: `CASE topic WHEN NULL THEN 'x' END`, typ: TypeString, want: `NULL STRING`},
		{src: `CASE WHEN true THEN NULL END`, typ: TypeNull, want: `NULL NULL`},
		{src: `case when timestamp > '2024-01-01' then cast(timestamp as date) else timestamp end`, typ: TypeTimestamp, want: `TIMESTAMP '2024-01-02 00:00:00'`},
		{src: `if(partition > 1, 'big', 'small')`, typ: TypeString, want: `'big'`},
		{src: `IF(NULL, 'big', 'small')`, typ: TypeString, want: `'small'`},
		{src: `if(true, 1, 1 / 0)`, typ: TypeDouble, want: `1.0`},
		{src: `coalesce(NULL, cast(key AS STRING), 'x')`, typ: TypeString, want: `'x'`, null: true},
		{src: `coalesce(NULL, NULL)`, typ: TypeNull, want: `NULL NULL`},
		{src: `coalesce(1, 1 / 0)`, typ: TypeDouble, want: `1.0`},
		{src: `nvl(key, value)`, typ: TypeBinary, want: `NULL BINARY`, null: true},
		{src: `ifnull(NULL, 2L)`, typ: TypeBigInt, want: `2`},

		// Casts.
		{src: `cast('12' AS INT)`, typ: TypeInt, want: `12`},
		{src: `cast(' -12 ' AS INT)`, typ: TypeInt, want: `-12`},
		{src: `cast('1.9' AS INT)`, typ: TypeInt, want: `1`},
		{src: `cast('abc' AS INT)`, typ: TypeInt, want: `error: cast('abc' AS INT): 'abc' is not an INT`},
		{src: `try_cast('abc' AS INT)`, typ: TypeInt, want: `NULL INT`},
		{src: `try_cast(1 / 0 AS INT)`, typ: TypeInt, want: `error: 1 / 0: division by zero`},
		{src: `cast('' AS INT)`, typ: TypeInt, want: `error: cast('' AS INT): '' is not an INT`},
		{src: `cast('2147483648' AS INT)`, typ: TypeInt, want: `error: cast('2147483648' AS INT): '2147483648' is out of the INT range`},
		{src: `cast('2147483648' AS BIGINT)`, typ: TypeBigInt, want: `2147483648`},
		{src: `cast('99999999999999999999' AS LONG)`, typ: TypeBigInt, want: `error: cast('99999999999999999999' AS LONG): '99999999999999999999' is not a BIGINT`},
		{src: `'12'::integer + 1`, typ: TypeInt, want: `13`},
		{src: `cast(3000000000 AS INT)`, typ: TypeInt, want: `error: cast(3000000000 AS INT): 3000000000 is out of the INT range`},
		{src: `cast(1e10 AS INT)`, typ: TypeInt, want: `error: cast(1e10 AS INT): 1.0E10 is out of the INT range`},
		{src: `cast(-1.9 AS INT)`, typ: TypeInt, want: `-1`},
		{src: `cast(cast('NaN' AS DOUBLE) AS BIGINT)`, typ: TypeBigInt, want: `error: cast(cast('NaN' AS DOUBLE) AS BIGINT): NaN is out of the BIGINT range`},
		{src: `cast(true AS INT)`, typ: TypeInt, want: `1`},
		{src: `cast(0 AS BOOLEAN)`, typ: TypeBoolean, want: `false`},
		{src: `cast(' Yes ' AS BOOLEAN)`, typ: TypeBoolean, want: `true`},
		{src: `cast('maybe' AS BOOLEAN)`, typ: TypeBoolean, want: `error: cast('maybe' AS BOOLEAN): 'maybe' is not a BOOLEAN`},
		{src: `cast('1.5e3' AS DOUBLE)`, typ: TypeDouble, want: `1500.0`},
		{src: `cast('1.5d' AS DOUBLE)`, typ: TypeDouble, want: `1.5`},
		{src: `cast('-Infinity' AS DOUBLE)`, typ: TypeDouble, want: `-Infinity`},
		{src: `cast('1_000' AS DOUBLE)`, typ: TypeDouble, want: `error: cast('1_000' AS DOUBLE): '1_000' is not a DOUBLE`},
		{src: `cast(1e7 AS STRING)`, typ: TypeString, want: `'1.0E7'`},
		{src: `cast(1234567.5 AS STRING)`, typ: TypeString, want: `'1234567.5'`},
		{src: `cast(0.0001 AS STRING)`, typ: TypeString, want: `'1.0E-4'`},
		{src: `cast(-0.0 AS STRING)`, typ: TypeString, want: `'-0.0'`},
		{src: `cast(partition AS STRING)`, typ: TypeString, want: `'3'`},
		{src: `cast(value AS STRING)`, typ: TypeString, want: `'{"event_type":"click","n":7}'`},
		{src: `cast(key AS STRING)`, typ: TypeString, want: `NULL STRING`, null: true},
		{src: `cast('ab' AS BINARY)`, typ: TypeBinary, want: `X'6162'`},
		{src: `cast(timestamp AS STRING)`, typ: TypeString, want: `'2024-01-02 03:04:05.6'`},
		{src: `cast(timestamp AS BIGINT)`, typ: TypeBigInt, want: `1704164645`},
		{src: `cast(timestamp AS DOUBLE)`, typ: TypeDouble, want: `1.7041646456E9`},
		{src: `cast(timestamp AS DATE)`, typ: TypeDate, want: `DATE '2024-01-02'`},
		{src: `cast(cast(timestamp AS DATE) AS STRING)`, typ: TypeString, want: `'2024-01-02'`},
		{src: `cast('2024-02-30' AS DATE)`, typ: TypeDate, want: `error: cast('2024-02-30' AS DATE): '2024-02-30' is not a DATE`},
		{src: `cast('123' AS DATE)`, typ: TypeDate, want: `error: cast('123' AS DATE): '123' is not a DATE`},
		{src: `cast('2024' AS DATE)`, typ: TypeDate, want: `DATE '2024-01-01'`},
		{src: `cast(' 2024-3-7 junk' AS DATE)`, typ: TypeDate, want: `DATE '2024-03-07'`},
		{src: `cast('2024-01-02 03:04:05+01:00' AS TIMESTAMP)`, typ: TypeTimestamp, want: `TIMESTAMP '2024-01-02 02:04:05'`},
		{src: `cast('294300-01-01' AS TIMESTAMP)`, typ: TypeTimestamp, want: `error: cast('294300-01-01' AS TIMESTAMP): '294300-01-01' is out of the TIMESTAMP range`},
		{src: `cast('9999999-01-01' AS DATE)`, typ: TypeDate, want: `DATE '9999999-01-01'`},
		{src: `cast(cast('9999999-01-01' AS DATE) AS TIMESTAMP)`, typ: TypeTimestamp, want: `error: cast(cast('9999999-01-01' AS DATE) AS TIMESTAMP): DATE '9999999-01-01' is out of the TIMESTAMP range`},
		{src: `cast('nope' AS TIMESTAMP)`, typ: TypeTimestamp, want: `error: cast('nope' AS TIMESTAMP): 'nope' is not a TIMESTAMP`},
		{src: `cast(1.5 AS TIMESTAMP)`, typ: TypeTimestamp, want: `TIMESTAMP '1970-01-01 00:00:01.5'`},
		{src: `cast(-1 AS TIMESTAMP)`, typ: TypeTimestamp, want: `TIMESTAMP '1969-12-31 23:59:59'`},
		{src: `cast(9223372036854775807 AS TIMESTAMP)`, typ: TypeTimestamp, want: `error: cast(9223372036854775807 AS TIMESTAMP): 9223372036854775807 is out of the TIMESTAMP range`},
		{src: `cast(cast('2024-01-02' AS DATE) AS TIMESTAMP)`, typ: TypeTimestamp, want: `TIMESTAMP '2024-01-02 00:00:00'`},
		{src: `cast(NULL AS DATE)`, typ: TypeDate, want: `NULL DATE`},
		{src: `try_cast(NULL AS DATE)`, typ: TypeDate, want: `NULL DATE`},
		{src: `cast(topic AS STRING)`, typ: TypeString, want: `'orders'`},
		{src: `test_split('a,b')::string`, typ: TypeString, want: `'[a, b]'`},

		// The JSON path operator (jsonPath's own tests cover what it finds).
		{src: `cast(value AS STRING):event_type`, typ: TypeString},
		{src: `value::string:a.b[0]::int`, typ: TypeInt},
		{src: `cast(value AS STRING):event_type`, typ: TypeString, want: `NULL STRING`, null: true},
		{src: `NULL:a`, typ: TypeString, want: `NULL STRING`},

		// Functions.
		{src: `test_upper(topic)`, typ: TypeString, want: `'ORDERS'`},
		{src: `TEST_Upper(NULL)`, typ: TypeString, want: `NULL STRING`},
		{src: `test_fail(topic)`, typ: TypeString, want: `error: test_fail(topic): it always fails`},
		{src: `test_fail(1 / 0)`, typ: TypeString, want: `error: 1 / 0: division by zero`},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			p, err := Compile(tt.src)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			if p.Type() != tt.typ {
				t.Errorf("Type() = %s, want %s", p.Type(), tt.typ)
			}
			if p.String() != tt.src {
				t.Errorf("String() = %q", p.String())
			}
			r := sample()
			if tt.null {
				r = nullRecord()
			}
			v, err := p.Eval(r)
			got := ""
			if err != nil {
				got = "error: " + err.Error()
			} else {
				if !v.Null && v.Type != p.Type() {
					t.Errorf("the value's type is %s, the program's %s", v.Type, p.Type())
				}
				got = render(v)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestEvalString(t *testing.T) {
	tests := []struct {
		src, want string
		null      bool
		err       string
	}{
		{src: `topic || '_' || partition`, want: "orders_3"},
		{src: `partition * 2`, want: "6"},
		{src: `CASE WHEN false THEN 'x' END`, null: true},
		{src: `cast('x' AS INT)`, err: `cast('x' AS INT): 'x' is not an INT`},
		{src: `headers`, err: `headers: cannot cast ARRAY<STRUCT<key: STRING, value: BINARY>> to STRING`},
	}
	for _, tt := range tests {
		p, err := Compile(tt.src)
		if err != nil {
			t.Fatalf("%s: %v", tt.src, err)
		}
		s, null, err := p.EvalString(sample())
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%s: error %v, want %s", tt.src, err, tt.err)
			}
			continue
		}
		if err != nil || s != tt.want || null != tt.null {
			t.Errorf("%s: %q, %v, %v; want %q, %v", tt.src, s, null, err, tt.want, tt.null)
		}
	}
}

func TestPathSteps(t *testing.T) {
	tests := []struct {
		src  string
		want []PathStep
	}{
		{`value::string:a.b`, []PathStep{{Name: "a"}, {Name: "b"}}},
		{`value::string:a[0]`, []PathStep{{Name: "a"}, {IsIndex: true, Index: 0}}},
		{`value::string:['k k']`, []PathStep{{Name: "k k", Bracketed: true}}},
		{`value::string:["K"][12]`, []PathStep{{Name: "K", Bracketed: true}, {IsIndex: true, Index: 12}}},
		{"value::string:`zip code`.Z", []PathStep{{Name: "zip code"}, {Name: "Z"}}},
		{`cast(value as string):a.b[1]::string`, []PathStep{{Name: "a"}, {Name: "b"}, {IsIndex: true, Index: 1}}},
		{`value::string : a . b`, []PathStep{{Name: "a"}, {Name: "b"}}},
	}
	for _, tt := range tests {
		n, err := parse(tt.src)
		if err != nil {
			t.Fatalf("%s: %v", tt.src, err)
		}
		for n.kind != nPath {
			n = n.args[0]
		}
		if len(n.path) != len(tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.src, n.path, tt.want)
			continue
		}
		for i := range n.path {
			if n.path[i] != tt.want[i] {
				t.Errorf("%s: %+v, want %+v", tt.src, n.path, tt.want)
				break
			}
		}
	}
}

// TestNesting checks that deep expressions compile in linear time and
// that nesting beyond the limits is an error, not a stack overflow.
func TestNesting(t *testing.T) {
	src := "value"
	for range 150 {
		src = "cast(" + src + " AS STRING):a"
	}
	for range 30 {
		src = "(" + src + " BETWEEN 'a' AND 'b')"
	}
	if _, err := Compile(src); err != nil {
		t.Fatalf("deep but legal: %v", err)
	}
	if _, err := Compile(strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300)); err == nil ||
		!strings.Contains(err.Error(), "nested more than 200 levels") {
		t.Errorf("300 parentheses: %v", err)
	}
	if _, err := Compile("1" + strings.Repeat(" + 1", 2000)); err == nil ||
		!strings.Contains(err.Error(), "nested more than 1000 levels") {
		t.Errorf("a chain of 2000: %v", err)
	}
}

// TestPathEval evaluates the : operator end to end; it needs the JSON path
// evaluator, and skips while jsonPath is a stub.
func TestPathEval(t *testing.T) {
	if _, ok := jsonPath([]byte(`{"a":"b"}`), []PathStep{{Name: "a"}}); !ok {
		t.Skip("jsonPath is not implemented in this tree")
	}
	tests := []struct{ src, want string }{
		{`cast(value AS STRING):event_type`, `'click'`},
		{`cast(value as string):event_type::string`, `'click'`},
		{`cast(value AS STRING):EVENT_TYPE`, `'click'`},
		{`cast(value AS STRING):['EVENT_TYPE']`, `NULL STRING`},
		{`cast(value AS STRING):["event_type"]`, `'click'`},
		{`cast(value AS STRING):n::int + 1`, `8`},
		{`cast(value AS STRING):missing`, `NULL STRING`},
		{`topic:a`, `NULL STRING`},
		{`'{"a":[1,{"b":"x"}]}':a[1].b`, `'x'`},
		{`'{"a":[1,{"b":"x"}]}':a[2]`, `NULL STRING`},
		{`'{"k k":1}':['k k']`, `'1'`},
		{`test_upper(cast(value AS STRING)):EVENT_TYPE`, `'CLICK'`},
		{`cast(value AS STRING):['event_type'] || '_' || cast(value AS STRING):['n']`, `'click_7'`},
		{`cast(value AS STRING):['event_type'] || '_' || cast(value AS STRING):['x']`, `NULL STRING`},
		{`cast(value AS STRING):n::boolean`, `error: cast(value AS STRING):n::boolean: '7' is not a BOOLEAN`},
	}
	for _, tt := range tests {
		p, err := Compile(tt.src)
		if err != nil {
			t.Fatalf("%s: %v", tt.src, err)
		}
		v, err := p.Eval(sample())
		got := ""
		if err != nil {
			got = "error: " + err.Error()
		} else {
			got = render(v)
		}
		if got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.src, got, tt.want)
		}
	}
}

// TestNoTimestamp checks that the timestamp column is NULL for a record
// without a time: Kafka's -1 "no timestamp" reads as a time before the
// epoch, and the zero Time stands for none too.
func TestNoTimestamp(t *testing.T) {
	p, err := Compile(`timestamp IS NULL`)
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range []time.Time{{}, time.UnixMilli(-1)} {
		v, err := p.Eval(&record.Record{Topic: "t", Timestamp: ts})
		if err != nil || !v.Bool {
			t.Errorf("timestamp %v: timestamp IS NULL = %v, %v; want true", ts, v.Bool, err)
		}
	}
	v, err := p.Eval(&record.Record{Topic: "t", Timestamp: time.UnixMilli(0)})
	if err != nil || v.Bool {
		t.Errorf("the epoch: timestamp IS NULL = %v, %v; want false", v.Bool, err)
	}
}
