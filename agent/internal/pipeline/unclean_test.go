package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/fanout/fanouttest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/position"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// This file runs an unclean leader election on real Kafka: a KRaft cluster
// of one controller and two brokers, started from the jars tools/kafka.sh
// caches, on ports from KAFKA_CLUSTER_PORT: the controller on that port,
// the brokers on the next two. Run it with
//
//	KAFKA_JARS=$(tools/kafka.sh jars) KAFKA_CLUSTER_PORT=19700 \
//	  go test -count=1 -run TestRealBrokerUncleanElection ./agent/internal/pipeline/
//
// It is skipped without KAFKA_JARS. Each node's data and logs are in the
// test's temporary folder; the nodes stop when the test ends. Its waits
// are long: three JVMs start on a machine that may be busy.

// kraftNode is one Java process of the test cluster.
type kraftNode struct {
	id    int
	props string // its server.properties
	logs  string
	port  int // PLAINTEXT port of a broker, controller port of the controller
	cmd   *exec.Cmd
	done  chan struct{}
}

// kraftCluster is a controller and two brokers.
type kraftCluster struct {
	t       *testing.T
	jars    string
	brokers []*kraftNode
}

// startKraftCluster formats and starts the cluster, and waits until both
// brokers are registered.
func startKraftCluster(t *testing.T, jars string, base int) *kraftCluster {
	t.Helper()
	dir := t.TempDir()
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		t.Fatal(err)
	}
	clusterID := base64.RawURLEncoding.EncodeToString(id)
	voters := fmt.Sprintf("1@127.0.0.1:%d", base)
	// Raft and registration timeouts for a busy machine: the defaults (2
	// seconds a request) time out while three JVMs start on few cores.
	common := "controller.quorum.voters=" + voters + "\ncontroller.listener.names=CONTROLLER\n" +
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n" +
		"controller.quorum.request.timeout.ms=20000\ncontroller.quorum.fetch.timeout.ms=40000\n" +
		"broker.session.timeout.ms=40000\ninitial.broker.registration.timeout.ms=300000\n"
	c := &kraftCluster{t: t, jars: jars}
	nodes := []*kraftNode{{id: 1, port: base}, {id: 2, port: base + 1}, {id: 3, port: base + 2}}
	for _, n := range nodes {
		nd := filepath.Join(dir, "node"+strconv.Itoa(n.id))
		n.logs = filepath.Join(nd, "logs")
		if err := os.MkdirAll(n.logs, 0o755); err != nil {
			t.Fatal(err)
		}
		props := fmt.Sprintf("node.id=%d\nlog.dirs=%s\n", n.id, filepath.Join(nd, "data")) + common
		if n.id == 1 {
			props += fmt.Sprintf("process.roles=controller\nlisteners=CONTROLLER://127.0.0.1:%d\n", n.port)
		} else {
			props += fmt.Sprintf("process.roles=broker\nlisteners=PLAINTEXT://127.0.0.1:%d\nadvertised.listeners=PLAINTEXT://127.0.0.1:%d\n",
				n.port, n.port) +
				"inter.broker.listener.name=PLAINTEXT\noffsets.topic.replication.factor=1\ntransaction.state.log.replication.factor=1\n" +
				"transaction.state.log.min.isr=1\ngroup.initial.rebalance.delay.ms=0\nnum.partitions=1\ndefault.replication.factor=1\n" +
				"num.network.threads=2\nnum.io.threads=2\n"
			c.brokers = append(c.brokers, n)
		}
		n.props = filepath.Join(nd, "server.properties")
		if err := os.WriteFile(n.props, []byte(props), 0o644); err != nil {
			t.Fatal(err)
		}
		l4j := fmt.Sprintf("status = error\nappender.file.type = File\nappender.file.name = FILE\nappender.file.fileName = %s\n"+
			"appender.file.layout.type = PatternLayout\nappender.file.layout.pattern = [%%d] %%p %%m (%%c)%%n\n"+
			"rootLogger.level = INFO\nrootLogger.appenderRef.file.ref = FILE\n", filepath.Join(n.logs, "server.log"))
		if err := os.WriteFile(filepath.Join(nd, "log4j2.properties"), []byte(l4j), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Format the three in parallel: each is a JVM start.
	errs := make(chan error, len(nodes))
	for _, n := range nodes {
		go func() {
			// Eligible leader replicas (KIP-966) off: with them, the
			// controller waits for the last leader rather than elect
			// the stale replica.
			out, err := c.java(n, "-Xmx128m", "kafka.tools.StorageTool", "format", "--ignore-formatted", "--cluster-id="+clusterID,
				"-c", n.props, "--feature", "eligible.leader.replicas.version=0").CombinedOutput()
			if err != nil {
				err = fmt.Errorf("format node %d: %w\n%s", n.id, err, out)
			}
			errs <- err
		}()
	}
	for range nodes {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range nodes {
				for _, f := range []string{"kafka.out", "server.log"} {
					b, err := os.ReadFile(filepath.Join(n.logs, f))
					if err != nil {
						continue
					}
					var notable []string
					for _, line := range strings.Split(string(b), "\n") {
						if strings.Contains(line, " WARN ") || strings.Contains(line, " ERROR ") {
							notable = append(notable, line)
						}
					}
					t.Logf("node %d %s, warnings and errors (last 20):\n%s", n.id, f,
						strings.Join(notable[max(0, len(notable)-20):], "\n"))
				}
			}
		}
	})
	for _, n := range nodes {
		c.start(n)
	}
	c.waitBrokers(2)
	return c
}

