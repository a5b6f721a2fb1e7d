// Package pipeline runs pipelines: a Manager reconciles the desired pipelines
// into runners (one loop per destination table, a fanout runner per fanout
// schema, a Kafka sink per sink). It sits between the shared source and
// the writers (Kafka -> ingest/decode -> runners here -> deltasink's table
// writer, or the Kafka sink): a table loop takes the records its pipeline's
// source fetches (each partition once for all the tables that read it),
// decoded by ingest, and hands them to its deltasink writer, which writes
// Parquet files and commits them with their offsets to the table's log.
// The runners' supervisor and failure classes are in runner; the fanout
// runners are package fanout's, which fanout_api.go starts and stops; the
// Kafka sinks run in kafkasink, which kafka_sink_api.go starts and stops.
// When agents run as a cluster (Config.Members), each pipeline's table
// loops and each fanout schema read only the partitions their members
// group gives this agent, and restart with each new assignment
// (members.go); the table logs still decide where each partition resumes.
package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/columns"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/deltasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/fanout"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/ingest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafkasink"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/runner"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Config configures a Manager.
type Config struct {
	// Warehouse is where tables are written unless their pipeline has a
	// storage_location: <Warehouse>/<catalog>/<schema>/<table>/. It is a
	// local folder or an object store URL (see [table.Open]).
	Warehouse string
	// AllowedRoots are the roots a pipeline's storage_location may lie
	// under, besides Warehouse: local folders or object store URLs, whose
	// query parameters (the store driver's options, such as an S3
	// endpoint) apply to the locations under them.
	AllowedRoots []string
	// Logger receives the manager's logs; nil means slog.Default().
	Logger *slog.Logger
	// Memory is the budget that every table's fetched data and open file
	// draw from; nil means no limit.
	Memory *memory.Budget
	// GCGrace is how old a file the agent wrote but no commit added must be
	// before garbage collection deletes it, overriding the default: an
	// hour, or ten flush intervals when those are longer. It must be longer
	// than the time between any writer's first rows of a file and its
	// commit.
	GCGrace time.Duration
	// WarehouseMode is the permission of the files written in local
	// table folders, overriding table.DefaultFileMode; folders get the
	// same bits plus x wherever r is set.
	WarehouseMode os.FileMode
	// Members shares each pipeline's partitions with the other agents of
	// a cluster: a pipeline's table loops read only the partitions its
	// members group gives this agent (see share). Nil for a single agent,
	// which reads every partition.
	Members Members
	// Catalog returns the catalog named name, nil when there is none: the
	// tables whose destination_catalog names one are registered in it
	// (see package registration). Nil registers no table.
	Catalog func(name string) *spec.Catalog
	// RevokeTimeout bounds how long an assignment waits for the final
	// flush of the table loops that lose partitions; 0 means
	// DefaultRevokeTimeout. Used with Members only.
	RevokeTimeout time.Duration
}

// Manager runs every applied pipeline. It is safe for concurrent use.
type Manager struct {
	cfg Config
	log *slog.Logger

	// changeMu serializes Apply, Remove and Close, which may wait for
	// table loops to flush; mu guards pipelines only, so that Status never
	// waits for a flush.
	changeMu  sync.Mutex
	mu        sync.Mutex
	pipelines map[string]*running
	// fanouts holds the running fanout schemas by name, and, in a
	// cluster, fanoutShares their shares of their partitions.
	fanouts      map[string]*fanout.Runner
	fanoutShares map[string]*share
	// registries holds the schema registry clients, shared by all tables.
	registries ingest.Registries
	// sinks holds the running Kafka sinks by name (see kafka_sink_api.go),
	// and, in a cluster, sinkShares every sink applied, which runs on the
	// agent its members group gives it (see kafka_sink_members.go).
	sinks      map[string]*kafkasink.Runner
	sinkShares map[string]*sinkShare
}

// running is one applied pipeline and its table loops, in spec order.
type running struct {
	spec   spec.Pipeline
	conn   spec.Connection
	client *kafka.Client
	// source fetches for every reader of the pipeline, through client.
	source *ingest.Source
	tables []*tableRunner
	// share holds the partitions this agent owns when it runs in a
	// cluster; nil for a single agent.
	share *share
}

