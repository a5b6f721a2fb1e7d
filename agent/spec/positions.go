package spec

// Starting offset modes beyond latest and earliest.
const (
	// StartingOffsetTimestamp starts each partition at its first record at
	// or after starting_timestamp, or its starting_offsets_by_timestamp.
	StartingOffsetTimestamp = "timestamp"
	// StartingOffsetSpecific starts the partitions at starting_offsets.
	StartingOffsetSpecific = "specific"
	// StartingOffsetGroup starts each partition at the offset its consumer
	// group (group_id) committed, else at auto_offset_reset (Flink's
	// group-offsets).
	StartingOffsetGroup = "group"
)

// Ending offset modes of a triggered run.
const (
	EndingOffsetLatest    = "latest"
	EndingOffsetSpecific  = "specific"
	EndingOffsetTimestamp = "timestamp"
)

// EndingOffsets lists the accepted ending_offset values.
var EndingOffsets = []string{EndingOffsetLatest, EndingOffsetSpecific, EndingOffsetTimestamp}

// auto_offset_reset values.
const (
	AutoOffsetResetLatest   = "latest"
	AutoOffsetResetEarliest = "earliest"
	// AutoOffsetResetNone fails the table when a partition has no offset
	// to start at.
	AutoOffsetResetNone = "none"
)

// AutoOffsetResets lists the accepted auto_offset_reset values.
var AutoOffsetResets = []string{AutoOffsetResetLatest, AutoOffsetResetEarliest, AutoOffsetResetNone}

// Offsets in starting_offsets and ending_offsets that name a position
// rather than an offset, as in Spark's JSON.
const (
	OffsetEarliest = -2
	OffsetLatest   = -1
)

// Defaults of the flow control and discovery options.
const (
	DefaultAutoOffsetReset            = AutoOffsetResetLatest
	DefaultEndingOffset               = EndingOffsetLatest
	DefaultMaxTriggerDelay            = "15m"
	DefaultPartitionDiscoveryInterval = "5m"
	DefaultBytesEstimateWindowLength  = "5m"
	DefaultGroupIDPrefix              = "tributary."
)
