package membership

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// fastJoiner returns a Joiner of agent name in cluster with short
// timeouts, for tests.
func fastJoiner(cluster, name string) *Joiner {
	var log *slog.Logger
	if os.Getenv("MEMBERSHIP_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("agent", name)
	}
	return &Joiner{Cluster: cluster, Agent: name, Log: log, SessionTimeout: 1500 * time.Millisecond,
		RebalanceTimeout: 3 * time.Second, HeartbeatInterval: 100 * time.Millisecond, RefreshInterval: 300 * time.Millisecond}
}

// newKfake starts an in-process Kafka with topics of partitions each, and
// returns a connection to it.
func newKfake(t testing.TB, partitions int32, topics ...string) (*kfake.Cluster, *spec.Connection) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...),
		kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, &spec.Connection{Name: "kfake", BootstrapServers: c.ListenAddrs()}
}

// ledger records what every member of a test owns, from its onAssign
// calls, and what the calls broke: a partition taken while another member
// owned it, a call made while an earlier one of the same member ran.
type ledger struct {
	mu sync.Mutex
	// owner is the agent owning each partition of each group.
	owner map[string]map[kafka.TopicPartition]string
	// held are each agent's partitions of each group.
	held map[string]map[string][]kafka.TopicPartition
	// calls are the sets each agent's member of each group was called
	// with ("agent group" keys), in order.
	calls map[string][][]kafka.TopicPartition
	// stopped agents are dead or leaving: their calls are ignored, as a
	// stopping agent ignores them.
	stopped map[string]bool
	// lostAt is when each partition of each group lost its owner, to a
	// kill or a leave; pauses, how long each took to be owned again,
	// after a kill and after a leave.
	lostAt                  map[string]map[kafka.TopicPartition]loss
	killPauses, leavePauses []time.Duration
	errs                    []string
}

func newLedger() *ledger {
	return &ledger{owner: map[string]map[kafka.TopicPartition]string{}, held: map[string]map[string][]kafka.TopicPartition{},
		calls: map[string][][]kafka.TopicPartition{}, stopped: map[string]bool{},
		lostAt: map[string]map[kafka.TopicPartition]loss{}}
}

// onAssign returns the onAssign of agent's member of group. It takes the
// new partitions at once and gives up the others only as it returns,
// after a few milliseconds of work, as an agent stopping readers would.
func (l *ledger) onAssign(agent, group string) func(context.Context, []kafka.TopicPartition) error {
	key := agent + " " + group
	var running atomic.Bool
	return func(_ context.Context, owned []kafka.TopicPartition) error {
		if !running.CompareAndSwap(false, true) {
			l.fail(key + ": onAssign called while an earlier call runs")
		}
		defer running.Store(false)
		if !l.take(agent, group, owned) {
			return nil
		}
		time.Sleep(time.Duration(rand.IntN(10)) * time.Millisecond)
		l.release(agent, group, owned)
		return nil
	}
}

// fail records a violation.
func (l *ledger) fail(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, msg)
}

// take records agent's member of group called with owned, and takes what
// it did not hold (it holds both sets until release); false when the agent
// stopped.
func (l *ledger) take(agent, group string, owned []kafka.TopicPartition) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped[agent] {
		return false
	}
	key := agent + " " + group
	l.calls[key] = append(l.calls[key], owned)
	if l.held[agent] == nil {
		l.held[agent] = map[string][]kafka.TopicPartition{}
	}
	if l.owner[group] == nil {
		l.owner[group] = map[kafka.TopicPartition]string{}
	}
	now := time.Now()
	for _, tp := range owned {
		if o, ok := l.owner[group][tp]; ok && o != agent {
			l.errs = append(l.errs, fmt.Sprintf("%s: %s taken while %s owns it", key, tp, o))
		}
		l.owner[group][tp] = agent
		if !slices.Contains(l.held[agent][group], tp) {
			l.held[agent][group] = append(l.held[agent][group], tp)
		}
		if lost, ok := l.lostAt[group][tp]; ok {
			if lost.killed {
				l.killPauses = append(l.killPauses, now.Sub(lost.at))
			} else {
				l.leavePauses = append(l.leavePauses, now.Sub(lost.at))
			}
			delete(l.lostAt[group], tp)
		}
	}
	return true
}

// release gives up what agent's member of group held and owned does not
// have.
func (l *ledger) release(agent, group string, owned []kafka.TopicPartition) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped[agent] {
		return
	}
	for _, tp := range l.held[agent][group] {
		if !slices.Contains(owned, tp) && l.owner[group][tp] == agent {
			delete(l.owner[group], tp)
		}
	}
	l.held[agent][group] = owned
}

// loss is when a partition lost its owner, and whether to a kill.
type loss struct {
	at     time.Time
	killed bool
}

