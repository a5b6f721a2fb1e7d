//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestTwoAgentsRaceOnS3 runs two agents, each with a pipeline into the same
// table on the S3-compatible server, where there is no lock: both read the
// same topic while records are produced, and race to commit. Conditional
// writes let one writer win each log version; the loser re-reads the log and
// resumes from the offsets it holds. Every record is in the table once.
func TestTwoAgentsRaceOnS3(t *testing.T) {
	root := s3Root(t)
	const total = 30_000
	topic := uniqueName("e2e-race")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "0")
	var agents []*agent
	for i := range 2 {
		a := startAgentOn(t, t.TempDir(), root)
		ctx := context.Background()
		c := a.client()
		if _, err := c.PutConnection(ctx, &spec.Connection{Name: "race", BootstrapServers: []string{env.bootstrap}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.PutPipeline(ctx, &spec.Pipeline{
			Name: fmt.Sprintf("race-%d", i), Connection: "race", DestinationCatalog: "main", DestinationSchema: "e2e", FlushInterval: "200ms",
			Tables: []spec.Table{{
				DestinationTable: "race",
				ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
					Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest,
				}},
				TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
			}},
		}); err != nil {
			t.Fatal(err)
		}
		agents = append(agents, a)
	}
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", fmt.Sprint(total), "--rate", "10000")
	var st spec.TableStatus
	for i, a := range agents {
		st = a.waitAtLeast(fmt.Sprintf("race-%d", i), 0, total, 2*time.Minute)
	}
	checkTable(t, st.Location, "--count", fmt.Sprint(total), "--metadata", "_kafka", "--exactly-once", "--orphans-by-agent")
}

// TestBucketRefusesWrites applies a pipeline whose storage_location is in a
// bucket the agent cannot write to, with wrong credentials or with an
// identity that may only read and list (tools/s3.sh's "-reader" keys): the
// apply fails with the store's error on the table, and nothing is stored.
func TestBucketRefusesWrites(t *testing.T) {
	root := s3Root(t)
	key, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	for _, tc := range []struct {
		name, key, secret, want string
	}{
		{"wrong secret", key, "not-the-secret", "SignatureDoesNotMatch"},
		{"read-only identity", key + "-reader", secret + "-reader", "cannot write to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AWS_ACCESS_KEY_ID", tc.key) // the agent inherits them
			t.Setenv("AWS_SECRET_ACCESS_KEY", tc.secret)
			dataDir := t.TempDir()
			a := startAgentOn(t, dataDir, dataDir+"/warehouse", "--warehouse-allow", root)
			ctx := context.Background()
			c := a.client()
			if _, err := c.PutConnection(ctx, &spec.Connection{Name: "denied", BootstrapServers: []string{env.bootstrap}}); err != nil {
				t.Fatal(err)
			}
			location, _, _ := strings.Cut(root, "?")
			_, err := c.PutPipeline(ctx, &spec.Pipeline{
				Name: "denied", Connection: "denied", DestinationCatalog: "main", DestinationSchema: "e2e", StorageLocation: location,
				Tables: []spec.Table{{
					DestinationTable: "denied",
					ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{Topics: []string{uniqueName("e2e-denied")}}},
				}},
			})
			if err == nil || !strings.Contains(err.Error(), "table[0]") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("a pipeline into a bucket the agent cannot write to: %v; want a refusal on table[0] containing %q", err, tc.want)
			}
			t.Log(err)
			if _, err := c.GetPipeline(ctx, "denied"); err == nil {
				t.Error("the refused pipeline was stored")
			}
		})
	}
}
