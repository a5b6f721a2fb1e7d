package kafka

import (
	"errors"
	"testing"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The request is what kmsg reads as InitProducerId v4 with a null
// transactional id and no producer id yet.
func TestEncodeInitProducerID(t *testing.T) {
	frame := encodeInitProducerID(5, "me")
	head := frame[4 : 4+2+2+4]
	if key, version := int16(head[0])<<8|int16(head[1]), int16(head[2])<<8|int16(head[3]); key != 22 || version != 4 {
		t.Fatalf("api key %d version %d, want 22 and 4", key, version)
	}
	req := kmsg.NewInitProducerIDRequest()
	req.Version = 4
	if err := req.ReadFrom(frame[4+2+2+4+2+len("me")+1:]); err != nil {
		t.Fatal(err)
	}
	if req.TransactionalID != nil || req.ProducerID != -1 || req.ProducerEpoch != -1 || req.TransactionTimeoutMillis != 60000 {
		t.Errorf("kmsg reads %+v, want a null transactional id, producer id and epoch -1", req)
	}
}

// The producer id and epoch are read from a kmsg response; an error code
// is a kafkago.Error.
func TestParseInitProducerID(t *testing.T) {
	body := func(code int16) []byte {
		res := kmsg.NewInitProducerIDResponse()
		res.Version = 4
		res.ProducerID, res.ProducerEpoch, res.ErrorCode = 4711, 3, code
		return res.AppendTo([]byte{0})
	}
	id, epoch, err := parseInitProducerID(body(0))
	if err != nil || id != 4711 || epoch != 3 {
		t.Errorf("got %d, %d, %v; want 4711, 3", id, epoch, err)
	}
	if _, _, err := parseInitProducerID(body(int16(kafkago.ClusterAuthorizationFailed))); !errors.Is(err, kafkago.ClusterAuthorizationFailed) {
		t.Errorf("error %v, want CLUSTER_AUTHORIZATION_FAILED", err)
	}
	if _, _, err := parseInitProducerID(body(0)[:5]); err == nil {
		t.Error("a short response decoded")
	}
}
