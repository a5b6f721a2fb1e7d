package encode_test

import (
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/encode"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

func TestRouter(t *testing.T) {
	str := &schema.Type{Kind: schema.String}
	customers := &encode.Row{DB: "inventory", Table: "customers", Topic: "src"}
	orders := &encode.Row{DB: "shop", Table: "orders", Topic: "src"}
	plain := &encode.Row{Topic: "events"}
	withTopic := &encode.Row{DB: "inventory", Table: "customers", Topic: "src",
		Fields: []schema.Field{{Name: "id", Type: str}, {Name: "topic", Type: str}}, Values: []any{"1", "chosen"}}
	nullTopic := &encode.Row{DB: "inventory", Table: "customers", Topic: "src",
		Fields: []schema.Field{{Name: "topic", Type: str}}, Values: []any{nil}}
	invOrders := &encode.Row{DB: "inventory", Table: "orders", Topic: "src"}
	products := &encode.Row{DB: "inventory", Table: "products", Topic: "src"}
	const crmCatalog = "inventory.customers,inventory.orders:crm;inventory.products:catalog"
	yes := true
	for _, tc := range []struct {
		name string
		sink spec.KafkaSink
		row  *encode.Row
		want string
	}{
		{"default table", spec.KafkaSink{}, customers, "customers"},
		{"default full table id", spec.KafkaSink{FullTableID: &yes}, customers, "inventory.customers"},
		{"default plain topic", spec.KafkaSink{FullTableID: &yes}, plain, "events"},
		{"topic", spec.KafkaSink{Topic: "out"}, customers, "out"},
		// Spark's rule: the topic option, when set, overrides a topic column.
		{"topic wins over the topic column", spec.KafkaSink{Topic: "out"}, withTopic, "out"},
		{"topic column", spec.KafkaSink{}, withTopic, "chosen"},
		{"topic column over mapping", spec.KafkaSink{TableTopicMapping: "inventory.customers:c"}, withTopic, "chosen"},
		{"null topic column", spec.KafkaSink{TableTopicMapping: "inventory.customers:c"}, nullTopic, "c"},
		{"mapping", spec.KafkaSink{TableTopicMapping: "inventory.customers:c; shop.o.*:o"}, orders, "o"},
		{"mapping alternatives", spec.KafkaSink{TableTopicMapping: "x.y|inventory\\.cust.*:c"}, customers, "c"},
		{"mapping whole id", spec.KafkaSink{TableTopicMapping: "inventory.cust:c"}, customers, "customers"},
		{"mapping first wins", spec.KafkaSink{TableTopicMapping: "inventory.*:first;inventory.customers:second"}, customers, "first"},
		{"mapping topic source", spec.KafkaSink{TableTopicMapping: "events:e"}, plain, "e"},
		// Flink's form: comma-separated table ids share one topic.
		{"mapping list first", spec.KafkaSink{TableTopicMapping: crmCatalog}, customers, "crm"},
		{"mapping list second", spec.KafkaSink{TableTopicMapping: crmCatalog}, invOrders, "crm"},
		{"mapping list other entry", spec.KafkaSink{TableTopicMapping: crmCatalog}, products, "catalog"},
		{"mapping list regexes", spec.KafkaSink{TableTopicMapping: "x.y, shop\\.o.*:o"}, orders, "o"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := encode.NewRouter(&tc.sink)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Topic(tc.row); got != tc.want {
				t.Fatalf("topic %q, want %q", got, tc.want)
			}
		})
	}
	for _, bad := range []string{"no-colon", "db.t:", ":topic", "db.(t:topic"} {
		if _, err := encode.NewRouter(&spec.KafkaSink{TableTopicMapping: bad}); err == nil {
			t.Errorf("table_topic_mapping %q: no error", bad)
		}
	}
}

// TestRouterFieldsChange: one router finds the topic column of each row's
// fields, as they change from row to row.
func TestRouterFieldsChange(t *testing.T) {
	str := &schema.Type{Kind: schema.String}
	first := []schema.Field{{Name: "topic", Type: str}, {Name: "id", Type: str}}
	second := []schema.Field{{Name: "id", Type: str}, {Name: "topic", Type: str}}
	r, err := encode.NewRouter(&spec.KafkaSink{TableTopicMapping: ".*:out"})
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		row  encode.Row
		want string
	}{
		{encode.Row{Fields: first, Values: []any{"a", "1"}}, "a"},
		{encode.Row{Fields: first, Values: []any{"b", "2"}}, "b"},
		{encode.Row{Fields: second, Values: []any{"3", "c"}}, "c"},
		{encode.Row{Fields: second[:1], Values: []any{"4"}}, "out"},
		{encode.Row{Fields: first[1:], Values: []any{"5"}}, "out"},
		{encode.Row{Fields: first, Values: []any{"d", "6"}}, "d"},
	} {
		if got := r.Topic(&tc.row); got != tc.want {
			t.Fatalf("row %d: topic %q, want %q", i, got, tc.want)
		}
	}
}
