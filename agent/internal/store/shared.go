package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The shared state of a cluster lives under <warehouse>/_tributary/<cluster>/
// on the warehouse's object store:
//
//	format.json                     the format version, and a text sealed with the cluster's key
//	log/<seq, 20 digits>.json       one change: an object put (sealed) or removed
//	snapshot/<seq, 20 digits>.json  every object as of change seq, sealed
//
// Changes are created with a conditional write (put-if-absent), as the
// Delta log's versions are: of two agents that write change seq at once,
// exactly one succeeds, and the other's write fails with [ErrConflict]
// without changing anything. Every agent reads the changes it has not seen
// before it answers a request ([Store.Sync]), so what a PUT through one
// agent stored, a GET through another returns.
//
// Every snapshotEvery changes, the agent that wrote the change writes a
// snapshot, and removes the changes and snapshots older than the snapshot
// before it: an agent that starts reads the newest snapshot and the changes
// after it, never the whole history.

// ErrConflict is returned, wrapped, by a change of a cluster's shared state
// that another agent changed first: the change was not made. Sync, check
// again and retry. Test with errors.Is.
var ErrConflict = errors.New("another agent changed the shared state first")

// SharedFormat is the version of the shared state's format this agent
// writes and reads. An agent refuses shared state of a newer format (a
// rolling upgrade goes from old agents to new ones, and a new agent never
// rewrites the format an old one may still read). Each change and snapshot
// carries the format it was written in: format 2 adds fields to the
// objects (a pipeline's auto_compact, auto_compact_min_files and
// auto_vacuum, a table's partition_by), so that an agent of format 1 names
// both formats when it meets one, rather than an unknown field. Format 3
// adds catalogs: only the changes and snapshots that hold one are written
// in format 3 (see formatOf), so that agents of format 2 work on beside
// agents of format 3 until the first catalog is stored; then they refuse
// the change, naming both formats, and stop their work until they are
// upgraded, as they stop when the shared state cannot be read.
const SharedFormat = 3

// formatOf returns the format of a change or snapshot that holds objects
// of the kinds that have objects: format 2 unless one is a catalog.
func formatOf(kinds ...string) int {
	if slices.Contains(kinds, "catalogs") {
		return SharedFormat
	}
	return 2
}

// sharedFormatFix is what to do about shared state of a newer format.
const sharedFormatFix = "upgrade this agent to the version the cluster runs (a rolling upgrade goes from old agents to new ones)"

const (
	logDir      = "log"
	snapshotDir = "snapshot"
	// snapshotEvery is how many changes separate two snapshots.
	snapshotEvery = 50
)

// StateLocation returns where the shared state of the named cluster lives
// under warehouse, a root on an object store.
func StateLocation(warehouse, cluster string) string {
	return spec.JoinLocation(warehouse, "_tributary", cluster)
}

// change is one entry of the log.
type change struct {
	Format int       `json:"format"`
	Seq    int64     `json:"seq"`
	Agent  string    `json:"agent"`
	Time   time.Time `json:"time"`
	Kind   string    `json:"kind"`
	Name   string    `json:"name"`
	// Object is the object, sealed; null when the change removed it.
	Object json.RawMessage `json:"object"`
}

// snapshotDoc is a snapshot: by kind and name, every object as of change
// Seq, sealed.
type snapshotDoc struct {
	Format  int                                   `json:"format"`
	Seq     int64                                 `json:"seq"`
	Objects map[string]map[string]json.RawMessage `json:"objects"`
}

// sharedLog keeps a cluster's desired state in its log of changes: the
// [persister] of a store [OpenShared] opened.
type sharedLog struct {
	root  storage.Store
	agent string
	// kinds are the store's collections, by name.
	kinds map[string]kind
	order []kind

	mu sync.Mutex
	// seq is the last change in memory.
	seq int64
	// base is the change a change of this agent's started from (see
	// [Store.Begin]); -1 before the first.
	base int64
}