// java returns the command that runs class main of the Kafka jars with
// heap option heap and args, logging as node n.
func (c *kraftCluster) java(n *kraftNode, heap, main string, args ...string) *exec.Cmd {
	return exec.Command("java", append([]string{heap, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Djava.awt.headless=true",
		"-Dlog4j2.configurationFile=" + filepath.Join(filepath.Dir(n.props), "log4j2.properties"), "-Dkafka.logs.dir=" + n.logs,
		"-cp", filepath.Join(c.jars, "*"), main}, args...)...)
}

// start starts node n, which the test's end stops.
func (c *kraftCluster) start(n *kraftNode) {
	c.t.Helper()
	n.cmd = c.java(n, "-Xmx384m", "kafka.Kafka", n.props)
	out, err := os.Create(filepath.Join(n.logs, "kafka.out"))
	if err != nil {
		c.t.Fatal(err)
	}
	n.cmd.Stdout, n.cmd.Stderr = out, out
	if err := n.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	n.done = make(chan struct{})
	go func() {
		n.cmd.Wait()
		out.Close()
		close(n.done)
	}()
	c.t.Cleanup(func() { c.stop(n) })
}

// stop stops node n, if it runs: TERM, a controlled shutdown, then KILL
// after 30 seconds.
func (c *kraftCluster) stop(n *kraftNode) {
	if n.cmd == nil {
		return
	}
	select {
	case <-n.done:
		return
	default:
	}
	n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.done:
	case <-time.After(30 * time.Second):
		n.cmd.Process.Kill()
		<-n.done
	}
}

// bootstrap returns the brokers' addresses.
func (c *kraftCluster) bootstrap() []string {
	var addrs []string
	for _, b := range c.brokers {
		addrs = append(addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(b.port)))
	}
	return addrs
}

// admin returns an admin client of the cluster, closed at the test's end.
func (c *kraftCluster) admin(opts ...kgo.Opt) (*kgo.Client, *kadm.Client) {
	c.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.bootstrap()...)}, opts...)...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return cl, kadm.NewClient(cl)
}

// waitBrokers waits until n brokers are registered.
func (c *kraftCluster) waitBrokers(n int) {
	c.t.Helper()
	_, adm := c.admin()
	c.eventually(8*time.Minute, fmt.Sprintf("%d brokers", n), func(ctx context.Context) bool {
		md, err := adm.BrokerMetadata(ctx)
		return err == nil && len(md.Brokers) == n
	})
}

