package fanout

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// progressDir is the folder, in a fanout schema's destination schema, of
// its progress log.
const progressDir = ".fanout"

// progressTableKey prefixes the progress log's configuration keys that
// record the tables the fanout schema created.
const progressTableKey = "tributary.fanout.table."

// progressRouteKey is the progress log's configuration key that records
// the expression the fanout schema routes with.
const progressRouteKey = "tributary.fanout.route"

// progressColumns is the schema of the progress log, which holds no rows:
// a Delta log needs one.
var progressColumns = []schema.Field{{Name: "next_offset", Type: &schema.Type{Kind: schema.Long}, Nullable: true}}

// progress is a fanout schema's progress log: a Delta log of txn actions
// only, recording per partition the offset below which every routed record
// is committed to its table, which is where a restart reads from, and in
// its configuration the tables created so far. It is conservative: records
// at and past a partition's offset may be committed to their tables too,
// which skip them when they come again.
type progress struct {
	tbl *table.Table
	// next holds what the log says per partition.
	next map[kafka.TopicPartition]int64
	// loss keeps the gaps the fanout skipped, which the commits that move
	// past them record; nil when it fails on data loss.
	loss *deltasink.DataLoss
}

// openProgress opens (or starts) the progress log in dir with opts.
func openProgress(dir string, opts table.Options) (*progress, error) {
	tbl, err := table.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("open the fanout progress log %s: %w", dir, err)
	}
	p := &progress{tbl: tbl, next: map[kafka.TopicPartition]int64{}}
	for appID, next := range tbl.Snapshot().Txns {
		tp, ok := parseAppID(appID)
		if !ok {
			_ = tbl.Close() // the log's content is the error
			return nil, fmt.Errorf("the fanout progress log %s has a txn of %q, not <topic>/<partition>", dir, appID)
		}
		p.next[tp] = next
	}
	return p, nil
}

// close closes the log.
func (p *progress) close() { _ = p.tbl.Close() } // each commit is durable; closing releases the log

// parseAppID parses an application id of appID.
func parseAppID(appID string) (kafka.TopicPartition, bool) {
	i := strings.LastIndexByte(appID, '/')
	if i <= 0 {
		return kafka.TopicPartition{}, false
	}
	n, err := strconv.ParseInt(appID[i+1:], 10, 32)
	if err != nil {
		return kafka.TopicPartition{}, false
	}
	return kafka.TopicPartition{Topic: appID[:i], Partition: int(n)}, true
}

// tables returns the names of the tables recorded, sorted.
func (p *progress) tables() []string {
	return tablesOf(p.tbl.Snapshot().Configuration)
}

// tablesOf returns the names of the tables conf, the configuration of a
// progress log, records, sorted.
func tablesOf(conf map[string]string) []string {
	var names []string
	for k := range conf {
		if name, ok := strings.CutPrefix(k, progressTableKey); ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// CreatedTables returns the names, sorted, of the tables the fanout schema
// whose destination schema is in the folder dir created so far, which its
// progress log records (the dead letter table among them); none before its
// first run.
func CreatedTables(dir string) ([]string, error) {
	snap, err := table.ReadSnapshot(spec.JoinLocation(dir, progressDir))
	if err != nil {
		return nil, fmt.Errorf("read the fanout progress log: %w", err)
	}
	return tablesOf(snap.Configuration), nil
}

// record commits next, the offsets that moved, each with its leader epoch
// in epochs if there (that of the last record before it), the tables not
// recorded yet among tables, and the configuration keys of conf; nothing
// when none changes.
func (p *progress) record(next map[kafka.TopicPartition]int64, epochs map[kafka.TopicPartition]int32, tables []string,
	conf map[string]string) error {
	c := table.Commit{Txns: map[string]int64{}, From: map[string]int64{}, Epochs: map[string]int32{}, Configuration: maps.Clone(conf)}
	if c.Configuration == nil {
		c.Configuration = map[string]string{}
	}
	for tp, n := range next {
		was, ok := p.next[tp]
		if ok && n <= was {
			continue
		}
		id := deltasink.AppID(tp)
		c.Txns[id] = n
		if ok {
			c.From[id] = was
		}
		if e, ok := epochs[tp]; ok {
			c.Epochs[id] = e
		}
	}
	p.loss.AddTo(&c, next)
	recorded := p.tbl.Snapshot().Configuration
	for _, name := range tables {
		if _, ok := recorded[progressTableKey+name]; !ok {
			c.Configuration[progressTableKey+name] = "true"
		}
	}
	if len(c.Txns) == 0 && len(c.Configuration) == 0 {
		return nil
	}
	if p.tbl.Snapshot().Version < 0 {
		c.Schema = progressColumns
	}
	return p.commit(c)
}

// commit commits c to the log and takes the offsets it moves.
func (p *progress) commit(c table.Commit) error {
	if _, err := p.tbl.Commit(c); err != nil {
		return fmt.Errorf("commit to the fanout progress log: %w", err)
	}
	for appID, n := range c.Txns {
		tp, _ := parseAppID(appID)
		p.next[tp] = n
	}
	return nil
}

// rewind moves the offsets of to back, recording gaps as skipped: the
// partitions are read again from there, without a leader epoch until a
// record is read.
func (p *progress) rewind(to map[kafka.TopicPartition]int64, gaps []spec.DataLossGap) error {
	return p.commit(deltasink.RewindCommit(p.tbl.Snapshot().Txns, to, gaps, p.loss))
}

// useRoute records route as the expression the fanout schema routes with.
// A new expression is refused while a table holds records committed past
// the progress log's offsets (the previous run did not stop cleanly): read
// again, those records would be routed anew, and a table the new
// expression sends them to would skip them as its own, although the table
// that committed them under the old one is another. tableDir gives a
// table's folder.
func (p *progress) useRoute(route string, tableDir func(string) string) error {
	was, ok := p.tbl.Snapshot().Configuration[progressRouteKey]
	if ok && was == route {
		return nil
	}
	if ok {
		for _, name := range p.tables() {
			snap, err := table.ReadSnapshot(tableDir(name))
			if err != nil {
				return fmt.Errorf("read table %s: %w", name, err)
			}
			for id, next := range snap.Txns {
				tp, ok := parseAppID(id)
				if ok && next > p.next[tp] {
					return runner.Fatal(fmt.Errorf("fanout_by changed from %q to %q while table %s holds records of %s[%d] committed up to %d, "+
						"past the fanout's progress at %d (its last run did not stop cleanly); routed again by the new expression, those "+
						"records could be lost: apply the previous fanout_by until the fanout schema runs, then change it",
						was, route, name, tp.Topic, tp.Partition, next, p.next[tp]))

				}
			}
		}
	}
	return p.record(nil, nil, nil, map[string]string{progressRouteKey: route})
}
