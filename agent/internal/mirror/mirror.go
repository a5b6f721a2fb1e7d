// Package mirror keeps an Iceberg mirror of a Delta table: after the
// table's Delta commits it commits the same files as an Iceberg snapshot
// in an Iceberg REST catalog, so that engines that read Iceberg but not
// Delta read the table by name. No data file is written twice: the
// snapshots list the Delta table's own Parquet files; only their
// manifests (package iceberg) are written, beside the Delta log under
// metadata/.
//
// It sits beside ingestion, after the table's log: the table's log is the
// source of truth, read without a lock ([table.ChangeReader]); the
// catalog is a follower. Each snapshot records in its summary
// ([iceberg.DeltaVersionProperty]) the Delta version it mirrors, and a
// commit requires the catalog's current snapshot to be the one the sync
// started from, so a restarted mirror resumes exactly where the last
// commit left, and two mirrors of one table never both commit a version.
// A catalog that is down or refuses only delays the mirror; ingestion
// never waits for it.
//
// [table.ChangeReader]: github.com/tributary-io/terraform-provider-tributary/agent/internal/table
package mirror

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/iceberg"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/icebergrest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// MaxManifests is how many manifests a snapshot may list before the
// mirror merges them into one: each Delta commit adds one, and readers
// open every manifest of a snapshot.
const MaxManifests = 50

// versionsPerSync is how many Delta versions one sync reads at most; a
// mirror far behind catches up in several snapshots.
const versionsPerSync = 1000

// Target is where a table's mirror goes.
type Target struct {
	// Catalog is the Iceberg REST catalog.
	Catalog *icebergrest.Client
	// Namespace and Name name the table in the catalog.
	Namespace []string
	Name      string
	// Location is the Delta table's location (a path or a URL, as
	// [storage.Open] takes it).
	Location string
}

// Result is what one [Mirror.Sync] did.
type Result struct {
	// Version is the Delta version the catalog's table mirrors after the
	// sync, -1 when it mirrors none yet (or the sync failed before it
	// knew).
	Version int64
	// Latest is the latest Delta version the sync read, -1 when the table
	// has none.
	Latest int64
	// Commits is the number of snapshots the sync committed.
	Commits int
	// Added and Removed count the data files those snapshots added and
	// removed.
	Added, Removed int
}

// Mirror mirrors one Delta table into one Iceberg table. It is not safe
// for concurrent use: one goroutine syncs it.
type Mirror struct {
	t      Target
	store  storage.Store
	reader *table.ChangeReader
	base   string // the table location as a URI, without a trailing slash

	// What the mirror knows of the catalog's table, valid while the
	// catalog's current snapshot is snapshot; reloaded otherwise.
	meta      *iceberg.TableMetadata
	snapshot  *int64
	manifests []iceberg.ManifestFile
	entries   [][]iceberg.ManifestEntry // the live entries of each manifest
	live      map[string]liveEntry      // by file URI
	// found says the catalog held the table (or the mirror created it)
	// at least once.
	found bool
}

// liveEntry is a live file of the Iceberg table: which manifest holds it.
type liveEntry struct {
	manifest int
	entry    iceberg.ManifestEntry
}

// New returns a mirror of the Delta table at t.Location. The caller must
// [Mirror.Close] it.
func New(t Target) (*Mirror, error) {
	s, err := storage.Open(t.Location, table.DefaultFileMode)
	if err != nil {
		return nil, err
	}
	r, err := table.OpenChanges(t.Location)
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	return &Mirror{t: t, store: s, reader: r, base: LocationURI(t.Location)}, nil
}

// Close releases the mirror's stores.
func (m *Mirror) Close() error {
	return errors.Join(m.reader.Close(), m.store.Close())
}