// eventually polls cond until it holds, failing the test after d.
func (c *kraftCluster) eventually(d time.Duration, what string, cond func(ctx context.Context) bool) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ok := cond(ctx)
		cancel()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// partition returns the leader and the in-sync replicas of topic's
// partition 0.
func partitionState(ctx context.Context, adm *kadm.Client, topic string) (leader int32, isr []int32, ok bool) {
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return 0, nil, false
	}
	p, found := md.Topics[topic].Partitions[0]
	if !found || p.Err != nil {
		return -1, nil, found
	}
	return p.Leader, p.ISR, true
}

// The scenario KIP-320 is about, on real Kafka: topic u (replication
// factor 2, min.insync.replicas 1, unclean leader election on) has leader
// broker 2 and follower broker 3. With the follower stopped, records 10 to
// 19 go to the leader alone, and two tables read all 20. Then the leader
// stops, the stale follower starts and is elected leader uncleanly: its
// log ends at 10, and ten other records are written at offsets 10 to 19.
// The tables and two fanout schemas routing the records by tag, which keep
// running, find the truncation on their fetchers' new connection and
// validate their logs' offsets as they restart: those with the default
// fail_on_data_loss fail with the range [10, 20), the others read the new
// records from 10 on (the fanout schema's table "lost", which holds offsets
// past the truncation, goes back to it too).
func TestRealBrokerUncleanElection(t *testing.T) {
	jars := os.Getenv("KAFKA_JARS")
	if jars == "" {
		t.Skip("KAFKA_JARS is not set (KAFKA_JARS=$(tools/kafka.sh jars) KAFKA_CLUSTER_PORT=<port>)")
	}
	base, err := strconv.Atoi(os.Getenv("KAFKA_CLUSTER_PORT"))
	if err != nil {
		t.Fatalf("KAFKA_CLUSTER_PORT: %v", err)
	}
	started := time.Now()
	c := startKraftCluster(t, jars, base)
	leader, follower := c.brokers[0], c.brokers[1]
	t.Logf("cluster up in %s", time.Since(started).Round(time.Second))
	producer, adm := c.admin(kgo.DefaultProduceTopic("u"), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(),
		kgo.RecordRetries(100), kgo.UnknownTopicRetries(-1))

	req := kmsg.NewCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "u", -1, -1
	ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	ra.Partition, ra.Replicas = 0, []int32{int32(leader.id), int32(follower.id)}
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	for k, v := range map[string]string{"min.insync.replicas": "1", "unclean.leader.election.enable": "true"} {
		cfg := kmsg.NewCreateTopicsRequestTopicConfig()
		cfg.Name, cfg.Value = k, kmsg.StringPtr(v)
		rt.Configs = append(rt.Configs, cfg)
	}
	req.Topics = append(req.Topics, rt)
	req.TimeoutMillis = 30000
	resp, err := req.RequestWith(context.Background(), producer)
	if err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create topic u: %v %+v", err, resp)
	}
	c.eventually(3*time.Minute, "topic u with two in-sync replicas", func(ctx context.Context) bool {
		l, isr, ok := partitionState(ctx, adm, "u")
		return ok && l == int32(leader.id) && len(isr) == 2
	})
	value := func(tag string) func(int) string {
		return func(i int) string { return fmt.Sprintf(`{"id":%d,"tag":%q}`, i, tag) }
	}
	produce(t, producer, 0, 10, value("both"))

	c.stop(follower)
	c.eventually(3*time.Minute, "broker 3 out of the in-sync replicas", func(ctx context.Context) bool {
		_, isr, ok := partitionState(ctx, adm, "u")
		return ok && len(isr) == 1
	})
	produce(t, producer, 10, 20, value("lost"))

	conn := &spec.Connection{Name: "c", BootstrapServers: c.bootstrap()}
	warehouse := t.TempDir()
	m := NewManager(Config{Warehouse: warehouse})
	defer m.Close(context.Background())
	if err := m.Apply(context.Background(), lossTables("u"), conn, nil); err != nil {
		t.Fatal(err)
	}
	// Two fanout schemas route the same records by their tag, one going
	// on after data loss.
	for _, name := range []string{"keeps", "fails"} {
		f := fanouttest.Schema("u")
		f.Name, f.DestinationSchema = name, name
		f.FanoutOptions.FanoutBy = "cast(value AS STRING):tag"
		f.FanoutOptions.Transforms[0].JSONOptions.Schema = "id BIGINT, tag STRING"
		if name == "keeps" {
			off := false
			f.ConnectorOptions.KafkaOptions.FailOnDataLoss = &off
		}
		if err := m.ApplyFanout(context.Background(), &f); err != nil {
			t.Fatal(err)
		}
	}
	fanoutStatus := func(name string) spec.FanoutStatus {
		st, _ := m.FanoutStatus(name)
		return st
	}
	waitFor(t, 3*time.Minute, "20 rows in both tables and both fanout schemas", func() bool {
		st, _ := m.Status("p")
		return st.Tables[0].Rows == 20 && st.Tables[1].Rows == 20 && fanoutRows(m, "keeps") == 20 && fanoutRows(m, "fails") == 20
	})

	c.stop(leader)
	c.start(follower)
	c.eventually(8*time.Minute, "broker 3 elected leader uncleanly", func(ctx context.Context) bool {
		if l, _, ok := partitionState(ctx, adm, "u"); ok && l == int32(follower.id) {
			return true
		}
		adm.ElectLeaders(ctx, kadm.ElectLiveReplica, kadm.TopicsSet{"u": {0: {}}}) //nolint:errcheck // polled again
		return false
	})
	produce(t, producer, 10, 20, value("new"))
	end, err := adm.ListEndOffsets(context.Background(), "u")
	if o, _ := end.Lookup("u", 0); err != nil || o.Offset != 20 {
		t.Fatalf("the new leader ends at %+v, %v; want 20", o, err)
	}

	waitFor(t, 5*time.Minute, "30 rows in the table and fanout schema that go on, and the others failed", func() bool {
		st, _ := m.Status("p")
		return st.Tables[0].Rows == 30 && st.Tables[1].State == spec.StateFailed &&
			fanoutRows(m, "keeps") == 30 && fanoutStatus("fails").State == spec.StateFailed
	})
	st, _ := m.Status("p")
	keeps, fails := st.Tables[0], st.Tables[1]
	if want := "offsets [10, 20) were read from leader epoch"; !strings.Contains(fails.LastError, want) || fails.Rows != 20 {
		t.Errorf("the failing table: %d rows, error %q; want 20 rows and %q", fails.Rows, fails.LastError, want)
	}
	if g := keeps.DataLoss; len(g) != 1 || g[0].From != 10 || g[0].To != 20 || g[0].Reason != position.LossTruncated {
		t.Errorf("status data_loss %+v, want u/0 from 10 to 20, truncated", g)
	}
	if f := fanoutStatus("fails"); !strings.Contains(f.LastError, "offsets [10, 20) were read from leader epoch") || fanoutRows(m, "fails") != 20 {
		t.Errorf("the failing fanout schema: %d rows, error %q; want 20 rows and the offsets lost", fanoutRows(m, "fails"), f.LastError)
	}
	// The fanout schema that goes on keeps the rows it has, reads the new
	// records into their table, and records the gap.
	rows := map[string]int64{}
	var gaps []spec.DataLossGap
	for _, ts := range fanoutStatus("keeps").Tables {
		rows[ts.DestinationTable] = ts.Rows
		gaps = append(gaps, ts.DataLoss...)
	}
	if want := map[string]int64{"both": 10, "lost": 10, "new": 10}; !maps.Equal(rows, want) {
		t.Errorf("the fanout schema that goes on has rows %v, want %v", rows, want)
	}
	if len(gaps) == 0 || gaps[0].From != 10 || gaps[0].To != 20 || gaps[0].Reason != position.LossTruncated {
		t.Errorf("the fanout schema's tables report data_loss %+v, want u/0 from 10 to 20, truncated", gaps)
	}
	t.Logf("unclean election scenario took %s", time.Since(started).Round(time.Second))
}
