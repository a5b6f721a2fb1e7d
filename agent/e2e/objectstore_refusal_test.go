//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestBucketRefusesWritesWhileRunning runs a table on the S3-compatible
// server through a proxy that, in the middle of the run, answers every
// write (PUT, POST, DELETE) with S3's 403 AccessDenied, as a bucket does
// whose policy or credentials were changed under a running agent, while
// reads still pass. The table must neither fail nor commit anything while
// the bucket refuses: it retries, saying why in its status. Once writes
// are allowed again it catches up, and every record is in the table once.
func TestBucketRefusesWritesWhileRunning(t *testing.T) {
	t.Parallel()
	if os.Getenv("AWS_ENDPOINT_URL") == "" {
		t.Skip("no S3 server: make test starts one with tools/s3.sh")
	}
	server, err := url.Parse(os.Getenv("AWS_ENDPOINT_URL"))
	if err != nil {
		t.Fatal(err)
	}
	var refuse, refused atomic.Bool
	upstream := httputil.NewSingleHostReverseProxy(server)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse.Load() && r.Method != http.MethodGet && r.Method != http.MethodHead {
			refused.Store(true)
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code>`+
				`<Message>Access Denied</Message><Resource>%s</Resource><RequestId>e2e</RequestId></Error>`, r.URL.Path)
			return
		}
		// The request keeps its Host header, which its signature covers.
		upstream.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)

	// The table's location names the proxy as its endpoint; check_table.py
	// reads the table from the server itself.
	root := strings.Replace(storeRoot(t, "s3"), "endpoint="+url.QueryEscape(server.String()), "endpoint="+url.QueryEscape(proxy.URL), 1)
	if !strings.Contains(root, url.QueryEscape(proxy.URL)) {
		t.Fatalf("root %s does not name the proxy", root)
	}
	topic := uniqueName("e2e-refusal")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "2000")
	dataDir := t.TempDir()
	a := startAgentEnv(t, dataDir, root, []string{"AWS_ENDPOINT_URL=" + proxy.URL})
	ctx := context.Background()
	c := a.client()
	if _, err := c.PutConnection(ctx, &spec.Connection{Name: "refusal", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutPipeline(ctx, &spec.Pipeline{
		Name: "refusal", Connection: "refusal", DestinationCatalog: "main", DestinationSchema: "e2e", FlushInterval: "200ms",
		Tables: []spec.Table{{
			DestinationTable: "refusal",
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
				Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest,
			}},
			TableConfiguration: spec.TableConfiguration{SourceMetadataColumn: "_kafka"},
		}},
	}); err != nil {
		t.Fatal(err)
	}
	before := a.waitRows("refusal", 0, 2000, 2*time.Minute)

	refuse.Store(true)
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "3000")
	st, ok := a.pollTable("refusal", 0, 2*time.Minute, func(p *spec.PipelineStatus, ts spec.TableStatus) bool {
		if p.State == spec.StateFailed {
			t.Fatalf("the table failed while the bucket refused writes: %+v\nagent log:\n%s", *p, a.log())
		}
		return strings.Contains(ts.LastError, "AccessDenied")
	})
	if !ok {
		t.Fatalf("the table's status never said the bucket refused its writes: %+v\nagent log:\n%s", st, a.log())
	}
	if !refused.Load() {
		t.Fatal("the proxy refused no write")
	}
	// A few flush intervals more: still nothing may be committed.
	time.Sleep(2 * time.Second)
	st, _ = a.pollTable("refusal", 0, time.Second, func(*spec.PipelineStatus, spec.TableStatus) bool { return true })
	if st.Rows != before.Rows || st.Version != before.Version {
		t.Fatalf("the table committed while the bucket refused writes: %d rows at version %d, was %d at %d",
			st.Rows, st.Version, before.Rows, before.Version)
	}
	t.Logf("while refused: state %s, last error %q", st.State, st.LastError)

	refuse.Store(false)
	st = a.waitRows("refusal", 0, 5000, 3*time.Minute)
	checkTable(t, st.Location, "--count", "5000", "--metadata", "_kafka", "--exactly-once", "--orphans-by-agent")
}
