package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// convertMap returns the map v at spec path p as a map of T; nil for null.
// A map that is unknown, or holds an unknown value, is recorded in unknown
// and returned empty, so that rules on its presence do not fire.
func convertMap[T any](c *specConverter, p string, v types.Map) map[string]T {
	if v.IsNull() {
		return nil
	}
	tv, err := v.ToTerraformValue(c.ctx)
	if v.IsUnknown() || err != nil || !tv.IsFullyKnown() {
		c.unknown[p] = true
		return map[string]T{}
	}
	out := map[string]T{}
	c.diags.Append(v.ElementsAs(c.ctx, &out, false)...)
	return out
}

// mapOrNull builds a map of type t from m; nil or empty is null, as the
// spec does not keep an empty map (and Validate refuses one).
func mapOrNull[T any](ctx context.Context, diags *diag.Diagnostics, t types.MapType, m map[string]T) types.Map {
	if len(m) == 0 {
		return types.MapNull(t.ElemType)
	}
	v, d := types.MapValueFrom(ctx, t.ElemType, m)
	diags.Append(d...)
	return v
}

// consumerOptions sets the options of consumerAttributes of ko from m, the
// kafka_options at spec path p.
func (c *specConverter) consumerOptions(p string, m *kafkaOptionsModel, ko *spec.KafkaOptions) {
	ko.Assign = convertMap[[]int](c, p+".assign", m.Assign)
	ko.StartingTimestamp = c.str(p+".starting_timestamp", m.StartingTimestamp)
	ko.StartingOffsets = convertMap[map[string]int64](c, p+".starting_offsets", m.StartingOffsets)
	ko.StartingOffsetsByTimestamp = convertMap[map[string]int64](c, p+".starting_offsets_by_timestamp", m.StartingOffsetsByTimestamp)
	ko.AutoOffsetReset = c.str(p+".auto_offset_reset", m.AutoOffsetReset)
	ko.EndingOffset = c.str(p+".ending_offset", m.EndingOffset)
	ko.EndingOffsets = convertMap[map[string]int64](c, p+".ending_offsets", m.EndingOffsets)
	ko.EndingTimestamp = c.str(p+".ending_timestamp", m.EndingTimestamp)
	ko.EndingOffsetsByTimestamp = convertMap[map[string]int64](c, p+".ending_offsets_by_timestamp", m.EndingOffsetsByTimestamp)
	ko.MaxOffsetsPerTrigger = c.int64Ptr(p+".max_offsets_per_trigger", m.MaxOffsetsPerTrigger)
	ko.MinOffsetsPerTrigger = c.int64Ptr(p+".min_offsets_per_trigger", m.MinOffsetsPerTrigger)
	ko.MaxTriggerDelay = c.str(p+".max_trigger_delay", m.MaxTriggerDelay)
	ko.MinPartitions = c.int64Ptr(p+".min_partitions", m.MinPartitions)
	ko.MaxRecordsPerPartition = c.int64Ptr(p+".max_records_per_partition", m.MaxRecordsPerPartition)
	ko.FailOnDataLoss = c.boolPtr(p+".fail_on_data_loss", m.FailOnDataLoss)
	ko.GroupID = c.str(p+".group_id", m.GroupID)
	ko.GroupIDPrefix = c.str(p+".group_id_prefix", m.GroupIDPrefix)
	ko.CheckDuplicatedGroupID = c.boolPtr(p+".check_duplicated_group_id", m.CheckDuplicatedGroupID)
	ko.PartitionDiscoveryInterval = c.str(p+".partition_discovery_interval", m.PartitionDiscoveryInterval)
	ko.BytesEstimateWindowLength = c.str(p+".bytes_estimate_window_length", m.BytesEstimateWindowLength)
	ko.ClientProperties = convertMap[string](c, p+".client_properties", m.ClientProperties)
}

// setConsumerOptions sets the attributes of consumerAttributes of m from
// ko, as the agent stores it (normalized).
func (m *kafkaOptionsModel) setConsumerOptions(ctx context.Context, ko *spec.KafkaOptions, diags *diag.Diagnostics) {
	m.Assign = mapOrNull(ctx, diags, assignType, ko.Assign)
	m.StartingTimestamp = stringOrNull(ko.StartingTimestamp)
	m.StartingOffsets = mapOrNull(ctx, diags, partitionMapType, ko.StartingOffsets)
	m.StartingOffsetsByTimestamp = mapOrNull(ctx, diags, partitionMapType, ko.StartingOffsetsByTimestamp)
	m.AutoOffsetReset = stringOrDefault(ko.AutoOffsetReset, spec.DefaultAutoOffsetReset)
	m.EndingOffset = stringOrNull(ko.EndingOffset)
	m.EndingOffsets = mapOrNull(ctx, diags, partitionMapType, ko.EndingOffsets)
	m.EndingTimestamp = stringOrNull(ko.EndingTimestamp)
	m.EndingOffsetsByTimestamp = mapOrNull(ctx, diags, partitionMapType, ko.EndingOffsetsByTimestamp)
	m.MaxOffsetsPerTrigger = types.Int64PointerValue(ko.MaxOffsetsPerTrigger)
	m.MinOffsetsPerTrigger = types.Int64PointerValue(ko.MinOffsetsPerTrigger)
	m.MaxTriggerDelay = stringOrNull(ko.MaxTriggerDelay)
	m.MinPartitions = types.Int64PointerValue(ko.MinPartitions)
	m.MaxRecordsPerPartition = types.Int64PointerValue(ko.MaxRecordsPerPartition)
	m.FailOnDataLoss = types.BoolValue(ko.FailsOnDataLoss())
	m.GroupID = stringOrNull(ko.GroupID)
	m.GroupIDPrefix = stringOrNull(ko.GroupIDPrefix)
	m.CheckDuplicatedGroupID = types.BoolValue(ko.ChecksDuplicatedGroupID())
	m.PartitionDiscoveryInterval = stringOrDefault(ko.PartitionDiscoveryInterval, spec.DefaultPartitionDiscoveryInterval)
	m.BytesEstimateWindowLength = stringOrDefault(ko.BytesEstimateWindowLength, spec.DefaultBytesEstimateWindowLength)
	m.ClientProperties = mapOrNull(ctx, diags, types.MapType{ElemType: types.StringType}, ko.ClientProperties)
}
