package provider_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
)

// clusterAgents starts n agent processes of one new cluster (serve
// --cluster) for the length of t: their shared state under a new prefix of
// the S3-compatible server's test bucket, one secrets key file and one
// token. It skips t without TF_ACC or without that server
// (TRIBUTARY_S3_BUCKET and AWS_ENDPOINT_URL, with the keys and region
// tools/s3.sh prints; make test sets them).
func clusterAgents(t *testing.T, n int) []*testAgent {
	t.Helper()
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1 (make test and make testacc do)", resource.EnvTfAcc)
	}
	bucket, server := os.Getenv("TRIBUTARY_S3_BUCKET"), os.Getenv("AWS_ENDPOINT_URL")
	if bucket == "" || server == "" {
		t.Skip("the agents of a cluster share their state on an object store: set TRIBUTARY_S3_BUCKET and AWS_ENDPOINT_URL " +
			"with the settings tools/s3.sh prints (make test does)")
	}
	name := uniqueName("cluster")
	warehouse := fmt.Sprintf("s3://%s/%s?endpoint=%s&use_path_style=true&region=%s", bucket, name, url.QueryEscape(server),
		cmp.Or(os.Getenv("AWS_REGION"), "us-east-1"))
	key := filepath.Join(t.TempDir(), "secrets.key")
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	if err := os.WriteFile(key, []byte(base64.StdEncoding.EncodeToString(secret)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _ = rand.Read(secret[:16])
	token := hex.EncodeToString(secret[:16])
	agents := make([]*testAgent, n)
	for i := range agents {
		a, err := startAgentWithToken(token, nil, "--cluster", name, "--agent-name", fmt.Sprintf("agent-%d", i),
			"--warehouse", warehouse, "--secrets-key-file", key)
		if err != nil {
			t.Fatalf("starting agent %d of cluster %s: %v", i, name, err)
		}
		t.Cleanup(a.stop)
		agents[i] = a
	}
	return agents
}

// clusterHCL is the provider block that points at the agents' URLs with
// endpoints.
func clusterHCL(agents ...*testAgent) string {
	urls := make([]string, len(agents))
	for i, a := range agents {
		urls[i] = hclString(a.URL)
	}
	return fmt.Sprintf("provider \"tributary\" {\n  endpoints = [%s]\n  token = %s\n}\n", strings.Join(urls, ", "), hclString(agents[0].Token))
}

// clusterPipelineHCL is a connection and a pipeline of one table that
// reads topic, named after name.
func clusterPipelineHCL(name, topic string) string {
	return connectionHCL(name, kafkaBootstrap()) + pipelineHCL(map[string]string{
		"name":               hclString(name),
		"connection_name":    "tributary_connection.c.name",
		"destination_schema": hclString(name),
	}, tableHCL("events", "topics = ["+hclString(topic)+"]", ""))
}

// TestAccClusterPlanThroughOtherAgent: what an apply through agent A of a
// cluster made, a plan through agent B finds as it is (an empty plan), and
// imports; a destroy through B removes it from A too. Every agent answers
// from the cluster's shared state.
func TestAccClusterPlanThroughOtherAgent(t *testing.T) {
	agents := clusterAgents(t, 2)
	a, b := agents[0], agents[1]
	name, topic := uniqueName("cl"), uniqueName("topic")
	createTopic(t, topic, 2)
	getPipe := func(ctx context.Context, n string) error { _, err := a.Client.GetPipeline(ctx, n); return err }
	throughB := b.providerHCL() + clusterPipelineHCL(name, topic)
	imported := importStep("tributary_pipeline.p", name, "timeouts")
	imported.Config = throughB
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkGone("pipeline", getPipe, name),
		Steps: []resource.TestStep{
			{Config: a.providerHCL() + clusterPipelineHCL(name, topic)},
			// PlanOnly fails on a non-empty plan.
			{Config: throughB, PlanOnly: true},
			imported,
			// The last config, through B, is the one the destroy uses.
			{Config: throughB},
		},
	})
}