// close stops what r's readers shared: its source, then its client. Its
// readers must be stopped.
func (r *running) close() {
	r.source.Close()
	r.client.Close()
}

// NewManager returns a Manager with no pipelines.
func NewManager(cfg Config) *Manager {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if cfg.Memory == nil {
		cfg.Memory = memory.New(math.MaxInt64)
	}
	return &Manager{cfg: cfg, log: log, pipelines: map[string]*running{}, fanouts: map[string]*fanout.Runner{},
		fanoutShares: map[string]*share{}, sinks: map[string]*kafkasink.Runner{}, sinkShares: map[string]*sinkShare{}}
}

// Apply starts pipeline p, reading through conn, or updates it in place: an
// unchanged table keeps running, a changed one is restarted after a final
// flush and commit, a removed one is stopped. p must be normalized and valid.
// regs holds, by connection name, the schema registries of the other
// connections p's transformers name in their schema_registry blocks.
//
// A change that a table's existing schema cannot take (anything but new
// nullable columns) is refused before anything stops, as [spec.Errors] on
// the table's path; the pipeline keeps running as it was.
func (m *Manager) Apply(ctx context.Context, p *spec.Pipeline, conn *spec.Connection, regs map[string]spec.SchemaRegistry) error {
	m.changeMu.Lock()
	defer m.changeMu.Unlock()
	old := m.applied(p.Name)
	release := func() {}
	if old != nil && old.share != nil {
		// No assignment restarts the old loops while they are replaced.
		held := old.share
		held.mu.Lock()
		var once sync.Once
		release = func() { once.Do(held.mu.Unlock) }
		defer release()
		old = m.applied(p.Name)
	}
	cfgs, current, err := m.review(p, conn, regs, old)
	if err != nil {
		return err
	}

	next := &running{spec: *p, conn: *conn}
	sameConn := old != nil && reflect.DeepEqual(old.conn, *conn)
	if sameConn {
		next.client, next.source = old.client, old.source
	} else {
		if next.client, err = kafka.NewClient(conn); err != nil {
			return err
		}
		next.source = ingest.NewSource(next.client, m.cfg.Memory, m.log.With("pipeline", p.Name))
	}
	joining := m.shareOf(next, old, sameConn)
	if joining {
		next.share.mu.Lock()
		defer next.share.mu.Unlock()
	}
	keep := map[*tableRunner]bool{}
	for i, cfg := range cfgs {
		r := current[i]
		if joining {
			r = nil // the loops wait for the new group's first assignment
		}
		if r == nil {
			// A table changed: stop its old loop (final flush and commit)
			// before the new one opens the same folder.
			if old != nil {
				for _, o := range old.tables {
					if o.cfg.Dir == cfg.Dir {
						o.stop()
					}
				}
			}
			r = startTable(cfg, next.share.ownership(), next.client, next.source, &m.registries, m.cfg.Memory, m.log)
		}
		keep[r] = true
		next.tables = append(next.tables, r)
	}
	if old != nil {
		for _, o := range old.tables {
			if !keep[o] {
				o.stop()
			}
		}
		if joining {
			// The old share is closed: an assignment still to come changes
			// nothing, so the membership it runs on can end.
			release()
			m.leave(ctx, old.share, membersKey(p.Name))
		}
		// The fanout schemas move to the new client before the old closes.
		m.reapplyFanouts(ctx, next)
		if old.client != next.client {
			old.close()
		}
	}
	m.mu.Lock()
	m.pipelines[p.Name] = next
	m.mu.Unlock()
	if joining {
		// Its first assignment waits for Apply to release the share.
		if err := m.join(ctx, next.share, membersKey(p.Name), conn, next.client); err != nil {
			return err
		}
	}
	m.log.Info("pipeline applied", "pipeline", p.Name, "tables", len(next.tables), "started", len(next.tables)-countKept(current))
	return nil
}

