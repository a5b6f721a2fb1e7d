package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/bufbuild/protocompile"
	"github.com/hamba/avro/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The JSON records are those the harness has always produced, so the JSON
// rows stay comparable with earlier runs.
func TestSmallJSONUnchanged(t *testing.T) {
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	next := smallRecords(0, smallJSON)
	for i := range 200_000 {
		ts := base.Add(time.Duration(i) * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
		want := fmt.Sprintf(`{"id":%d,"name":"user-%d","amount":%d.%02d,"ts":"%s","tags":["a","b%d"]}`, i, i%100000, i%1000, i%100, ts, i%7)
		if got := string(next(i)); got != want {
			t.Fatalf("record %d: got %s, want %s", i, got, want)
		}
	}
}

// want is the i-th record of smallRecords(0, ...).
func want(i int) small {
	return small{ID: int64(i), Name: fmt.Sprintf("user-%d", i%100000), Amount: float64(i%1000) + float64(i%100)/100,
		TS: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond), Tags: []string{"a", fmt.Sprintf("b%d", i%7)}}
}

// header checks Confluent's framing of v and returns what follows it.
func header(t *testing.T, v []byte, id int) []byte {
	t.Helper()
	if len(v) < 5 || v[0] != 0 || binary.BigEndian.Uint32(v[1:5]) != uint32(id) {
		t.Fatalf("% x: not framed with schema id %d", v[:min(len(v), 5)], id)
	}
	return v[5:]
}

func TestSmallAvro(t *testing.T) {
	enc, err := smallAvro(7)
	if err != nil {
		t.Fatal(err)
	}
	s := avro.MustParse(smallAvroSchema)
	next := smallRecords(0, enc)
	for _, i := range []int{0, 1, 99_999, 123_456} {
		var got small
		if err := avro.Unmarshal(s, header(t, next(i), 7), &got); err != nil {
			t.Fatal(err)
		}
		got.TS = got.TS.UTC()
		if w := want(i); got.ID != w.ID || got.Name != w.Name || got.Amount != w.Amount || !got.TS.Equal(w.TS) || !slices.Equal(got.Tags, w.Tags) {
			t.Errorf("record %d: got %+v, want %+v", i, got, w)
		}
	}
}

func TestSmallProtobuf(t *testing.T) {
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{"small.proto": smallProto})})}
	files, err := c.Compile(context.Background(), "small.proto")
	if err != nil {
		t.Fatal(err)
	}
	md := files[0].Messages().Get(0)
	enc, err := smallProtobuf(9)
	if err != nil {
		t.Fatal(err)
	}
	next := smallRecords(0, enc)
	for _, i := range []int{0, 1, 99_999, 123_456} {
		v := header(t, next(i), 9)
		if v[0] != 0 {
			t.Fatalf("record %d: message indexes % x, want 00", i, v[0])
		}
		m := dynamicpb.NewMessage(md)
		if err := proto.Unmarshal(v[1:], m); err != nil {
			t.Fatal(err)
		}
		field := func(name string) protoreflect.Value {
			fd := md.Fields().ByName(protoreflect.Name(name))
			if !m.Has(fd) && fd.HasPresence() {
				t.Errorf("record %d: %s absent", i, name)
			}
			return m.Get(fd)
		}
		var ts timestamppb.Timestamp
		b, _ := proto.Marshal(field("ts").Message().Interface())
		if err := proto.Unmarshal(b, &ts); err != nil {
			t.Fatal(err)
		}
		tags := field("tags").List()
		w := want(i)
		if field("id").Int() != w.ID || field("name").String() != w.Name || field("amount").Float() != w.Amount ||
			!ts.AsTime().Equal(w.TS) || tags.Len() != 2 || tags.Get(0).String() != w.Tags[0] || tags.Get(1).String() != w.Tags[1] {
			t.Errorf("record %d: got %v, want %+v", i, m, w)
		}
	}
}
