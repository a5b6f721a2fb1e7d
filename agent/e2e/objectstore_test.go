//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // azblob://
	_ "gocloud.dev/blob/gcsblob"   // gs://

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestTwoAgentsRaceOnObjectStores runs two agents, each with a pipeline
// into the same table on an object store (the S3-compatible server, the GCS
// emulator, the Azure emulator), where there is no lock: both read the same
// topic while records are produced, and race to commit. Conditional writes
// let one writer win each log version; the loser re-reads the log and
// resumes from the offsets it holds. Every record is in the table once.
func TestTwoAgentsRaceOnObjectStores(t *testing.T) {
	t.Parallel()
	forEachStore(t, twoAgentsRace)
}

func twoAgentsRace(t *testing.T, root string) {
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
// bucket the agent cannot write to: on S3 with wrong credentials or with an
// identity that may only read and list (tools/s3.sh's "-reader" keys); on
// Azure with a wrong account key or a SAS token that may only read and
// list; on GCS a bucket that does not exist (the emulator checks no
// credentials). The apply fails with the store's error on the table, and
// nothing is stored.
func TestBucketRefusesWrites(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind, name string
		env        func(t *testing.T) map[string]string // the agent's, over the inherited
		bucket     string                               // another bucket than the test's
		want       string
	}{
		{kind: "s3", name: "wrong secret", want: "SignatureDoesNotMatch",
			env: func(*testing.T) map[string]string {
				return map[string]string{"AWS_SECRET_ACCESS_KEY": "not-the-secret"}
			}},
		{kind: "s3", name: "read-only identity", want: "cannot write to",
			env: func(*testing.T) map[string]string {
				return map[string]string{"AWS_ACCESS_KEY_ID": os.Getenv("AWS_ACCESS_KEY_ID") + "-reader",
					"AWS_SECRET_ACCESS_KEY": os.Getenv("AWS_SECRET_ACCESS_KEY") + "-reader"}
			}},
		{kind: "gcs", name: "missing bucket", bucket: "tributary-no-such-bucket", want: "bucket doesn't exist"},
		{kind: "azure", name: "wrong key", want: "AuthorizationFailure",
			env: func(*testing.T) map[string]string {
				return map[string]string{"AZURE_STORAGE_KEY": base64.StdEncoding.EncodeToString([]byte("not-the-key"))}
			}},
		{kind: "azure", name: "read-only SAS token", want: "cannot write to", env: readOnlySAS},
	} {
		t.Run(tc.kind+"/"+tc.name, func(t *testing.T) {
			t.Parallel()
			root := storeRoot(t, tc.kind)
			if tc.bucket != "" {
				u, _ := url.Parse(root)
				u.Host = tc.bucket
				root = u.String()
			}
			var environ []string
			if tc.env != nil {
				for k, v := range tc.env(t) {
					environ = append(environ, k+"="+v)
				}
			}
			dataDir := t.TempDir()
			a := startAgentEnv(t, dataDir, dataDir+"/warehouse", environ, "--warehouse-allow", root)
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

// readOnlySAS returns the environment of an agent that reaches the Azure
// emulator with a SAS token for the test container that may read and list
// but not write, in place of the account key.
func readOnlySAS(t *testing.T) map[string]string {
	cred, err := azblob.NewSharedKeyCredential(os.Getenv("AZURE_STORAGE_ACCOUNT"), os.Getenv("AZURE_STORAGE_KEY"))
	if err != nil {
		t.Fatal(err)
	}
	q, err := sas.BlobSignatureValues{
		Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour),
		ContainerName: os.Getenv("TRIBUTARY_AZURE_CONTAINER"), Permissions: (&sas.ContainerPermissions{Read: true, List: true}).String(),
	}.SignWithSharedKey(cred)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"AZURE_STORAGE_KEY": "", "AZURE_STORAGE_SAS_TOKEN": q.Encode()}
}

// localCopy returns location, or for a table on GCS or Azure Blob Storage a
// local copy of all its objects: check_table.py's readers (delta-rs,
// DuckDB, pyarrow) reach the S3-compatible server but not the GCS and Azure
// emulators, so those tables are downloaded first, through the same
// gocloud.dev drivers and environment settings the agent uses.
func localCopy(t *testing.T, location string) string {
	t.Helper()
	u, err := url.Parse(location)
	if err != nil || (u.Scheme != "gs" && u.Scheme != "azblob") {
		return location
	}
	ctx := context.Background()
	b, err := blob.OpenBucket(ctx, (&url.URL{Scheme: u.Scheme, Host: u.Host, RawQuery: u.RawQuery}).String())
	if err != nil {
		t.Fatalf("opening %s: %v", location, err)
	}
	defer b.Close()
	prefix := strings.Trim(u.Path, "/") + "/"
	dir := t.TempDir()
	for it := b.List(&blob.ListOptions{Prefix: prefix}); ; {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return dir
		}
		if err != nil {
			t.Fatalf("listing %s: %v", location, err)
		}
		data, err := b.ReadAll(ctx, o.Key)
		if err != nil {
			t.Fatalf("reading %s: %v", o.Key, err)
		}
		path := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(o.Key, prefix)))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
