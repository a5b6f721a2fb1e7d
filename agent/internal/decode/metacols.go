package decode

import (
	"slices"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/rows"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// metaColumns writes table_configuration.metadata_columns: record metadata
// as top-level columns, named and typed as [spec.MetadataColumnType] says,
// in the order the table lists them.
type metaColumns struct {
	// first is the top-level field of the first column; names are the
	// columns in order.
	first int
	names []string
}

// newMetaColumns returns the writer of the metadata columns names, the
// last of which is the top-level field before end: of names, those
// [spec.MetadataColumnType] knows, the columns [spec.Layout.Columns]
// lists.
func newMetaColumns(end int, names []string) metaColumns {
	known := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return spec.MetadataColumnType(n) == nil })
	return metaColumns{first: end - len(known), names: known}
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
func (m *metaColumns) write(b *rows.Builder, r *Record) {
	for i, name := range m.names {
		b.Field(m.first + i)
		switch name {
		case spec.MetaTopic:
			b.Bytes(bytesOf(r.Topic))
		case spec.MetaPartition:
			b.Int32(r.Partition)
		case spec.MetaOffset:
			b.Int64(r.Offset)
		case spec.MetaTimestamp:
			writeTimestamp(b, r)
		case spec.MetaTimestampType:
			b.Bytes(bytesOf(timestampTypeName(r.TimestampType)))
		case spec.MetaHeaders:
			writeHeaders(b, r.Headers)
		case spec.MetaLeaderEpoch:
			if r.LeaderEpoch < 0 {
				b.Null()
			} else {
				b.Int32(r.LeaderEpoch)
			}
		case spec.MetaRawKey:
			writeNullable(b, r.Key)
		case spec.MetaRawValue:
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
func writeTimestamp(b *rows.Builder, r *Record) {
	if r.Timestamp.IsZero() || r.Timestamp.UnixMilli() < 0 {
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
func writeHeaders(b *rows.Builder, hs []Header) {
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
