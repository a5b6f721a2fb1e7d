//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestLogAppendTime produces records with producer timestamps a year in the
// past to a topic with message.timestamp.type = LogAppendTime and to a
// CreateTime topic. It proves that on the LogAppendTime topic every row's
// _kafka.timestamp is the broker's append time (within a minute of the
// produce, not the back-dated time) and _kafka.timestampType is 1, and that
// on the CreateTime topic every row keeps the producer's timestamp with
// timestampType 0.
func TestLogAppendTime(t *testing.T) {
	t.Parallel()
	const count = 500
	a := startAgent(t, t.TempDir())
	logAppend, createTime := uniqueName("e2e-logappend"), uniqueName("e2e-createtime")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", logAppend, "--count", "0",
		"--topic-config", "message.timestamp.type=LogAppendTime")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", createTime, "--count", "0",
		"--topic-config", "message.timestamp.type=CreateTime")

	ctx := context.Background()
	c := a.client()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: "ts", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	table := func(name, topic string) spec.Table {
		return spec.Table{
			DestinationTable: name,
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
				Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest,
			}},
			TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
		}
	}
	if _, err := c.PutPipeline(ctx, &spec.Pipeline{
		Name: "ts", Connection: "ts", DestinationCatalog: "main", DestinationSchema: "e2e", FlushInterval: "300ms",
		Tables: []spec.Table{table("log_append_time", logAppend), table("create_time", createTime)},
	}); err != nil {
		t.Fatal(err)
	}

	backDated := time.Now().AddDate(-1, 0, 0).UnixMilli()
	before := time.Now()
	for _, topic := range []string{logAppend, createTime} {
		python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", strconv.Itoa(count),
			"--timestamp", strconv.FormatInt(backDated, 10))
	}
	after := time.Now()
	lat := a.waitRows("ts", 0, count, time.Minute)
	ct := a.waitRows("ts", 1, count, time.Minute)

	t.Log("LogAppendTime topic: the broker's time, type 1:")
	checkTable(t, lat.Location, "--count", strconv.Itoa(count), "--metadata", "_kafka", "--exactly-once",
		"--timestamps", fmt.Sprintf("1:%d:%d", before.Add(-time.Minute).UnixMilli(), after.Add(time.Minute).UnixMilli()))
	t.Log("CreateTime topic: the producer's time, type 0:")
	checkTable(t, ct.Location, "--count", strconv.Itoa(count), "--metadata", "_kafka", "--exactly-once",
		"--timestamps", fmt.Sprintf("0:%d:%d", backDated, backDated))
}