// OpenShared opens the shared state of the named cluster in root (see
// [StateLocation] for where it lies), as agent, the name this agent writes
// in the changes it makes. keyFile holds the cluster's secrets key (see
// [SecretsKeyFile]); every agent of the cluster must have the same. The
// first agent creates the state; the others check that they can read it:
// its format, and its key. The store's Close closes root.
func OpenShared(root storage.Store, cluster, agent, keyFile string) (*Store, error) {
	if keyFile == "" {
		return nil, errors.New("the agents of a cluster need the same secrets key: pass it to each with --secrets-key-file")
	}
	key, err := loadKey("", keyFile)
	if err != nil {
		return nil, err
	}
	log := &sharedLog{root: root, agent: agent, kinds: map[string]kind{}, base: -1}
	st := newStore(key, log)
	st.shared = log
	log.order = append(st.kinds(), st.Runs)
	for _, k := range log.order {
		log.kinds[k.kindName()] = k
	}
	if err := log.checkFormat(key, cluster); err != nil {
		return nil, fmt.Errorf("shared state %s: %w", root, err)
	}
	if err := log.catchUp(); err != nil {
		return nil, fmt.Errorf("shared state %s: %w", root, err)
	}
	return st, nil
}

// keyCheckText is what format.json's key check seals.
func keyCheckText(cluster string) string { return "tributary cluster " + cluster }

// checkFormat creates format.json, or reads it and checks the format and
// the key.
func (l *sharedLog) checkFormat(key *secretsKey, cluster string) error {
	data, err := l.root.Read(formatFile)
	if errors.Is(err, fs.ErrNotExist) {
		if err := l.createFormat(key, cluster); err != nil {
			return fmt.Errorf("creating %s: %w", formatFile, err)
		}
		data, err = l.root.Read(formatFile)
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", formatFile, err)
	}
	doc, err := parseFormat(data, formatFile, SharedFormat, sharedFormatFix)
	if err != nil {
		return err
	}
	if text, err := key.openText(doc.KeyCheck, "cluster/"+cluster); err != nil || text != keyCheckText(cluster) {
		return fmt.Errorf("it was created with another secrets key than the one in %s: pass every agent of cluster %q the same --secrets-key-file",
			key.file, cluster)
	}
	return nil
}

// createFormat writes format.json for a new cluster, unless another agent
// wrote it first.
func (l *sharedLog) createFormat(key *secretsKey, cluster string) error {
	check, err := key.sealText(keyCheckText(cluster), "cluster/"+cluster)
	if err != nil {
		return err
	}
	doc, err := json.Marshal(formatDoc{Format: formatOf(), Cluster: cluster, KeyCheck: check})
	if err != nil {
		return err
	}
	if err := l.root.PutIfAbsent(formatFile, doc); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// seqName returns the name of change or snapshot seq in folder dir.
func seqName(dir string, seq int64) string { return fmt.Sprintf("%s/%020d.json", dir, seq) }

// seqs returns the sequence numbers of the changes or snapshots in dir,
// ascending.
func (l *sharedLog) seqs(dir string) ([]int64, error) {
	entries, err := l.root.List(dir)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	var out []int64
	for _, e := range entries {
		stem, ok := strings.CutSuffix(e.Name, ".json")
		if n, err := strconv.ParseInt(stem, 10, 64); ok && err == nil && !e.Dir && len(stem) == 20 {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// sync reads the changes other agents made since the last one in memory
// and applies them.
func (l *sharedLog) sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.catchUp()
}

// catchUp is sync; the caller holds l.mu. When the changes after the last
// one in memory are gone (removed after a newer snapshot), it reads the
// newest snapshot first.
func (l *sharedLog) catchUp() error {
	seqs, err := l.seqs(logDir)
	if err != nil {
		return err
	}
	i, _ := slices.BinarySearch(seqs, l.seq+1)
	if i < len(seqs) && seqs[i] != l.seq+1 {
		if err := l.loadSnapshot(); err != nil {
			return err
		}
		i, _ = slices.BinarySearch(seqs, l.seq+1)
	}
	for _, seq := range seqs[i:] {
		if seq != l.seq+1 {
			return fmt.Errorf("change %d is missing after change %d; restore it from the object store's versions, or re-create the objects", l.seq+1, l.seq)
		}
		if err := l.apply(seq); err != nil {
			return err
		}
	}
	return nil
}

// apply reads change seq and puts it in memory.
func (l *sharedLog) apply(seq int64) error {
	data, err := l.root.Read(seqName(logDir, seq))
	if err != nil {
		return fmt.Errorf("reading change %d: %w", seq, err)
	}
	var c change
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("reading change %d: %w", seq, err)
	}
	if err := newerFormat(fmt.Sprintf("change %d", seq), c.Format, SharedFormat, sharedFormatFix); err != nil {
		return err
	}
	k, ok := l.kinds[c.Kind]
	if !ok || c.Seq != seq {
		return fmt.Errorf("change %d is damaged (kind %q, seq %d)", seq, c.Kind, c.Seq)
	}
	var sealed []byte
	if string(c.Object) != "null" && len(c.Object) > 0 {
		sealed = c.Object
	}
	if err := k.replace(c.Name, sealed); err != nil {
		return fmt.Errorf("change %d: %w", seq, err)
	}
	l.seq = seq
	return nil
}

// loadSnapshot replaces what memory holds with the newest snapshot.
func (l *sharedLog) loadSnapshot() error {
	seqs, err := l.seqs(snapshotDir)
	if err != nil {
		return err
	}
	if len(seqs) == 0 {
		return fmt.Errorf("the changes after change %d are gone and there is no snapshot", l.seq)
	}
	seq := seqs[len(seqs)-1]
	data, err := l.root.Read(seqName(snapshotDir, seq))
	if err != nil {
		return fmt.Errorf("reading snapshot %d: %w", seq, err)
	}
	var doc snapshotDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("reading snapshot %d: %w", seq, err)
	}
	if err := newerFormat(fmt.Sprintf("snapshot %d", seq), doc.Format, SharedFormat, sharedFormatFix); err != nil {
		return err
	}
	for _, k := range l.order {
		have, err := k.sealedAll()
		if err != nil {
			return err
		}
		for name := range have {
			if _, ok := doc.Objects[k.kindName()][name]; !ok {
				if err := k.replace(name, nil); err != nil {
					return err
				}
			}
		}
		for name, sealed := range doc.Objects[k.kindName()] {
			if err := k.replace(name, sealed); err != nil {
				return fmt.Errorf("snapshot %d: %w", seq, err)
			}
		}
	}
	l.seq = seq
	return nil
}

// write appends the change to the log as the change after the last one in
// memory: ErrConflict when another agent wrote that one first.
func (l *sharedLog) write(kind, name string, sealed []byte, apply func()) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.base >= 0 && l.seq != l.base {
		return fmt.Errorf("%w (changes %d to %d came in while the change was checked)", ErrConflict, l.base+1, l.seq)
	}
	// A nil object is written as null: a removal.
	c := change{Format: formatOf(kind), Seq: l.seq + 1, Agent: l.agent, Time: time.Now().UTC(), Kind: kind, Name: name, Object: sealed}
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := l.root.PutIfAbsent(seqName(logDir, c.Seq), data); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w (change %d)", ErrConflict, c.Seq)
		}
		return fmt.Errorf("writing change %d: %w", c.Seq, err)
	}
	l.seq = c.Seq
	if l.base >= 0 {
		l.base = c.Seq
	}
	apply()
	if c.Seq%snapshotEvery == 0 {
		// The change is made; a snapshot that fails is the next one's to
		// write.
		_ = l.snapshot()
	}
	return nil
}

