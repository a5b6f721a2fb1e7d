package provider

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// withNullMaps returns m with its map attributes that a test left as zero
// values (which have no element type) null, as an unset map is.
func withNullMaps(m kafkaOptionsModel) kafkaOptionsModel {
	for _, f := range []struct {
		v *types.Map
		t types.MapType
	}{
		{&m.Assign, assignType}, {&m.StartingOffsets, partitionMapType}, {&m.StartingOffsetsByTimestamp, partitionMapType},
		{&m.EndingOffsets, partitionMapType}, {&m.EndingOffsetsByTimestamp, partitionMapType},
		{&m.ClientProperties, types.MapType{ElemType: types.StringType}},
	} {
		if f.v.ElementType(context.Background()) == nil {
			*f.v = types.MapNull(f.t.ElemType)
		}
	}
	return m
}

// TestConsumerOptionsRoundTrip: every option of consumerAttributes and
// fieldAttributes set on a table goes to the spec and back to the same
// Terraform values.
func TestConsumerOptionsRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ko := spec.KafkaOptions{
		Assign:                     map[string][]int{"events": {0, 2}},
		StartingOffset:             spec.StartingOffsetSpecific,
		StartingTimestamp:          "2023-11-14T22:13:20Z",
		StartingOffsets:            map[string]map[string]int64{"events": {"0": 23, "2": -2}},
		StartingOffsetsByTimestamp: map[string]map[string]int64{"events": {"0": 1_700_000_000_000}},
		AutoOffsetReset:            spec.AutoOffsetResetNone,
		EndingOffset:               spec.EndingOffsetSpecific,
		EndingOffsets:              map[string]map[string]int64{"events": {"0": 100, "2": -1}},
		EndingTimestamp:            "1700000000000",
		EndingOffsetsByTimestamp:   map[string]map[string]int64{"events": {"2": 1_700_000_000_001}},
		MaxOffsetsPerTrigger:       ptrTo(int64(1000)),
		MinOffsetsPerTrigger:       ptrTo(int64(10)),
		MaxTriggerDelay:            "1m",
		MinPartitions:              ptrTo(int64(4)),
		MaxRecordsPerPartition:     ptrTo(int64(5000)),
		FailOnDataLoss:             ptrTo(false),
		GroupID:                    "etl-events",
		GroupIDPrefix:              "etl.",
		CheckDuplicatedGroupID:     ptrTo(true),
		PartitionDiscoveryInterval: "30s",
		BytesEstimateWindowLength:  "10m",
		KeyFieldsPrefix:            "k_",
		ValueFieldsPrefix:          "v_",
		DuplicateFieldStrategy:     spec.DuplicateFieldPreferValue,
		IgnoreErrors:               ptrTo(true),
		ErrorToleranceMaxCount:     ptrTo(int64(10)),
		ClientProperties:           map[string]string{"client.id": "ingest", "fetch.min.bytes": "1024"},
		IsolationLevel:             spec.IsolationReadCommitted,
	}
	p := &spec.Pipeline{Name: "p1", Connection: "c1", DestinationCatalog: "main", DestinationSchema: "raw",
		Continuous: ptrTo(false), Tables: []spec.Table{{DestinationTable: "events",
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: ko}}}}
	var m pipelineResourceModel
	var diags diag.Diagnostics
	m.setFromSpec(ctx, p, nil, &diags)
	if diags.HasError() {
		t.Fatalf("setFromSpec: %v", diags)
	}
	c := newSpecConverter(ctx, false)
	back := c.pipeline(&m)
	if c.diags.HasError() || len(c.unknown) > 0 {
		t.Fatalf("converting back: %v, unknown %v", c.diags, c.unknown)
	}
	if got := back.Tables[0].ConnectorOptions.KafkaOptions; !reflect.DeepEqual(got, ko) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, ko)
	}

	// Unset, the options are null or their defaults, as Normalize has them.
	p.Tables[0].ConnectorOptions.KafkaOptions = spec.KafkaOptions{Topics: []string{"events"}}
	m.setFromSpec(ctx, p, nil, &diags)
	back = newSpecConverter(ctx, false).pipeline(&m)
	norm := &spec.Pipeline{Continuous: ptrTo(false), Tables: []spec.Table{{ConnectorOptions: spec.ConnectorOptions{
		KafkaOptions: spec.KafkaOptions{Topics: []string{"events"}}}}}}
	norm.Normalize()
	if got := back.Tables[0].ConnectorOptions.KafkaOptions; !reflect.DeepEqual(got, norm.Tables[0].ConnectorOptions.KafkaOptions) {
		t.Errorf("defaults:\n got %+v\nwant %+v", got, norm.Tables[0].ConnectorOptions.KafkaOptions)
	}
}

// TestConsumerOptionsUnknownMap: a map holding an unknown value is
// recorded as unknown, so the rules reading it wait for it.
func TestConsumerOptionsUnknownMap(t *testing.T) {
	t.Parallel()
	inner, _ := types.MapValue(types.Int64Type, map[string]attr.Value{"0": types.Int64Unknown()})
	offsets, _ := types.MapValue(partitionMapType.ElemType, map[string]attr.Value{"events": inner})
	c := newSpecConverter(context.Background(), false)
	got := convertMap[map[string]int64](c, "starting_offsets", offsets)
	if got == nil || len(got) != 0 || !c.unknown["starting_offsets"] {
		t.Errorf("convertMap of a partly unknown map = %v, unknown %v", got, c.unknown)
	}
}

func ptrTo[T any](v T) *T { return &v }
