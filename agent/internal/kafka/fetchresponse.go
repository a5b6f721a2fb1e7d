package kafka

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/fetch"
)

// fetchVersion is the Fetch API version the agent speaks: the newest one
// kafka-go's protocol package encodes (v11, Kafka 2.3+). It carries the
// isolation level, the last stable offset and the aborted transactions.
const fetchVersion = 11

// maxResponseSize bounds the size of one fetch response a broker may send:
// a fetch asks for at most fetchMaxBytes, but a single record batch larger
// than that is still returned whole.
const maxResponseSize = 256 << 20

// fetchedPartition is one partition of a fetch response.
type fetchedPartition struct {
	errorCode     int16
	highWatermark int64
	lastStable    int64
	aborted       []abortedTxn
	// preferredReplica is the broker id the leader asks the client to
	// fetch from instead (KIP-392, a replica.selector.class on the
	// brokers), or -1.
	preferredReplica int32
	// records holds whole record batches, possibly followed by a partial
	// one the size limit cut.
	records []byte
	// size is the size of the response records points into.
	size int
	// resp is the pooled buffer the response was read into, which records
	// points into; nil once given back (see release), and for responses
	// not read by readFetch.
	resp *[]byte
}

// release gives the buffer the response was read into back to the pool,
// if p still has it: nothing may use p's records after.
func (p *fetchedPartition) release() {
	if p.resp != nil {
		bytePool.put(p.resp)
		p.resp = nil
	}
}

// writeFetch sends a fetch request for up to maxBytes of one partition,
// with the client id, minimum size and wait of rs, encoded by kafka-go. The
// minimum is at most maxBytes: a broker counts a partition's data towards
// the minimum only up to the partition's maximum, so a larger one would
// make every fetch wait its full wait.
func writeFetch(w io.Writer, correlationID int32, tp TopicPartition, offset int64, readCommitted bool, maxBytes int32,
	rs *requestSettings) error {
	isolation := int8(0)
	if readCommitted {
		isolation = 1
	}
	req := &fetch.Request{
		ReplicaID: -1, MaxWaitTime: int32(rs.maxWait.Milliseconds()), MinBytes: min(rs.minBytes, maxBytes), MaxBytes: maxBytes,
		IsolationLevel: isolation, SessionEpoch: -1,
		Topics: []fetch.RequestTopic{{Topic: tp.Topic, Partitions: []fetch.RequestPartition{{
			Partition: int32(tp.Partition), CurrentLeaderEpoch: -1, FetchOffset: offset,
			LogStartOffset: -1, PartitionMaxBytes: maxBytes,
		}}}},
	}
	return protocol.WriteRequest(w, fetchVersion, correlationID, rs.clientID, req)
}

// readFetch reads the response to the fetch request with correlationID and
// returns the part about tp. The response is read into a buffer of its own
// from the pool, which the returned records point into, and which the
// caller gives back with release; after an error, readFetch has.
func readFetch(r *bufio.Reader, correlationID int32, tp TopicPartition) (fetchedPartition, error) {
	var head [8]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return fetchedPartition{}, fmt.Errorf("read fetch response: %w", err)
	}
	size := int32(binary.BigEndian.Uint32(head[:]))
	if size < 4 || size > maxResponseSize {
		return fetchedPartition{}, fmt.Errorf("fetch response of %d bytes is out of bounds (is TLS misconfigured on the client or the broker?)", size)
	}
	if got := int32(binary.BigEndian.Uint32(head[4:])); got != correlationID {
		return fetchedPartition{}, fmt.Errorf("fetch response has correlation id %d, want %d", got, correlationID)
	}
	resp := bytePool.get(int(size - 4))
	*resp = (*resp)[:size-4]
	body := *resp
	if _, err := io.ReadFull(r, body); err != nil {
		bytePool.put(resp)
		return fetchedPartition{}, fmt.Errorf("read fetch response: %w", err)
	}
	p, err := parseFetch(body, tp)
	if err != nil {
		bytePool.put(resp)
		return fetchedPartition{}, err
	}
	p.size, p.resp = len(body), resp
	return p, nil
}

// parseFetch decodes a v11 fetch response body and returns the part about
// tp.
func parseFetch(body []byte, tp TopicPartition) (fetchedPartition, error) {
	d := wireDecoder{buf: body}
	d.int32() // throttle time
	if code := d.int16(); code != 0 && d.err == nil {
		return fetchedPartition{errorCode: code}, nil
	}
	d.int32() // session id
	var found *fetchedPartition
	for range d.arrayLen(2 + 4) { // a name, an empty partition list
		topic := d.string()
		for range d.arrayLen(4 + 2 + 3*8 + 4 + 4 + 4) { // up to the records' length
			var p fetchedPartition
			index := d.int32()
			p.errorCode = d.int16()
			p.highWatermark = d.int64()
			p.lastStable = d.int64()
			d.int64() // log start offset
			if n := d.arrayLen(16); n > 0 {
				p.aborted = make([]abortedTxn, n)
				for i := range p.aborted {
					p.aborted[i] = abortedTxn{ProducerID: d.int64(), FirstOffset: d.int64()}
				}
			}
			p.preferredReplica = d.int32()
			p.records = d.bytes()
			if d.err == nil && topic == tp.Topic && int(index) == tp.Partition {
				found = &p
			}
		}
	}
	if d.err != nil {
		return fetchedPartition{}, fmt.Errorf("decode fetch response: %w", d.err)
	}
	if found == nil {
		return fetchedPartition{}, fmt.Errorf("fetch response has no data for %s", tp)
	}
	return *found, nil
}

// wireDecoder reads the fixed-width, non-flexible Kafka wire types. After
// the first error every read returns zero and err keeps that error.
type wireDecoder struct {
	buf []byte
	err error
}

var errShortResponse = errors.New("response shorter than its fields")

func (d *wireDecoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || len(d.buf) < n {
		d.err = errShortResponse
		return nil
	}
	b := d.buf[:n:n]
	d.buf = d.buf[n:]
	return b
}

func (d *wireDecoder) int16() int16 {
	if b := d.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (d *wireDecoder) int32() int32 {
	if b := d.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (d *wireDecoder) int64() int64 {
	if b := d.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// arrayLen reads an array length; a null array (-1) is empty. Every
// element takes at least minSize bytes: a length the rest of the response
// cannot hold is an error, not an allocation.
func (d *wireDecoder) arrayLen(minSize int) int {
	n := d.int32()
	if n < 0 {
		return 0
	}
	if int64(n)*int64(minSize) > int64(len(d.buf)) {
		d.err = errShortResponse
		return 0
	}
	return int(n)
}

func (d *wireDecoder) string() string { return string(d.take(int(d.int16()))) }

// bytes reads nullable bytes; null (-1) is nil.
func (d *wireDecoder) bytes() []byte {
	n := d.int32()
	if n < 0 {
		return nil
	}
	return d.take(int(n))
}