// shareOf gives next, the pipeline about to replace old (nil when new),
// its share of the partitions when the agent runs in a cluster: old's,
// when next reads the same partitions on the same connection (sameConn)
// and old joined its group; else a new one, whose group next must join
// (joining true), old's share being closed (the caller holds its lock). A
// single agent has none.
func (m *Manager) shareOf(next, old *running, sameConn bool) (joining bool) {
	if m.cfg.Members == nil {
		return false
	}
	sources := sourcesOf(&next.spec)
	if old != nil && old.share != nil && old.share.leave != nil && sameConn && sameSources(old.share.sources, sources) {
		next.share = old.share
		return false
	}
	if old != nil && old.share != nil {
		old.share.closed = true
	}
	next.share = &share{sources: sources}
	name, s := next.spec.Name, next.share
	s.reassign = func(prev map[kafka.TopicPartition]bool) { m.reassignTables(s, name, prev) }
	return true
}

// Check reports whether Apply would refuse pipeline p reading through conn,
// with the same [spec.Errors], without starting, stopping or changing
// anything: a dry run. p must be normalized and valid.
func (m *Manager) Check(p *spec.Pipeline, conn *spec.Connection, regs map[string]spec.SchemaRegistry) error {
	_, _, err := m.review(p, conn, regs, m.applied(p.Name))
	return err
}

// applied returns the named pipeline as applied, or nil.
func (m *Manager) applied(name string) *running {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pipelines[name]
}

// review returns the table configurations of p, and for each table the loop
// of old (the pipeline as applied, or nil) that runs it unchanged, or nil
// when the table is new or changed. Every new or changed table is checked
// against its existing log; the tables that cannot take their new columns
// are returned as [spec.Errors] on their paths.
func (m *Manager) review(p *spec.Pipeline, conn *spec.Connection, regs map[string]spec.SchemaRegistry, old *running) ([]tableConfig, []*tableRunner, error) {
	cfgs := make([]tableConfig, len(p.Tables))
	current := make([]*tableRunner, len(p.Tables))
	root, err := m.root(p)
	if err != nil {
		return nil, nil, err
	}
	for i := range p.Tables {
		cfgs[i] = m.tableConfig(root, p, &p.Tables[i], conn)
		cfgs[i].Registries = ingest.TableRegistries(&p.Tables[i], conn, regs)
		if old != nil {
			for _, o := range old.tables {
				if reflect.DeepEqual(o.cfg, cfgs[i]) {
					current[i] = o
				}
			}
		}
	}
	// The new and changed tables are checked side by side, a few at a
	// time: on an object store each check is a handful of requests, which
	// a pipeline of many tables would otherwise wait for one after another.
	errs := runner.SideBySide(len(cfgs), concurrentChecks, func(i int) error {
		if current[i] != nil {
			return nil
		}
		return checkSchema(&cfgs[i], "write to a new destination_table")
	})
	var refused spec.Errors
	for i, err := range errs {
		if err != nil {
			refused = append(refused, spec.FieldError{Path: fmt.Sprintf("table[%d]", i), Detail: err.Error()})
		}
	}
	if len(refused) > 0 {
		return nil, nil, refused
	}
	return cfgs, current, nil
}

// concurrentChecks is how many tables a review checks at a time.
const concurrentChecks = 8

// countKept counts the table loops an Apply kept running.
func countKept(current []*tableRunner) int {
	n := 0
	for _, r := range current {
		if r != nil {
			n++
		}
	}
	return n
}

// checkSchema reports whether the table's existing log, if any, can take
// the columns cfg's table declares; elsewhere says where else to write,
// in the message of a refusal.
func checkSchema(cfg *tableConfig, elsewhere string) error {
	layout, errs := cfg.Table.Layout()
	if len(errs) > 0 {
		return errs
	}
	// The table's loop may be running: read the log without its lock.
	snap, err := table.ReadSnapshot(cfg.Dir)
	if err != nil {
		return fmt.Errorf("open table %s: %w", cfg.Qualified, err)
	}
	if snap.Version < 0 {
		// A new table: make sure its first commit can be written.
		if err := table.CheckWritable(cfg.Dir); err != nil {
			return fmt.Errorf("table %s: %w", cfg.Qualified, err)
		}
	}
	if prev := snap.Schema; prev != nil {
		columns.Keep(layout, prev)
		p, err := columns.InferredPart(layout)
		if err != nil {
			return err
		}
		if p != nil {
			if err := columns.WithHints(layout, p, columns.Own(layout, prev)); err != nil {
				return err
			}
		}
		cols := layout.Columns()
		if layout.Key.Pending() || layout.Value.Pending() {
			// The registry sets the columns when the table starts, and
			// they only add to the table's.
			cols = schema.Merge(prev, cols)
		}
		if err := table.CheckSchemaChange(prev, cols); err != nil {
			return fmt.Errorf("table %s exists with columns the new options cannot keep (%w); "+
				"%s, or go back to the previous options", cfg.Qualified, err, elsewhere)
		}
	}
	return nil
}

