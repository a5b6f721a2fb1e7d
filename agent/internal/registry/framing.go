package registry

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// headerLen is the length of the Confluent header: the magic byte and a
// 4-byte schema id.
const headerLen = 5

// maxIndexes bounds the message index count of a Protobuf payload; a path
// through nested message types deeper than this is not a real schema.
const maxIndexes = 128

// ParseHeader splits a Confluent-framed record value or key into the schema
// id and the payload after the header: a magic byte 0, then the id as a
// 4-byte big-endian integer.
func ParseHeader(data []byte) (id int, payload []byte, err error) {
	switch {
	case len(data) == 0:
		return 0, nil, errors.New("empty message: no schema registry header")
	case data[0] != 0:
		return 0, nil, fmt.Errorf("bad magic byte 0x%02x: not schema registry framing, which starts with 0x00", data[0])
	case len(data) < headerLen:
		return 0, nil, fmt.Errorf("short header: %d bytes, want %d (magic byte and 4-byte schema id)", len(data), headerLen)
	}
	return int(binary.BigEndian.Uint32(data[1:headerLen])), data[headerLen:], nil
}

// ParseMessageIndexes splits the payload of a Confluent-framed Protobuf
// message (what ParseHeader returns) into the message indexes, the path to
// the message type among the schema's nested message types, and the
// serialized message after them. The indexes are a zig-zag varint count then
// that many zig-zag varints; a count of 0 is short for [0], the first message
// type. The count is bounded by 128 and by the bytes left, so hostile input
// cannot make it allocate much.
func ParseMessageIndexes(payload []byte) (indexes []int, rest []byte, err error) {
	count, n := binary.Varint(payload)
	if err := varintError(n, len(payload)); err != nil {
		return nil, nil, fmt.Errorf("message index count: %w", err)
	}
	rest = payload[n:]
	switch {
	case count == 0:
		return []int{0}, rest, nil
	case count < 0:
		return nil, nil, fmt.Errorf("message index count %d is negative", count)
	case count > maxIndexes:
		return nil, nil, fmt.Errorf("message index count %d is more than %d", count, maxIndexes)
	case count > int64(len(rest)):
		return nil, nil, fmt.Errorf("message index count %d is more than the %d bytes left", count, len(rest))
	}
	indexes = make([]int, count)
	for i := range indexes {
		v, n := binary.Varint(rest)
		if err := varintError(n, len(rest)); err != nil {
			return nil, nil, fmt.Errorf("message index %d of %d: %w", i, count, err)
		}
		if v < 0 || v > math.MaxInt32 {
			return nil, nil, fmt.Errorf("message index %d of %d is %d, out of range", i, count, v)
		}
		indexes[i] = int(v)
		rest = rest[n:]
	}
	return indexes, rest, nil
}

// varintError explains a non-positive n from binary.Varint read from left
// bytes, or returns nil for a varint read whole.
func varintError(n, left int) error {
	switch {
	case n > 0:
		return nil
	case n < 0:
		return errors.New("varint overflows 64 bits")
	case left == 0:
		return errors.New("missing varint: no bytes left")
	default:
		return fmt.Errorf("truncated varint: %d bytes without an end", left)
	}
}
