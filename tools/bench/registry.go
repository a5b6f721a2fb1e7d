package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"fmt"
	"log"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// registryFormat is a binary format the agent reads with a schema from a
// registry: the schema of the records of smallRecords in that format, and
// their encoding.
type registryFormat struct {
	// name names the row ("agent: <name> (registry)") and the topic.
	name string
	// schemaType and schema are what is registered under the topic's
	// value subject.
	schemaType sr.SchemaType
	schema     string
	// encoder returns the encoding of a record written with the schema
	// of registry id id, in Confluent's wire format.
	encoder func(id int) (func(small) []byte, error)
	// transformer is the value transformer that reads subject.
	transformer func(subject string) *spec.Transformer
}

// registryFormats are the formats of the registry rows, in order.
var registryFormats = []registryFormat{
	{name: "Avro", schemaType: sr.TypeAvro, schema: smallAvroSchema, encoder: smallAvro,
		transformer: func(subject string) *spec.Transformer {
			return &spec.Transformer{Format: spec.FormatAvro, AvroOptions: &spec.AvroOptions{
				SchemaRegistry: &spec.SchemaRegistryOptions{ConfluentOptions: spec.ConfluentOptions{Subject: subject}}}}
		}},
	{name: "Protobuf", schemaType: sr.TypeProtobuf, schema: smallProto, encoder: smallProtobuf,
		transformer: func(subject string) *spec.Transformer {
			return &spec.Transformer{Format: spec.FormatProtobuf, ProtobufOptions: &spec.ProtobufOptions{
				SchemaRegistry: &spec.SchemaRegistryOptions{ConfluentOptions: spec.ConfluentOptions{Subject: subject}}}}
		}},
}

// smallAvroSchema is the record of smallRecords in Avro: the columns of
// jsonValue, with the same types (timestamp-micros is TIMESTAMP).
const smallAvroSchema = `{"type": "record", "name": "Small", "namespace": "io.tributary.bench", "fields": [
  {"name": "id", "type": "long"},
  {"name": "name", "type": "string"},
  {"name": "amount", "type": "double"},
  {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}},
  {"name": "tags", "type": {"type": "array", "items": "string"}}
]}`

// smallProto is the record of smallRecords in Protobuf: the columns of
// jsonValue, with the same types. Its scalars are optional, so that a zero
// (id 0, amount 0.00) reads as 0 rather than null, as in JSON.
const smallProto = `syntax = "proto3";

package io.tributary.bench;

import "google/protobuf/timestamp.proto";

message Small {
  optional int64 id = 1;
  optional string name = 2;
  optional double amount = 3;
  google.protobuf.Timestamp ts = 4;
  repeated string tags = 5;
}
`

// confluentHeader returns Confluent's framing of a value written with the
// schema of registry id id: a zero byte, then id in 4 bytes, big-endian.
func confluentHeader(id int) []byte {
	return binary.BigEndian.AppendUint32([]byte{0}, uint32(id))
}

// smallAvro encodes records as binary Avro with smallAvroSchema, framed
// with schema id id.
func smallAvro(id int) (func(small) []byte, error) {
	s, err := avro.Parse(smallAvroSchema)
	if err != nil {
		return nil, err
	}
	header := confluentHeader(id)
	return func(r small) []byte {
		v, err := avro.Marshal(s, r)
		if err != nil {
			panic(err) // a small always marshals
		}
		return append(append(make([]byte, 0, len(header)+len(v)), header...), v...)
	}, nil
}

// smallProtobuf encodes records as Small messages of smallProto, framed
// with schema id id and the message indexes of its first message (one 0
// byte). Every field is written, in field order.
func smallProtobuf(id int) (func(small) []byte, error) {
	header := append(confluentHeader(id), 0)
	return func(r small) []byte {
		b := append(make([]byte, 0, 64), header...)
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(r.ID))
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, r.Name)
		b = protowire.AppendTag(b, 3, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(r.Amount))
		// google.protobuf.Timestamp: seconds = 1, nanos = 2, zeros left
		// out.
		var ts []byte
		if secs := r.TS.Unix(); secs != 0 {
			ts = protowire.AppendTag(ts, 1, protowire.VarintType)
			ts = protowire.AppendVarint(ts, uint64(secs))
		}
		if nanos := r.TS.Nanosecond(); nanos != 0 {
			ts = protowire.AppendTag(ts, 2, protowire.VarintType)
			ts = protowire.AppendVarint(ts, uint64(nanos))
		}
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		b = protowire.AppendBytes(b, ts)
		for _, t := range r.Tags {
			b = protowire.AppendTag(b, 5, protowire.BytesType)
			b = protowire.AppendString(b, t)
		}
		return b
	}, nil
}

// registryRun registers f's schema under the value subject of a new topic
// of topicPartitions partitions, produces o.records records of
// smallRecords to it in f, framed for the registry, and measures the agent
// ingesting them with the schema it fetches from the registry.
func registryRun(ctx context.Context, o options, f registryFormat) (result, error) {
	topic := fmt.Sprintf("bench-%s-%d", strings.ToLower(f.name), time.Now().UnixNano())
	subject := topic + "-value"
	opts := []sr.ClientOpt{sr.URLs(o.registry.URL)}
	if o.registry.APIKey != "" {
		opts = append(opts, sr.BasicAuth(o.registry.APIKey, o.registry.APISecret))
	}
	if o.registry.CAPEM != "" {
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM([]byte(o.registry.CAPEM)) {
			return result{}, fmt.Errorf("-registry-ca: no PEM certificate in it")
		}
		opts = append(opts, sr.HTTPClient(&http.Client{Timeout: time.Minute,
			Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return result{}, fmt.Errorf("registry: %w", err)
	}
	ss, err := cl.CreateSchema(ctx, subject, sr.Schema{Schema: f.schema, Type: f.schemaType})
	if err != nil {
		return result{}, fmt.Errorf("registry: register %s: %w", subject, err)
	}
	encode, err := f.encoder(ss.ID)
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", f.name, err)
	}
	log.Printf("producing %d records of about 100 bytes as JSON, in %s (schema id %d of %s), to %s", o.records, f.name, ss.ID, subject, topic)
	bytes, err := produce(ctx, o.bootstrap, []string{topic}, topicPartitions, o.records, smallRecords(0, encode))
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", topic, err)
	}
	w := load{topics: []string{topic}, partitions: topicPartitions, records: int64(o.records), bytes: bytes}
	name := "agent: " + f.name + " (registry)"
	r, err := o.servers.around(func() (result, error) {
		return ingest(ctx, o.agentBin, o.bootstrap, w, name, f.transformer(subject), "", "", &o.registry)
	})
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", name, err)
	}
	return r, nil
}