// Sync brings the catalog's table up to the Delta log's latest version:
// it creates the table when the catalog lacks it, then commits one
// snapshot for the versions not yet mirrored (up to versionsPerSync of
// them). A conflict (another mirror committed first) ends the sync with
// an error wrapping [icebergrest.ErrConflict]; the next sync starts from
// what the catalog then holds.
func (m *Mirror) Sync(ctx context.Context) (Result, error) {
	res := Result{Version: -1, Latest: -1}
	if _, err := m.reader.Versions(0, 0); err != nil { // reads the latest commits
		return res, err
	}
	latest, meta, _ := m.reader.Current()
	if meta == nil {
		return res, nil // no Delta commit yet: the mirror starts with the first
	}
	res.Latest = latest
	if err := m.load(ctx); err != nil {
		return res, err
	}
	from := int64(0)
	if v, ok := m.meta.MirroredVersion(); ok {
		res.Version, from = v, v+1
	}
	versions, err := m.reader.Versions(from, versionsPerSync)
	gone := errors.Is(err, table.ErrVersionGone)
	if err != nil && !gone {
		return res, err
	}
	latest, meta, files := m.reader.Current()
	res.Latest = latest
	if len(versions) == 0 && !gone {
		return res, nil // nothing new
	}
	var ch change
	if gone || m.meta.CurrentSnapshot() == nil {
		// The first snapshot, or the log no longer holds the versions
		// after the last one mirrored: the snapshot is the difference
		// between the table now and what the catalog's table lists.
		ch = m.difference(latest, meta, files)
	} else if ch = m.fold(versions); !m.follows(ch) {
		// The versions do not apply to what the catalog's table lists
		// (another engine changed it): mirror the difference instead.
		ch = m.difference(latest, meta, files)
	}
	if err := m.commit(ctx, ch); err != nil {
		return res, err
	}
	res.Version, res.Commits, res.Added, res.Removed = ch.version, 1, len(ch.added), len(ch.removed)
	return res, nil
}

// change is what one snapshot does: the Delta version it mirrors, the
// table's metadata when it changed, and the files it adds and removes.
type change struct {
	version    int64
	meta       *table.Meta
	added      []table.DataFile
	removed    []string // file URIs
	dataChange bool
}

// fold folds versions, in order, into one change: a file added and then
// removed within them is in neither list.
func (m *Mirror) fold(versions []table.VersionFiles) change {
	ch := change{version: versions[len(versions)-1].Version}
	added := map[string]table.DataFile{}
	var order []string
	removed := map[string]bool{}
	for _, v := range versions {
		if v.Meta != nil {
			ch.meta = v.Meta
		}
		ch.dataChange = ch.dataChange || v.DataChange
		for _, f := range v.Removed {
			uri := m.fileURI(f.Path)
			if _, ok := added[uri]; ok {
				delete(added, uri)
				continue
			}
			removed[uri] = true
		}
		for _, f := range v.Added {
			uri := m.fileURI(f.Path)
			if removed[uri] {
				delete(removed, uri) // re-added: it stays as it was
				continue
			}
			added[uri] = f
			order = append(order, uri)
		}
	}
	for _, uri := range order {
		if f, ok := added[uri]; ok {
			ch.added = append(ch.added, f)
			delete(added, uri)
		}
	}
	ch.removed = slices.Sorted(maps.Keys(removed))
	return ch
}

// follows reports whether change ch applies to what the catalog's table
// lists: it removes only files the table lists and adds none it does.
func (m *Mirror) follows(ch change) bool {
	for _, uri := range ch.removed {
		if _, ok := m.live[uri]; !ok {
			return false
		}
	}
	for _, f := range ch.added {
		if _, ok := m.live[m.fileURI(f.Path)]; ok {
			return false
		}
	}
	return true
}

// difference is the change from what the catalog's table lists to the
// Delta table's live files at version.
func (m *Mirror) difference(version int64, meta *table.Meta, files []table.DataFile) change {
	ch := change{version: version, meta: meta, dataChange: true}
	now := map[string]bool{}
	for _, f := range files {
		uri := m.fileURI(f.Path)
		now[uri] = true
		if _, ok := m.live[uri]; !ok {
			ch.added = append(ch.added, f)
		}
	}
	for uri := range m.live {
		if !now[uri] {
			ch.removed = append(ch.removed, uri)
		}
	}
	slices.Sort(ch.removed)
	return ch
}