// TestAccClusterFailover: with endpoints = [A, B], an apply while A is
// stopped goes to B: it updates and creates, and the plan after it is
// empty; so does the destroy.
func TestAccClusterFailover(t *testing.T) {
	agents := clusterAgents(t, 2)
	a, b := agents[0], agents[1]
	name, topic := uniqueName("cl"), uniqueName("topic")
	createTopic(t, topic, 1)
	extra := uniqueName("conn")
	getConn := func(ctx context.Context, n string) error { _, err := b.Client.GetConnection(ctx, n); return err }
	withExtra := clusterPipelineHCL(name, topic) + fmt.Sprintf(`
resource "tributary_connection" "extra" {
  name              = %s
  bootstrap_servers = [%s, "127.0.0.1:1"]
}
`, hclString(extra), hclString(kafkaBootstrap()))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy: resource.ComposeTestCheckFunc(
			checkGone("connection", getConn, name), checkGone("connection", getConn, extra)),
		Steps: []resource.TestStep{
			{Config: clusterHCL(a, b) + clusterPipelineHCL(name, topic)},
			{
				PreConfig: a.stop,
				Config:    clusterHCL(a, b) + strings.Replace(withExtra, "bootstrap_servers = [", "bootstrap_servers = [\"127.0.0.1:2\", ", 1),
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr("tributary_connection.c", "bootstrap_servers.0", "127.0.0.1:2"),
					resource.TestCheckResourceAttr("tributary_connection.extra", "id", extra),
					func(*terraform.State) error {
						c, err := b.Client.GetConnection(context.Background(), name)
						if err != nil || c.BootstrapServers[0] != "127.0.0.1:2" {
							return fmt.Errorf("connection %s through B after the apply with A stopped: %+v, %w", name, c, err)
						}
						return nil
					},
				),
			},
		},
	})
}

// TestAccClusterRacingApplies: two applies of different resources, one
// through agent A and one through agent B, at the same time, each creating
// twenty connections, ten at once (Terraform's parallelism), both succeed:
// a change that lost the race to write the cluster's shared state is made
// again by its agent on the state the winner left, so neither apply sees
// a conflict. Both agents then answer every connection, and the destroys
// leave none. (With the destroys, 80 changes: past the snapshot the shared
// state writes every 50.)
func TestAccClusterRacingApplies(t *testing.T) {
	agents := clusterAgents(t, 2)
	const each = 20
	prefix := uniqueName("race")
	var created []string
	// Each apply starts once the other is ready to, so that their changes
	// race (unless the other cannot get a test slot within a minute).
	var ready sync.WaitGroup
	ready.Add(len(agents))
	bothReady := make(chan struct{})
	go func() { ready.Wait(); close(bothReady) }()
	for i, a := range agents {
		side := fmt.Sprintf("%s_%d", prefix, i)
		var names []string
		for j := range each {
			names = append(names, fmt.Sprintf("%s_%d", side, j))
		}
		created = append(created, names...)
		config := a.providerHCL() + fmt.Sprintf(`
resource "tributary_connection" "c" {
  count             = %d
  name              = "%s_${count.index}"
  bootstrap_servers = [%s]
}
`, each, side, hclString(kafkaBootstrap()))
		t.Run(fmt.Sprintf("through agent %d", i), func(t *testing.T) {
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps: []resource.TestStep{
					{
						PreConfig: func() {
							ready.Done()
							select {
							case <-bothReady:
							case <-time.After(time.Minute):
								t.Log("the other apply did not start within a minute; this one goes alone")
							}
						},
						Config: config,
						Check: func(*terraform.State) error {
							// Every agent has this apply's connections.
							for _, other := range agents {
								for _, n := range names {
									if _, err := other.Client.GetConnection(context.Background(), n); err != nil {
										return fmt.Errorf("connection %s through %s: %w", n, other.URL, err)
									}
								}
							}
							return nil
						},
					},
				},
			})
		})
	}
	t.Cleanup(func() {
		// After both applies and their destroys, nothing is left.
		for _, n := range created {
			if _, err := agents[0].Client.GetConnection(context.Background(), n); !errors.Is(err, client.ErrNotFound) {
				t.Errorf("connection %s after the destroys: %v, want not found", n, err)
			}
		}
	})
}

// TestAccProviderEndpointsValidation: the provider's endpoint attributes
// are checked at plan time, without an agent, each problem on its
// attribute or on the element of endpoints at fault.
func TestAccProviderEndpointsValidation(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1 (make test and make testacc do)", resource.EnvTfAcc)
	}
	withProvider := func(attrs string) string {
		return "provider \"tributary\" {\n" + attrs + "\n}\n" + connectionHCL(uniqueName("conn"), kafkaBootstrap())
	}
	runValidationCases(t, []validationCase{
		{"empty list", withProvider(`endpoints = []`), "endpoints", "no agent endpoint given"},
		{"not a URL", withProvider(`endpoints = ["http://127.0.0.1:1", "127.0.0.1:2"]`),
			"endpoints[1]", `agent endpoint "127.0.0.1:2" is not an http:// or https:// URL`},
		{"listed twice", withProvider(`endpoints = ["http://127.0.0.1:1", "http://127.0.0.1:1/"]`),
			"endpoints[1]", `agent endpoint "http://127.0.0.1:1/" is listed twice (also at index 0)`},
		{"both attributes", withProvider("endpoint = \"http://127.0.0.1:1\"\nendpoints = [\"http://127.0.0.1:2\"]"),
			"endpoints", "endpoint and endpoints are both set"},
		{"bad endpoint", withProvider(`endpoint = "127.0.0.1:8470"`),
			"endpoint", `agent endpoint "127.0.0.1:8470" is not an http:// or https:// URL`},
	})
}