// root returns where p's tables go: under its storage_location, which must
// lie under the warehouse or an allowed root (whose store options it
// takes), or else under the warehouse. A location under no root is refused
// as [spec.Errors] on storage_location.
func (m *Manager) root(p *spec.Pipeline) (string, error) {
	if p.StorageLocation == "" {
		return m.cfg.Warehouse, nil
	}
	roots := append([]string{m.cfg.Warehouse}, m.cfg.AllowedRoots...)
	for _, root := range roots {
		if spec.LocationUnder(p.StorageLocation, root) {
			return withOptionsOf(p.StorageLocation, root), nil
		}
	}
	return "", spec.Errors{{Path: "storage_location", Detail: fmt.Sprintf("%s is not under a root this agent may write to (%s); "+
		"start the agent with --warehouse-allow <root> for it, or use a location under one of those",
		p.StorageLocation, strings.Join(redactedRoots(roots), ", "))}}
}

// withOptionsOf returns location, a URL or a path under root, with root's
// query parameters: the options of the store driver (an S3 endpoint, say)
// configured on the agent for that root.
func withOptionsOf(location, root string) string {
	r, err := url.Parse(root)
	if err != nil || r.RawQuery == "" {
		return location
	}
	l, err := url.Parse(location)
	if err != nil {
		return location
	}
	l.RawQuery = r.RawQuery
	return l.String()
}

// redactedRoots returns roots without their query parameters, for messages.
func redactedRoots(roots []string) []string {
	out := make([]string, len(roots))
	for i, root := range roots {
		out[i], _, _ = strings.Cut(root, "?")
	}
	return out
}

// runSettings returns the run settings of pipeline p's tables, or of a
// fanout schema's: destination_catalog catalog and destination_schema
// schema.
func (m *Manager) runSettings(p *spec.Pipeline, catalog, schema string) runner.Settings {
	var cat *spec.Catalog
	if m.cfg.Catalog != nil {
		cat = m.cfg.Catalog(catalog)
	}
	return runner.Settings{
		Catalog:       cat,
		Schema:        schema,
		FlushEvery:    p.FlushEvery(),
		MaxRows:       cmp.Or(p.MaxRowsPerFile, spec.DefaultMaxRowsPerFile),
		MaxBytes:      cmp.Or(p.TargetFileSizeMB, spec.DefaultTargetFileSizeMB) << 20,
		Continuous:    p.IsContinuous(),
		GCGrace:       cmp.Or(m.cfg.GCGrace, gcGrace(p.FlushEvery())),
		FileMode:      m.cfg.WarehouseMode,
		Compact:       p.Compacts(),
		MinSmallFiles: int(cmp.Or(p.AutoCompactMinFiles, spec.DefaultAutoCompactMinFiles)),
		Vacuum:        p.Vacuums(),
	}
}

func (m *Manager) tableConfig(root string, p *spec.Pipeline, t *spec.Table, conn *spec.Connection) tableConfig {
	return tableConfig{
		Pipeline:       p.Name,
		Qualified:      strings.ToLower(p.QualifiedName(t)),
		Dir:            spec.JoinLocation(root, p.DestinationCatalog, p.DestinationSchema, t.DestinationTable),
		DirtyDir:       spec.JoinLocation(root, p.DestinationCatalog, p.DestinationSchema, spec.DirtyRecordsTable),
		DirtyQualified: strings.ToLower(deltasink.DirtyQualified(p.DestinationCatalog, p.DestinationSchema)),
		Table:          *t,
		Conn:           *conn,
		Settings:       m.runSettings(p, p.DestinationCatalog, p.DestinationSchema),
	}
}