// load reads the catalog's table, creating it (and its namespace) when
// the catalog lacks it, and the manifests of its current snapshot, unless
// the mirror already knows that snapshot.
func (m *Mirror) load(ctx context.Context) error {
	meta, err := m.t.Catalog.LoadTable(ctx, m.t.Namespace, m.t.Name)
	switch {
	case errors.Is(err, icebergrest.ErrNotFound) && m.found:
		// Dropped since this mirror found it: by a DELETE with
		// on_delete = DROP_REGISTRATION, which another agent of a cluster
		// may serve before this one stops the table, or by hand. Creating
		// it again would undo the drop.
		return fmt.Errorf("the catalog's table %s was dropped while the table was mirrored; "+
			"the mirror creates it again when the table next starts", m.tableName())
	case errors.Is(err, icebergrest.ErrNotFound):
		meta, err = m.create(ctx)
	}
	if err != nil {
		return err
	}
	if strings.TrimSuffix(meta.Location, "/") != m.base {
		return fmt.Errorf("the name is taken: the catalog's table %s is the table at %q, not the mirror of the Delta table at %q; "+
			"drop it from the catalog, or give the Delta table another destination_schema or name", m.tableName(), meta.Location, m.base)
	}
	m.found = true
	if meta.FormatVersion != iceberg.FormatVersion {
		return fmt.Errorf("the catalog's table %s is Iceberg format version %d; the mirror writes version %d",
			m.tableName(), meta.FormatVersion, iceberg.FormatVersion)
	}
	var cur *int64 // nil when the table has no snapshot (the catalog may say -1)
	if s := meta.CurrentSnapshot(); s != nil {
		cur = &s.SnapshotID
	}
	if m.meta != nil && reflect.DeepEqual(cur, m.snapshot) {
		m.meta = meta
		return nil
	}
	m.meta, m.snapshot, m.manifests, m.entries, m.live = meta, cur, nil, nil, map[string]liveEntry{}
	s := meta.CurrentSnapshot()
	if s == nil {
		return nil
	}
	data, err := m.readURI(s.ManifestList)
	if err != nil {
		return fmt.Errorf("reading the manifest list of table %s: %w", m.tableName(), err)
	}
	manifests, err := iceberg.ReadManifestList(data)
	if err != nil {
		return err
	}
	for _, mf := range manifests {
		data, err := m.readURI(mf.Path)
		if err != nil {
			return fmt.Errorf("reading a manifest of table %s: %w", m.tableName(), err)
		}
		entries, err := iceberg.ReadManifest(data, mf)
		if err != nil {
			return err
		}
		m.addManifest(mf, entries)
	}
	return nil
}

// addManifest records manifest mf with entries as one of the current
// snapshot's.
func (m *Mirror) addManifest(mf iceberg.ManifestFile, entries []iceberg.ManifestEntry) {
	i := len(m.manifests)
	m.manifests = append(m.manifests, mf)
	var kept []iceberg.ManifestEntry
	for _, e := range entries {
		if e.Status == iceberg.StatusDeleted {
			continue
		}
		kept = append(kept, e)
		m.live[e.File.Path] = liveEntry{manifest: i, entry: e}
	}
	m.entries = append(m.entries, kept)
}

// create creates the catalog's table from the Delta table's metadata as
// the reader has it; its first snapshot comes with the first sync.
func (m *Mirror) create(ctx context.Context) (*iceberg.TableMetadata, error) {
	_, meta, _ := m.reader.Current()
	if meta == nil {
		return nil, fmt.Errorf("table %s has no Delta commit yet: its Iceberg mirror starts with the first", m.t.Location)
	}
	s, _, err := iceberg.FromDelta(meta.Schema, meta.Columns, nil, 0)
	if err != nil {
		return nil, err
	}
	spec, err := iceberg.Partitioning(s, meta.PartitionColumns)
	if err != nil {
		return nil, err
	}
	props := map[string]string{"format-version": strconv.Itoa(iceberg.FormatVersion), "tributary.mirror-of": "delta"}
	if err := setNameMapping(props, s, meta); err != nil {
		return nil, err
	}
	if err := m.t.Catalog.CreateNamespace(ctx, m.t.Namespace); err != nil {
		return nil, err
	}
	created, err := m.t.Catalog.CreateTable(ctx, m.t.Namespace, icebergrest.CreateTableRequest{
		Name: m.t.Name, Location: m.base, Schema: s, PartitionSpec: spec, Properties: props,
	})
	if errors.Is(err, icebergrest.ErrConflict) { // another mirror created it first
		return m.t.Catalog.LoadTable(ctx, m.t.Namespace, m.t.Name)
	}
	return created, err
}

// setNameMapping sets the name mapping of a table without column mapping:
// its files carry no field ids.
func setNameMapping(props map[string]string, s *iceberg.Schema, meta *table.Meta) error {
	if meta.Columns != nil {
		return nil
	}
	nm, err := iceberg.NameMapping(s)
	if err != nil {
		return err
	}
	props["schema.name-mapping.default"] = nm
	return nil
}