// stop marks agent stopped and gives up what it holds, killed or leaving;
// the partitions count as lost until owned again.
func (l *ledger) stop(agent string, killed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped[agent] = true
	now := time.Now()
	for group, tps := range l.held[agent] {
		for _, tp := range tps {
			delete(l.owner[group], tp)
			if l.lostAt[group] == nil {
				l.lostAt[group] = map[kafka.TopicPartition]loss{}
			}
			l.lostAt[group][tp] = loss{at: now, killed: killed}
		}
	}
	delete(l.held, agent)
}

// check fails the test with every rule a call broke.
func (l *ledger) check(t testing.TB) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) > 0 {
		t.Fatalf("%d violations, the first: %s", len(l.errs), strings.Join(l.errs[:min(len(l.errs), 10)], "; "))
	}
}

// unbalanced says what keeps group from being balanced among agents:
// every partition of want owned by one of them, each holding within one
// partition of the others; "" when it is.
func (l *ledger) unbalanced(group string, want []kafka.TopicPartition, agents []string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, tp := range want {
		if o, ok := l.owner[group][tp]; !ok || !slices.Contains(agents, o) {
			return fmt.Sprintf("%s: %s owned by %q", group, tp, o)
		}
	}
	least, most := len(want)+1, -1
	for _, a := range agents {
		n := len(l.held[a][group])
		least, most = min(least, n), max(most, n)
	}
	if most-least > 1 {
		return fmt.Sprintf("%s: agents hold %d to %d partitions", group, least, most)
	}
	return ""
}

// snapshot returns the owner of each partition of group.
func (l *ledger) snapshot(group string) map[kafka.TopicPartition]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.owner[group])
}

// callsOf returns the sets agent's member of group was called with.
func (l *ledger) callsOf(agent, group string) [][]kafka.TopicPartition {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls[agent+" "+group])
}

// eventually waits up to d for cond to return "", failing the test with
// its last answer.
func eventually(t testing.TB, d time.Duration, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		why := cond()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", d, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// testAgent is one agent of a test: a Joiner and its memberships.
type testAgent struct {
	name   string
	joiner *Joiner
	cancel context.CancelFunc
	leaves []func(context.Context) error
	// frozen, when set, holds the agent's members' requests of the
	// names it has (all when it has none) until closed.
	frozen atomic.Pointer[freeze]
}

// startAgent starts agent name, a member of each group of groups (key →
// the partitions it reads), recording in l.
func startAgent(t testing.TB, l *ledger, j *Joiner, conn *spec.Connection, groups map[string]func() []kafka.TopicPartition) *testAgent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a := &testAgent{name: j.Agent, joiner: j, cancel: cancel}
	j.beforeRequest = func(ctx context.Context, request string) {
		if f := a.frozen.Load(); f != nil && (len(f.requests) == 0 || slices.Contains(f.requests, request)) {
			select {
			case <-f.thawed:
			case <-ctx.Done():
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(groups)) {
		list := groups[key]
		leave, err := j.Join(ctx, key, conn, func(context.Context) ([]kafka.TopicPartition, error) { return list(), nil },
			l.onAssign(j.Agent, key))
		if err != nil {
			t.Fatal(err)
		}
		a.leaves = append(a.leaves, leave)
	}
	t.Cleanup(cancel)
	return a
}

// kill stops the agent as if its process died: no LeaveGroup.
func (a *testAgent) kill(l *ledger) {
	l.stop(a.name, true)
	a.cancel()
}

// leave stops the agent gracefully: it gives its partitions up, then
// leaves every group, each within 10 s (a leave dials the coordinator
// again, which on a loaded machine under the race detector takes seconds:
// one deadline for all of them failed the simulation's leaves of ten
// groups).
func (a *testAgent) leave(t testing.TB, l *ledger) {
	l.stop(a.name, false)
	for _, leave := range a.leaves {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := leave(ctx); err != nil {
			t.Errorf("%s: leave: %v", a.name, err)
		}
		cancel()
	}
	a.cancel()
}

// freeze holds the requests of an agent's members.
type freeze struct {
	// requests are the names of the requests held, all when none.
	requests []string
	thawed   chan struct{}
}

// freeze holds the agent's members' requests named (every request when
// none is) until the returned function is called.
func (a *testAgent) freeze(requests ...string) (thaw func()) {
	f := &freeze{requests: requests, thawed: make(chan struct{})}
	a.frozen.Store(f)
	return func() {
		a.frozen.Store(nil)
		close(f.thawed)
	}
}

// pauses returns how long partitions took to be owned again after a kill
// and after a leave.
func (l *ledger) pauses() (kill, leave []time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.killPauses), slices.Clone(l.leavePauses)
}

// percentile returns the p-th percentile (0 to 100) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(float64(len(s))*p/100))]
}
