package membership

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// TestRealBrokerMembers runs three agents' members of one group on the test
// broker (tools/kafka.sh up), when KAFKA_BOOTSTRAP says where it is and the
// tests do not run with -short (make test's unit step): Apache
// Kafka's group coordinator, not kfake's, with its shortest session
// timeout (6 s). The three share 12 partitions 4 each, Kafka's description
// of the group names each agent with its partitions, a killed agent's
// partitions go to the others after its session expires, one that leaves
// hands its partitions over at once, and no partition ever has two owners.
// With KAFKA_SASL_SSL_BOOTSTRAP (eval "$(tools/kafka.sh security)") it runs
// again over SASL_SSL with SCRAM-SHA-512: the group requests go through
// the connection's TLS and SASL.
func TestRealBrokerMembers(t *testing.T) {
	bootstrap := os.Getenv("KAFKA_BOOTSTRAP")
	if bootstrap == "" || testing.Short() {
		t.Skip("KAFKA_BOOTSTRAP is not set (tools/kafka.sh up), or -short")
	}
	adm := kadm.NewClient(mustKgo(t, bootstrap))
	conns := map[string]*spec.Connection{"PLAINTEXT": {Name: "real", BootstrapServers: []string{bootstrap}}}
	if saslSSL := os.Getenv("KAFKA_SASL_SSL_BOOTSTRAP"); saslSSL != "" {
		ca, err := os.ReadFile(os.Getenv("KAFKA_CA_FILE"))
		if err != nil {
			t.Fatalf("KAFKA_CA_FILE: %v", err)
		}
		conns["SASL_SSL"] = &spec.Connection{Name: "real", BootstrapServers: []string{saslSSL}, SecurityProtocol: spec.ProtocolSASLSSL,
			TLS: &spec.TLS{CAPEM: string(ca)}, SASL: &spec.SASL{Mechanism: spec.SASLScram512,
				Username: os.Getenv("KAFKA_SCRAM_USER"), Password: os.Getenv("KAFKA_SCRAM_PASSWORD")}}
	}
	for name, conn := range conns {
		t.Run(name, func(t *testing.T) { realBrokerMembers(t, adm, conn) })
	}
}

// realBrokerMembers runs TestRealBrokerMembers on conn; adm reaches the
// same broker.
func realBrokerMembers(t *testing.T, adm *kadm.Client, conn *spec.Connection) {
	topic := fmt.Sprintf("members-%d", time.Now().UnixNano())
	res, err := adm.CreateTopics(t.Context(), 12, 1, nil, topic)
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = adm.DeleteTopics(context.Background(), topic) })
	all := parts(topic, 0, 12)
	cluster := topic
	groups := map[string]func() []kafka.TopicPartition{"pipeline/p": fixed(all)}
	l := newLedger()
	agents := map[string]*testAgent{}
	for _, name := range []string{"agent-a", "agent-b", "agent-c"} {
		j := fastJoiner(cluster, name)
		j.SessionTimeout, j.HeartbeatInterval, j.RebalanceTimeout = 6*time.Second, 500*time.Millisecond, 10*time.Second
		agents[name] = startAgent(t, l, j, conn, groups)
	}
	eventually(t, 60*time.Second, func() string { return l.unbalanced("pipeline/p", all, []string{"agent-a", "agent-b", "agent-c"}) })

	group := "tributary-members." + cluster + ".pipeline/p"
	eventually(t, 30*time.Second, func() string {
		described, err := adm.DescribeGroups(t.Context(), group)
		if err != nil {
			return err.Error()
		}
		var got []string
		for _, m := range described[group].Members {
			assigned, ok := m.Assigned.AsConsumer()
			if !ok {
				return "an assignment not in the consumer protocol's format"
			}
			n := 0
			for _, tp := range assigned.Topics {
				n += len(tp.Partitions)
			}
			got = append(got, fmt.Sprintf("%s:%d", m.ClientID, n))
		}
		slices.Sort(got)
		if want := "agent-a:4 agent-b:4 agent-c:4"; strings.Join(got, " ") != want {
			return fmt.Sprintf("described %q, want %q", got, want)
		}
		return ""
	})

	agents["agent-c"].kill(l)
	eventually(t, 60*time.Second, func() string { return l.unbalanced("pipeline/p", all, []string{"agent-a", "agent-b"}) })
	agents["agent-b"].leave(t, l)
	eventually(t, 60*time.Second, func() string { return l.unbalanced("pipeline/p", all, []string{"agent-a"}) })
	l.check(t)
	kill, leave := l.pauses()
	t.Logf("owned again after a kill: max %v (session timeout 6 s); after a leave: max %v",
		percentile(kill, 100).Round(time.Millisecond), percentile(leave, 100).Round(time.Millisecond))
}
