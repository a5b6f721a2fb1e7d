//go:build e2e

package e2e

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestPartitionColumns has the agent ingest records with timestamps on
// three days into a table partitioned by date(_kafka.timestamp) and by
// the partition metadata column: delta-rs, DuckDB and pyarrow read every
// row once, and so does Spark, whose plan of a filter on the source
// timestamp prunes partitions through the generated date column.
func TestPartitionColumns(t *testing.T) {
	t.Parallel()
	spark := sparkDir(t)
	a := startAgent(t, t.TempDir())
	topic := uniqueName("e2e-partcols")
	// Three instants a day apart, on three dates; recent, as Kafka's
	// retention deletes records with older timestamps.
	now := time.Now().UTC()
	days := []time.Time{now.Add(-48 * time.Hour), now.Add(-24 * time.Hour), now}
	const perDay = 100
	for _, d := range days {
		python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", strconv.Itoa(perDay),
			"--timestamp", strconv.FormatInt(d.UnixMilli(), 10))
	}
	ctx := context.Background()
	c := a.client()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: "partcols", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutPipeline(ctx, &spec.Pipeline{
		Name: "partcols", Connection: "partcols", DestinationCatalog: "main", DestinationSchema: "e2e", FlushInterval: "300ms",
		Tables: []spec.Table{{
			DestinationTable: "partcols",
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
				Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest,
				ValueTransformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{
					Schema: "id BIGINT, name STRING, amount DOUBLE"}},
			}},
			TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka", MetadataColumns: []string{"partition"},
				PartitionBy: []string{"date(_kafka.timestamp)", "partition"}},
		}},
	}); err != nil {
		t.Fatal(err)
	}
	st := a.waitRows("partcols", 0, 3*perDay, 2*time.Minute)
	checkTable(t, st.Location, "--count", strconv.Itoa(3*perDay), "--exactly-once")
	if files, _ := filepath.Glob(filepath.Join(st.Location, "_kafka_timestamp_date="+now.Format(time.DateOnly), "partition=[0-3]", "*.parquet")); len(files) == 0 {
		t.Errorf("no data files under %s/_kafka_timestamp_date=<day>/partition=<p>/", st.Location)
	}
	runSpark(t, spark, "check_spark_partitions.py", "--jars", filepath.Join(spark, "jars"), "--table", st.Location,
		"--count", strconv.Itoa(3*perDay), "--since", days[1].Format(time.DateOnly)+" 00:00:00", "--since-count", strconv.Itoa(2*perDay))
}
