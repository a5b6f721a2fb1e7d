package kafka

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	kafkago "github.com/segmentio/kafka-go"
)

// This file asks a broker for topic metadata with the Metadata API v12
// (Kafka 2.8+), which carries each topic's id. kafka-go's protocol package
// stops at v8, before topic ids existed; the request and response are small
// enough to encode here. A topic id tells a topic apart from an earlier one
// of the same name that was deleted.

const (
	apiMetadata     = 3
	metadataVersion = 12
)

// TopicInfo is what the agent needs to know about one topic: its id and the
// leader of each partition.
type TopicInfo struct {
	// ID is the topic's id as Kafka's tools print it (22 characters of
	// URL-safe base64); a topic deleted and created again under the same
	// name gets a new one.
	ID string
	// Leaders maps each partition to its leader's address, host:port.
	Leaders map[int]string
}

// topicMetadata returns the metadata of each of topics, asking one of the
// bootstrap brokers with the request settings rs. A topic that does not
// exist is an error wrapping kafkago.UnknownTopicOrPartition.
func (c *Client) topicMetadata(ctx context.Context, topics []string, rs *requestSettings) (map[string]TopicInfo, error) {
	var out map[string]TopicInfo
	err := c.anyBroker(ctx, rs, "read metadata", func(conn net.Conn) (err error) {
		out, err = requestMetadata(ctx, conn, topics, rs)
		return err
	})
	return out, err
}

// anyBroker calls ask with a connection to the first bootstrap broker that
// answers, with the request settings rs: a broker that cannot be reached,
// or whose connection breaks during ask, gives way to the next. An error
// of ask that is not a connection problem is returned as it is; what
// names the request in the error when no broker answered.
func (c *Client) anyBroker(ctx context.Context, rs *requestSettings, what string, ask func(net.Conn) error) error {
	var lastErr error
	for _, b := range c.brokers {
		dctx, cancel := rs.dialContext(ctx)
		conn, err := c.dial(dctx, "tcp", b)
		cancel()
		if err != nil {
			lastErr = err
			continue
		}
		err = ask(conn)
		_ = conn.Close() // one request a connection: what it answered is in err
		if err == nil || !isNetError(err) {
			return err
		}
		lastErr = err
	}
	return c.fail("", lastErr, "%s from any of %v", what, c.brokers)
}

// isNetError reports whether err is a connection problem worth trying the
// next broker for.
func isNetError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// requestMetadata sends one Metadata v12 request over conn, with the
// client id and within the request timeout of rs, and decodes the answer.
func requestMetadata(ctx context.Context, conn net.Conn, topics []string, rs *requestSettings) (map[string]TopicInfo, error) {
	const correlationID = 1
	frame := encodeMetadataRequest(correlationID, rs.clientID, topics)
	body, err := exchange(ctx, conn, frame, correlationID, "metadata", rs.timeout(metadataTimeout))
	if err != nil {
		return nil, err
	}
	return parseMetadata(body, topics)
}

// exchange sends frame, a whole request with correlationID, over conn and
// returns the body of the response (after its correlation id), within
// timeout; what names the request in errors.
func exchange(ctx context.Context, conn net.Conn, frame []byte, correlationID int32, what string, timeout time.Duration) ([]byte, error) {
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	if _, err := conn.Write(frame); err != nil {
		return nil, fmt.Errorf("send %s request: %w", what, err)
	}
	r := bufio.NewReader(conn)
	var head [8]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, fmt.Errorf("read %s response: %w", what, err)
	}
	size := int32(binary.BigEndian.Uint32(head[:]))
	if size < 4 || size > maxResponseSize {
		return nil, fmt.Errorf("%s response of %d bytes is out of bounds (is TLS misconfigured on the client or the broker?)", what, size)
	}
	if got := int32(binary.BigEndian.Uint32(head[4:])); got != correlationID {
		return nil, fmt.Errorf("%s response has correlation id %d, want %d", what, got, correlationID)
	}
	body := make([]byte, size-4)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("read %s response: %w", what, err)
	}
	return body, nil
}