// commit commits change ch as a snapshot of the catalog's table.
func (m *Mirror) commit(ctx context.Context, ch change) error {
	cur := m.meta.CurrentSchema()
	if cur == nil {
		return fmt.Errorf("the catalog's table %s has no current schema", m.tableName())
	}
	reqs := []icebergrest.Requirement{icebergrest.AssertRefSnapshotID("main", m.snapshot)}
	var updates []icebergrest.Update
	sch, schemaID := cur, m.meta.CurrentSchemaID
	if ch.meta != nil {
		if err := m.checkPartitioning(ch.meta); err != nil {
			return err
		}
		s, last, err := iceberg.FromDelta(ch.meta.Schema, ch.meta.Columns, cur, m.meta.LastColumnID)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(s.Fields, cur.Fields) {
			schemaID = maxSchemaID(m.meta) + 1
			s.SchemaID = schemaID
			sch = s
			reqs = append(reqs, icebergrest.AssertCurrentSchemaID(m.meta.CurrentSchemaID))
			updates = append(updates, icebergrest.AddSchema(*s, max(last, m.meta.LastColumnID)), icebergrest.SetCurrentSchema())
			props := map[string]string{}
			if err := setNameMapping(props, s, ch.meta); err != nil {
				return err
			}
			if len(props) > 0 {
				updates = append(updates, icebergrest.SetProperties(props))
			}
		}
	}
	spec := m.meta.DefaultSpec()
	if spec == nil {
		return fmt.Errorf("the catalog's table %s has no default partition spec", m.tableName())
	}
	w, err := iceberg.NewManifestWriter(sch, schemaID, spec)
	if err != nil {
		return err
	}
	snapID := rand.Int64N(1<<62) + 1
	seq := m.meta.LastSequenceNumber + 1
	written, err := m.writeManifests(w, ch, snapID, seq, sch, spec)
	if err != nil {
		return err
	}
	manifests := make([]iceberg.ManifestFile, len(written))
	for i, wm := range written {
		manifests[i] = wm.file
	}
	list, err := iceberg.WriteManifestList(manifests, snapID, m.snapshot, seq)
	if err != nil {
		return err
	}
	listName := fmt.Sprintf("metadata/snap-%d-%s.avro", snapID, storage.NewUUID())
	if err := m.store.PutIfAbsent(listName, list); err != nil {
		return fmt.Errorf("writing the manifest list of table %s: %w", m.tableName(), err)
	}
	snap := iceberg.Snapshot{SnapshotID: snapID, ParentSnapshotID: m.snapshot, SequenceNumber: seq,
		TimestampMs: time.Now().UnixMilli(), ManifestList: m.base + "/" + listName, SchemaID: &schemaID,
		Summary: summary(ch, written, snapID)}
	updates = append(updates, icebergrest.AddSnapshot(snap), icebergrest.SetMainBranch(snapID))
	if old := m.expired(time.UnixMilli(snap.TimestampMs)); len(old) > 0 {
		updates = append(updates, icebergrest.RemoveSnapshots(old))
	}
	meta, err := m.t.Catalog.Commit(ctx, m.t.Namespace, m.t.Name, reqs, updates)
	if err != nil {
		m.meta = nil // load again before the next sync
		return err
	}
	m.meta, m.snapshot = meta, &snapID
	m.manifests, m.entries, m.live = nil, nil, map[string]liveEntry{}
	for _, wm := range written {
		m.addManifest(wm.file, wm.entries)
	}
	return nil
}

// expired returns the snapshots of the catalog's table that a commit at
// now expires: those older than the Delta table's deleted-file retention,
// whose files Delta's vacuum may have deleted, so that no reader time
// travels to a snapshot whose files are gone. The current snapshot is
// kept, whatever its age: it is the new snapshot's parent.
func (m *Mirror) expired(now time.Time) []int64 {
	meta := m.reader.Meta()
	var conf map[string]string
	if meta != nil {
		conf = meta.Configuration
	}
	horizon := now.Add(-table.DeletedFileRetention(conf)).UnixMilli()
	var old []int64
	for _, s := range m.meta.Snapshots {
		if s.TimestampMs < horizon && (m.snapshot == nil || s.SnapshotID != *m.snapshot) {
			old = append(old, s.SnapshotID)
		}
	}
	return old
}

// written is a manifest of a new snapshot and its live entries.
type written struct {
	file    iceberg.ManifestFile
	entries []iceberg.ManifestEntry
}