// snapshot writes the snapshot of the last change, then removes the
// changes and snapshots the snapshot before it made unneeded. The caller
// holds l.mu.
func (l *sharedLog) snapshot() error {
	doc := snapshotDoc{Seq: l.seq, Objects: map[string]map[string]json.RawMessage{}}
	var held []string
	for _, k := range l.order {
		all, err := k.sealedAll()
		if err != nil {
			return err
		}
		doc.Objects[k.kindName()] = all
		if len(all) > 0 {
			held = append(held, k.kindName())
		}
	}
	doc.Format = formatOf(held...)
	data, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	if err := l.root.PutIfAbsent(seqName(snapshotDir, l.seq), data); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	// Keep one snapshot interval of changes before this snapshot, so that
	// an agent a few changes behind reads on without a snapshot, and the
	// snapshot before this one.
	keepFrom := l.seq - snapshotEvery
	for _, dir := range []string{logDir, snapshotDir} {
		seqs, err := l.seqs(dir)
		if err != nil {
			return err
		}
		for _, seq := range seqs {
			if seq < keepFrom || dir == logDir && seq <= keepFrom {
				if err := l.root.Remove(seqName(dir, seq)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Sync reads the changes other agents of the cluster made to the shared
// state since the last Sync, and applies them (watchers see them). A
// single agent's store has nothing to read.
func (s *Store) Sync() error {
	if s.shared == nil {
		return nil
	}
	return s.shared.sync()
}

// Begin starts a change of the shared state: the writes that follow are
// made only on the state as it is now. A Sync that brings in another
// agent's change before them (a concurrent request's, say) makes them fail
// with [ErrConflict], so that what the change checked against the state
// still holds when it is written. The caller serialises its changes, and
// calls Begin before it reads what it checks; a single agent's store has
// nothing to pin.
func (s *Store) Begin() {
	if s.shared == nil {
		return
	}
	s.shared.mu.Lock()
	defer s.shared.mu.Unlock()
	s.shared.base = s.shared.seq
}

// Version returns the number of the last change of the shared state this
// store holds in memory; it grows with every change, this agent's or
// another's. A single agent's store is always at version 0.
func (s *Store) Version() int64 {
	if s.shared == nil {
		return 0
	}
	s.shared.mu.Lock()
	defer s.shared.mu.Unlock()
	return s.shared.seq
}

// Shared reports whether the store is a cluster's shared state.
func (s *Store) Shared() bool { return s.shared != nil }

// Close releases the shared state's object store; a single agent's store
// holds nothing to release.
func (s *Store) Close() error {
	if s.shared == nil {
		return nil
	}
	return s.shared.root.Close()
}

// CopyTo stores in dst every object of s that dst does not hold yet:
// connections first, then pipelines, fanout schemas and Kafka sinks, so
// that each object's references exist before it. It moves a single agent's
// state into a cluster's. An object dst holds already is left alone when
// it is the same, and is an error naming it when it differs, before
// anything of its kind is copied. It returns how many objects it copied.
func (s *Store) CopyTo(dst *Store) (copied int, err error) {
	for _, step := range []func() (int, error){
		func() (int, error) { return copyInto(dst.Connections, s.Connections) },
		func() (int, error) { return copyInto(dst.Pipelines, s.Pipelines) },
		func() (int, error) { return copyInto(dst.FanoutSchemas, s.FanoutSchemas) },
		func() (int, error) { return copyInto(dst.KafkaSinks, s.KafkaSinks) },
	} {
		n, err := step()
		copied += n
		if err != nil {
			return copied, err
		}
	}
	return copied, nil
}

// copyInto stores in dst the objects of src it does not hold; see
// [Store.CopyTo].
func copyInto[T any](dst, src *Collection[T]) (int, error) {
	all, err := src.List()
	if err != nil {
		return 0, err
	}
	var todo []*T
	for i := range all {
		v := &all[i]
		have, err := dst.Get(src.nameOf(v))
		switch {
		case errors.Is(err, ErrNotFound):
			todo = append(todo, v)
		case err != nil:
			return 0, err
		default:
			a, errA := encode(&have)
			b, errB := encode(v)
			if errA != nil || errB != nil || !bytes.Equal(a, b) {
				return 0, fmt.Errorf("%s %q exists in both and differs; delete one of them, or rename it, then copy again", src.kind, src.nameOf(v))
			}
		}
	}
	for i, v := range todo {
		if err := dst.Put(v); err != nil {
			return i, err
		}
	}
	return len(todo), nil
}

// statusDir is the folder of the agents' status objects in the shared
// state: status/<agent>.json, each written by its agent alone.
const statusDir = "status"

// AgentStatus is the status object an agent of the cluster published.
type AgentStatus struct {
	// Agent is the agent's name; Time, when it wrote the object.
	Agent string
	Time  time.Time
	// Data is what it wrote.
	Data []byte
}

// PublishStatus writes data as this agent's status object, replacing the
// one it wrote before; a single agent's store has nowhere to publish.
func (s *Store) PublishStatus(data []byte) error {
	if s.shared == nil {
		return nil
	}
	return s.shared.root.Put(statusDir+"/"+s.shared.agent+".json", data)
}

// RemoveStatus removes this agent's status object: it is leaving the
// cluster, and the others stop counting its report at once.
func (s *Store) RemoveStatus() error {
	if s.shared == nil {
		return nil
	}
	return s.shared.root.Remove(statusDir + "/" + s.shared.agent + ".json")
}

// Statuses returns the status objects the other agents of the cluster
// published since newer than, by name; none for a single agent. Objects
// older than that (an agent killed, or gone for good) are not read.
func (s *Store) Statuses(newer time.Time) ([]AgentStatus, error) {
	if s.shared == nil {
		return nil, nil
	}
	root := s.shared.root
	entries, err := root.List(statusDir)
	if err != nil {
		return nil, fmt.Errorf("listing the agents' status: %w", err)
	}
	var out []AgentStatus
	for _, e := range entries {
		agent, ok := strings.CutSuffix(e.Name, ".json")
		if !ok || e.Dir || agent == s.shared.agent || e.ModTime.Before(newer) {
			continue
		}
		data, err := root.Read(statusDir + "/" + e.Name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the listing
		}
		if err != nil {
			return nil, fmt.Errorf("reading the status of agent %s: %w", agent, err)
		}
		out = append(out, AgentStatus{Agent: agent, Time: e.ModTime, Data: data})
	}
	return out, nil
}