// appendRequestHeader appends the size placeholder and request header v2
// (that of flexible requests) to b; the caller fills the size in last.
func appendRequestHeader(b []byte, apiKey, version int16, correlationID int32, clientID string) []byte {
	b = append(b, 0, 0, 0, 0) // size, filled last
	b = binary.BigEndian.AppendUint16(b, uint16(apiKey))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(correlationID))
	b = binary.BigEndian.AppendUint16(b, uint16(len(clientID))) // client id: a classic string
	b = append(b, clientID...)
	return append(b, 0) // header tagged fields
}

// encodeMetadataRequest returns a whole Metadata v12 request frame for
// topics, from client id: request header v2, then the flexible body.
func encodeMetadataRequest(correlationID int32, id string, topics []string) []byte {
	b := appendRequestHeader(make([]byte, 0, 64), apiMetadata, metadataVersion, correlationID, id)
	b = binary.AppendUvarint(b, uint64(len(topics)+1))
	for _, t := range topics {
		b = append(b, make([]byte, 16)...) // topic id: zero, ask by name
		b = binary.AppendUvarint(b, uint64(len(t)+1))
		b = append(b, t...)
		b = append(b, 0) // tagged fields
	}
	b = append(b, 0, 0, 0) // allow auto-creation, authorized operations, tagged fields
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// parseMetadata decodes a Metadata v12 response body (after the correlation
// id) and returns the topics asked for.
func parseMetadata(body []byte, topics []string) (map[string]TopicInfo, error) {
	d := compactDecoder{wireDecoder{buf: body}}
	d.tags()  // response header tagged fields
	d.int32() // throttle time
	brokers := map[int32]string{}
	for range d.compactLen() {
		id := d.int32()
		host := d.compactString()
		port := d.int32()
		d.compactString() // rack
		d.tags()
		brokers[id] = net.JoinHostPort(host, strconv.Itoa(int(port)))
	}
	d.compactString() // cluster id
	d.int32()         // controller id
	out := map[string]TopicInfo{}
	var topicErr error
	for range d.compactLen() {
		code := d.int16()
		name := d.compactString()
		id := base64.RawURLEncoding.EncodeToString(d.take(16))
		d.take(1) // is internal
		info := TopicInfo{ID: id, Leaders: map[int]string{}}
		for range d.compactLen() {
			d.int16() // partition error: a leader election shows as no leader
			index := d.int32()
			leader := d.int32()
			d.int32()     // leader epoch
			for range 3 { // replicas, in-sync replicas, offline replicas
				for range d.compactLen() {
					d.int32()
				}
			}
			d.tags()
			if addr, ok := brokers[leader]; ok {
				info.Leaders[int(index)] = addr
			}
		}
		d.int32() // authorized operations
		d.tags()
		if code != 0 && topicErr == nil {
			topicErr = fmt.Errorf("topic %q: %w", name, kafkago.Error(code))
		}
		out[name] = info
	}
	d.tags()
	if d.err != nil {
		return nil, fmt.Errorf("decode metadata response: %w", d.err)
	}
	if topicErr != nil {
		return nil, topicErr
	}
	for _, t := range topics {
		if _, ok := out[t]; !ok {
			return nil, fmt.Errorf("metadata response has no topic %q", t)
		}
	}
	return out, nil
}

// compactDecoder adds the flexible (KIP-482) encodings to wireDecoder.
type compactDecoder struct{ wireDecoder }

func (d *compactDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.err = errShortResponse
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// compactLen reads a compact array length; a null array is empty.
func (d *compactDecoder) compactLen() int {
	n := d.uvarint()
	if n == 0 {
		return 0
	}
	if n-1 > uint64(len(d.buf)) { // every element takes at least one byte
		d.err = errShortResponse
		return 0
	}
	return int(n - 1)
}

// compactString reads a compact nullable string; null is "".
func (d *compactDecoder) compactString() string {
	n := d.uvarint()
	if n == 0 {
		return ""
	}
	if n-1 > uint64(len(d.buf)) {
		d.err = errShortResponse
		return ""
	}
	return string(d.take(int(n - 1)))
}

// tags skips a tagged-fields section.
func (d *compactDecoder) tags() {
	n := d.uvarint()
	if n > uint64(len(d.buf)) { // every field takes at least two bytes
		d.err = errShortResponse
		return
	}
	for range n {
		d.uvarint() // tag
		if n := d.uvarint(); n > uint64(len(d.buf)) {
			d.err = errShortResponse
		} else {
			d.take(int(n))
		}
	}
}