// writeManifests writes the manifests of snapshot snapID (sequence number
// seq) that applies ch to the current snapshot: the current manifests
// that hold no removed file stay as they are; those that hold one are
// written again, the removed files marked deleted; the added files go
// into a new manifest. When that makes more than [MaxManifests], every
// live file goes into one new manifest instead.
func (m *Mirror) writeManifests(w *iceberg.ManifestWriter, ch change, snapID, seq int64, s *iceberg.Schema, spec *iceberg.PartitionSpec) ([]written, error) {
	_, meta, _ := m.reader.Current()
	var added []iceberg.ManifestEntry
	for _, f := range ch.added {
		df, err := m.dataFile(f, meta, s, spec)
		if err != nil {
			return nil, err
		}
		added = append(added, iceberg.ManifestEntry{Status: iceberg.StatusAdded, File: df})
	}
	removed := map[string]bool{}
	affected := map[int]bool{}
	for _, uri := range ch.removed {
		le, ok := m.live[uri]
		if !ok {
			return nil, fmt.Errorf("the Delta log removes %s, which the catalog's table %s does not list", uri, m.tableName())
		}
		removed[uri] = true
		affected[le.manifest] = true
	}
	// rewrite returns the entries of manifest i with the removed files
	// marked deleted by this snapshot and the others existing.
	rewrite := func(i int) []iceberg.ManifestEntry {
		out := make([]iceberg.ManifestEntry, 0, len(m.entries[i]))
		for _, e := range m.entries[i] {
			e.Status = iceberg.StatusExisting
			if removed[e.File.Path] {
				e.Status, e.SnapshotID = iceberg.StatusDeleted, snapID
			}
			out = append(out, e)
		}
		return out
	}
	var groups [][]iceberg.ManifestEntry
	var kept []int
	merge := len(m.manifests)+1 > MaxManifests
	if merge {
		var all []iceberg.ManifestEntry
		for i := range m.manifests {
			all = append(all, rewrite(i)...)
		}
		groups = append(groups, append(all, added...))
	} else {
		for i := range m.manifests {
			if affected[i] {
				groups = append(groups, rewrite(i))
			} else {
				kept = append(kept, i)
			}
		}
		if len(added) > 0 {
			groups = append(groups, added)
		}
	}
	var out []written
	for _, i := range kept {
		out = append(out, written{file: m.manifests[i], entries: m.entries[i]})
	}
	for n, entries := range groups {
		if len(entries) == 0 {
			continue
		}
		data, mf, err := w.Write(entries, snapID, seq)
		if err != nil {
			return nil, err
		}
		name := fmt.Sprintf("metadata/%d-m%d-%s.avro", snapID, n, storage.NewUUID())
		if err := m.store.PutIfAbsent(name, data); err != nil {
			return nil, fmt.Errorf("writing a manifest of table %s: %w", m.tableName(), err)
		}
		mf.Path, mf.Length = m.base+"/"+name, int64(len(data))
		// What the next snapshot keeps of it: its live entries, with the
		// snapshot and sequence numbers the added ones inherit.
		var live []iceberg.ManifestEntry
		for _, e := range entries {
			switch e.Status {
			case iceberg.StatusDeleted:
				continue
			case iceberg.StatusAdded:
				e.SnapshotID, e.Sequence, e.FileSequence = snapID, seq, seq
			}
			live = append(live, e)
		}
		out = append(out, written{file: mf, entries: live})
	}
	return out, nil
}

// dataFile returns Delta data file f of a table with metadata meta as a
// manifest lists it, its partition values typed by the Iceberg schema s.
func (m *Mirror) dataFile(f table.DataFile, meta *table.Meta, s *iceberg.Schema, spec *iceberg.PartitionSpec) (iceberg.DataFile, error) {
	uri := m.fileURI(f.Path)
	if f.Records < 0 {
		return iceberg.DataFile{}, fmt.Errorf("data file %s has no numRecords in its stats, which an Iceberg manifest needs", uri)
	}
	physical := func(name string) string {
		if meta != nil && meta.Columns != nil {
			return meta.Columns[schema.FieldPath(name)].Name
		}
		return name
	}
	metrics, err := iceberg.MetricsFromDelta(s, f.Stats, f.Records, physical)
	if err != nil {
		return iceberg.DataFile{}, fmt.Errorf("data file %s: %w", uri, err)
	}
	df := iceberg.DataFile{Path: uri, Records: f.Records, Size: f.Size, Partition: map[string]any{}, Metrics: metrics}
	for _, pf := range spec.Fields {
		field, ok := s.FieldByName(pf.Name)
		if !ok {
			return iceberg.DataFile{}, fmt.Errorf("partition field %q is not a column of table %s", pf.Name, m.tableName())
		}
		// The protocol keys partition values by physical name.
		v, err := iceberg.PartitionValue(field.Type, f.PartitionValues[physical(field.Name)])
		if err != nil {
			return iceberg.DataFile{}, fmt.Errorf("data file %s: %w", uri, err)
		}
		df.Partition[pf.Name] = v
	}
	return df, nil
}

