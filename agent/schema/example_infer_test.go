package schema_test

import (
	"fmt"

	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// The first schema of a table: records inferred, then the hints applied.
func ExampleInferrer() {
	in := schema.NewInferrer(schema.InferOptions{StringTypeInference: true})
	for _, r := range []string{
		`{"id":1,"user":{"dob":"1990-01-02"},"tags":["a"],"price":5}`,
		`{"id":2,"user":{"name":"x"},"tags":[],"price":2.5,"note":null}`,
	} {
		if err := in.Add([]byte(r)); err != nil {
			fmt.Println(err)
		}
	}
	hints, err := schema.ParseHints("id INT, user.dob STRING, attrs MAP<STRING, STRING>, attrs.value INT")
	if err != nil {
		fmt.Println(err)
	}
	fields, err := schema.ApplyHints(in.Fields(), hints)
	if err != nil {
		fmt.Println(err)
	}
	fmt.Println(schema.FormatDDL(fields))
	// Output:
	// id INT, user STRUCT<dob: STRING, name: STRING>, tags ARRAY<STRING>, price DOUBLE, note STRING, attrs MAP<STRING, INT>
}

// What becomes of a table column when a value arrives, in each mode.
func ExampleWiden() {
	col := &schema.Type{Kind: schema.Int}
	for _, v := range []string{`7`, `7.5`, `"seven"`} {
		got, _ := schema.InferValue([]byte(v), schema.InferOptions{})
		widened, ok := schema.Widen(col, got)
		fmt.Printf("%s: fits %v, widen to %v %v\n", v, schema.Fits(col, got), widened, ok)
	}
	// Output:
	// 7: fits true, widen to BIGINT true
	// 7.5: fits false, widen to DOUBLE true
	// "seven": fits false, widen to <nil> false
}
