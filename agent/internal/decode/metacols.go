package decode

import (
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// metaColumns writes table_configuration.metadata_columns: record metadata
// as top-level columns, named and typed as [spec.MetadataColumnType] says,
// in the order the table lists them.
type metaColumns struct {
	// first is the top-level field of the first column; kinds are the
	// columns in order.
	first int
	kinds []metaKind
}

// metaKind is what a metadata column holds.
type metaKind uint8

// The metadata columns' kinds; metaNone, of a name only spec knows, writes
// nothing.
const (
	metaNone metaKind = iota
	metaTopic
	metaPartition
	metaOffset
	metaTimestamp
	metaTimestampType
	metaHeaders
	metaLeaderEpoch
	metaRawKey
	metaRawValue
)

// metaKinds are the kinds of the metadata column names.
var metaKinds = map[string]metaKind{
	spec.MetaTopic: metaTopic, spec.MetaPartition: metaPartition, spec.MetaOffset: metaOffset,
	spec.MetaTimestamp: metaTimestamp, spec.MetaTimestampType: metaTimestampType, spec.MetaHeaders: metaHeaders,
	spec.MetaLeaderEpoch: metaLeaderEpoch, spec.MetaRawKey: metaRawKey, spec.MetaRawValue: metaRawValue,
}

// newMetaColumns returns the writer of the metadata columns names, the
// last of which is the top-level field before end: of names, those
// [spec.MetadataColumnType] knows, the columns [spec.Layout.Columns]
// lists.
func newMetaColumns(end int, names []string) metaColumns {
	var kinds []metaKind
	for _, n := range names {
		if spec.MetadataColumnType(n) != nil {
			kinds = append(kinds, metaKinds[n])
		}
	}
	return metaColumns{first: end - len(kinds), kinds: kinds}
}

// Values of the timestamp_type metadata column, as Kafka's Java client
// names the timestamp types.
const (
	createTime      = "CreateTime"
	logAppendTime   = "LogAppendTime"
	noTimestampType = "NoTimestampType"
)

// write writes r's metadata columns to b's open row. The values alias r's
// strings, key, value and header bytes.
func (m *metaColumns) write(b *rows.Builder, r *record.Record) {
	for i, kind := range m.kinds {
		b.Field(m.first + i)
		switch kind {
		case metaTopic:
			b.Bytes(bytesOf(r.Topic))
		case metaPartition:
			b.Int32(r.Partition)
		case metaOffset:
			b.Int64(r.Offset)
		case metaTimestamp:
			writeTimestamp(b, r)
		case metaTimestampType:
			b.Bytes(bytesOf(timestampTypeName(r.TimestampType)))
		case metaHeaders:
			writeHeaders(b, r.Headers)
		case metaLeaderEpoch:
			if r.LeaderEpoch < 0 {
				b.Null()
			} else {
				b.Int32(r.LeaderEpoch)
			}
		case metaRawKey:
			writeNullable(b, r.Key)
		case metaRawValue:
			writeNullable(b, r.Value)
		}
	}
}

// timestampTypeName names a record's timestamp type as Kafka's Java client
// does: 0 is CreateTime, 1 LogAppendTime; anything else (a message format
// before v1) NoTimestampType.
func timestampTypeName(t int8) string {
	switch t {
	case 0:
		return createTime
	case 1:
		return logAppendTime
	}
	return noTimestampType
}

// writeTimestamp writes r's timestamp as a TIMESTAMP, null when r has
// none.
func writeTimestamp(b *rows.Builder, r *record.Record) {
	if !r.HasTimestamp() {
		b.Null()
	} else {
		b.Int64(r.Timestamp.UnixMicro())
	}
}

// writeNullable writes data as BINARY, nil as null.
func writeNullable(b *rows.Builder, data []byte) {
	if data == nil {
		b.Null()
	} else {
		b.Bytes(data)
	}
}

// writeHeaders writes hs as a list of key-value structs, every header in
// order (repeated keys kept); no headers is null, as in Spark's Kafka
// source.
func writeHeaders(b *rows.Builder, hs []record.Header) {
	if len(hs) == 0 {
		b.Null()
		return
	}
	b.BeginList()
	for i := range hs {
		h := &hs[i]
		b.BeginStruct()
		b.Field(0)
		b.Bytes(validUTF8(b, bytesOf(h.Key)))
		b.Field(1)
		writeNullable(b, h.Value)
		b.EndStruct()
	}
	b.EndList()
}