// summary is the summary of snapshot snapID, which applies ch and lists
// manifests.
func summary(ch change, manifests []written, snapID int64) map[string]string {
	op := "append"
	switch {
	case len(ch.removed) > 0 && !ch.dataChange:
		op = "replace"
	case len(ch.removed) > 0:
		op = "overwrite"
	}
	var addedRows, deletedRows, files, rows int64
	for _, f := range ch.added {
		addedRows += f.Records
	}
	for _, wm := range manifests {
		for _, e := range wm.entries {
			files++
			rows += e.File.Records
		}
		if wm.file.AddedSnapshotID == snapID { // written by this snapshot, not carried
			deletedRows += wm.file.DeletedRows
		}
	}
	return map[string]string{
		"operation":                  op,
		"added-data-files":           strconv.Itoa(len(ch.added)),
		"deleted-data-files":         strconv.Itoa(len(ch.removed)),
		"added-records":              strconv.FormatInt(addedRows, 10),
		"deleted-records":            strconv.FormatInt(deletedRows, 10),
		"total-data-files":           strconv.FormatInt(files, 10),
		"total-records":              strconv.FormatInt(rows, 10),
		iceberg.DeltaVersionProperty: strconv.FormatInt(ch.version, 10),
	}
}

// checkPartitioning refuses partition columns other than those of the
// catalog's table: Iceberg could evolve its spec, but the agent's tables
// never change theirs, so another engine did, which the mirror does not
// follow.
func (m *Mirror) checkPartitioning(meta *table.Meta) error {
	spec := m.meta.DefaultSpec()
	var names []string
	if spec != nil {
		for _, f := range spec.Fields {
			names = append(names, strings.ToLower(f.Name))
		}
	}
	want := make([]string, len(meta.PartitionColumns))
	for i, c := range meta.PartitionColumns {
		want[i] = strings.ToLower(c)
	}
	if !slices.Equal(names, want) {
		return &iceberg.UnsupportedError{Reason: fmt.Sprintf("the Delta table's partition columns changed to [%s] from [%s]: "+
			"drop the catalog's table %s to mirror the table anew", strings.Join(want, ", "), strings.Join(names, ", "), m.tableName())}
	}
	return nil
}

// maxSchemaID returns the highest schema id of meta.
func maxSchemaID(meta *iceberg.TableMetadata) int {
	n := 0
	for _, s := range meta.Schemas {
		n = max(n, s.SchemaID)
	}
	return n
}

// fileURI is the full URI of a data file at path (relative to the table,
// or an absolute URI), as a manifest lists it.
func (m *Mirror) fileURI(path string) string {
	if strings.Contains(path, "://") {
		return path
	}
	return m.base + "/" + path
}

// readURI reads a file of the table's metadata, named by its full URI.
func (m *Mirror) readURI(uri string) ([]byte, error) {
	rel, ok := strings.CutPrefix(uri, m.base+"/")
	if !ok {
		return nil, fmt.Errorf("%s is outside the table's location %s", uri, m.base)
	}
	return m.store.Read(rel)
}

// tableName is the catalog's name of the table, for messages.
func (m *Mirror) tableName() string {
	return strings.Join(append(slices.Clone(m.t.Namespace), m.t.Name), ".")
}

// LocationURI returns a table location (a path or a URL, as [storage.Open]
// takes it) as the URI other engines name it by, without a trailing
// slash: a local path becomes an absolute file:// URI; an object store URL
// loses its query, which holds the agent's own store options (an
// endpoint, say), not part of the files' names.
func LocationURI(location string) string {
	if dir, ok := spec.LocalPath(location); ok {
		abs, err := filepath.Abs(dir)
		if err == nil {
			dir = abs
		}
		return "file://" + filepath.ToSlash(strings.TrimSuffix(dir, "/"))
	}
	if u, err := url.Parse(location); err == nil {
		u.RawQuery, u.ForceQuery, u.Fragment = "", false, ""
		location = u.String()
	}
	return strings.TrimSuffix(location, "/")
}