// Remove stops the named pipeline after a final flush and commit, and
// forgets it; in a cluster it then leaves the pipeline's members group.
// Its tables stay.
func (m *Manager) Remove(ctx context.Context, name string) error {
	m.changeMu.Lock()
	defer m.changeMu.Unlock()
	r := m.detach(name)
	m.stopFanouts(ctx, name)
	if r != nil {
		stopAll(r.tables)
		m.leave(ctx, r.share, membersKey(name))
		r.close()
		m.log.Info("pipeline stopped and removed; its tables stay", "pipeline", name)
	}
	return nil
}

// detach takes the named pipeline out of the manager and returns it, nil
// when not applied. Its share, if any, is closed first, so that no
// assignment restarts its table loops from then on.
func (m *Manager) detach(name string) *running {
	if r := m.applied(name); r != nil {
		r.share.close() // waits for an assignment in progress
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.pipelines[name]
	delete(m.pipelines, name)
	return r
}

// Status reports the named pipeline; ok is false when it is not running.
// The state of a triggered pipeline counts its fanout schemas with its
// tables: it is IDLE once every one of them finished its run.
//
// In a cluster it reports this agent's share: a table waiting for its
// group's first assignment is STARTING, without a version (its log is not
// opened yet); a table none of whose partitions the agent owns is RUNNING,
// with no partitions: it is ready to take some at the next assignment.
func (m *Manager) Status(name string) (status spec.PipelineStatus, ok bool) {
	m.mu.Lock()
	r := m.pipelines[name]
	var fanouts []*fanout.Runner
	if r != nil && !r.spec.IsContinuous() {
		fanouts = m.fanoutsOf(name)
	}
	m.mu.Unlock()
	if r == nil {
		return spec.PipelineStatus{}, false
	}
	status.Tables = make([]spec.TableStatus, len(r.tables))
	counts := map[string]int{}
	for i, t := range r.tables {
		status.Tables[i] = t.snapshot()
		counts[status.Tables[i].State]++
	}
	for _, f := range fanouts {
		counts[f.Status().State]++
	}
	n := len(r.tables) + len(fanouts)
	switch {
	case n == 0:
		// Nothing of its own to read: a pipeline that only carries fanout
		// schemas, which report their own states.
		status.State = spec.StateRunning
	case counts[spec.StateFailed] > 0:
		status.State = spec.StateFailed
	case counts[spec.StateIdle] == n:
		status.State = spec.StateIdle
	case counts[spec.StateRunning]+counts[spec.StateIdle] == n:
		status.State = spec.StateRunning
	case counts[spec.StateStopped] == n:
		status.State = spec.StateStopped
	default:
		status.State = spec.StateStarting
	}
	return status, true
}

// Close stops every Kafka sink and every pipeline, flushing and committing what they buffered,
// and then, in a cluster, leaves each pipeline's members group.
// When ctx ends first it returns ctx's error and leaves the rest to finish
// in the background; whatever they had not committed is read again on the
// next start.
func (m *Manager) Close(ctx context.Context) error {
	m.changeMu.Lock()
	defer m.changeMu.Unlock()
	m.mu.Lock()
	names := slices.Collect(maps.Keys(m.pipelines))
	m.mu.Unlock()
	var stopping []*running
	for _, name := range names {
		stopping = append(stopping, m.detach(name))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.stopSinks(ctx)
		m.stopFanouts(ctx, "")
		var all []*tableRunner
		for _, r := range stopping {
			all = append(all, r.tables...)
		}
		stopAll(all)
		for _, r := range stopping {
			m.leave(ctx, r.share, membersKey(r.spec.Name))
			r.close()
		}
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop pipelines: %w", ctx.Err())
	}
}

// stopAll stops table loops in parallel and waits for all of them.
func stopAll(ts []*tableRunner) {
	var wg sync.WaitGroup
	for _, t := range ts {
		wg.Go(t.stop)
	}
	wg.Wait()
}
