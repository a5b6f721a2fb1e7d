// Package registration keeps a table registered in the catalogs of its
// destination_catalog (a [spec.Catalog]): mirrored as an Iceberg table in
// an Iceberg REST catalog (package mirror), and named as an external Delta
// table in a Hive Metastore (package hivemeta).
//
// It sits beside the table's writer, after its log, on the one agent that
// maintains the table: a [Registrar] runs on a goroutine of its own, is
// told of each commit, and retries what fails every minute. A catalog that
// is down or refuses delays the registration, and its status says why;
// the table's ingestion never waits for it.
package registration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/hivemeta"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/icebergrest"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/mirror"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// RetryEvery is how often a registration that failed is tried again, and
// how often the Iceberg mirror syncs besides after commits.
const RetryEvery = time.Minute

// Table is a table to register.
type Table struct {
	// Schema and Name name it in the catalogs: its destination_schema
	// (the Iceberg namespace, the metastore database) and table name.
	Schema, Name string
	// Location is the table's folder, a path or a URL as [table.Open]
	// takes it.
	//
	// [table.Open]: github.com/tributary-io/terraform-provider-tributary/agent/internal/table
	Location string
}

// Registrar keeps one table registered in one catalog. Its methods are
// safe for concurrent use.
type Registrar struct {
	cat spec.Catalog
	t   Table
	log *slog.Logger

	cancel context.CancelFunc
	done   chan struct{}

	mu         sync.Mutex
	registered bool   // in the metastore
	hmsErr     string // why the last registration in the metastore failed
	icebergErr string // why the Iceberg mirror could not start
	runner     *mirror.Runner
}

// Start keeps t registered in cat until ctx ends or [Registrar.Stop].
func Start(ctx context.Context, cat spec.Catalog, t Table, log *slog.Logger) *Registrar {
	ctx, cancel := context.WithCancel(ctx)
	r := &Registrar{cat: cat, t: t, log: log.With("catalog", cat.Name), cancel: cancel, done: make(chan struct{})}
	go r.run(ctx)
	return r
}

// Committed tells the registrar the table has a new commit, which its
// Iceberg mirror follows. It never waits. A registration that failed is
// tried again on the minute, not on each commit, so that a catalog that is
// down is not asked after every flush of every table.
func (r *Registrar) Committed() {
	r.mu.Lock()
	mr := r.runner
	r.mu.Unlock()
	if mr != nil {
		mr.Committed()
	}
}

// Stop stops the registrar and its mirror, and waits for them.
func (r *Registrar) Stop() {
	r.cancel()
	<-r.done
}

// Status returns how the table's registrations stand.
func (r *Registrar) Status() spec.CatalogStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := spec.CatalogStatus{Name: r.cat.Name}
	if r.cat.HiveMetastore != nil {
		st.HiveMetastore = &spec.RegistrationStatus{Registered: r.registered, LastError: r.hmsErr}
	}
	if r.cat.IcebergREST != nil {
		st.Iceberg = &spec.IcebergMirrorStatus{DeltaVersion: -1, LastError: r.icebergErr}
		if r.runner != nil {
			m := r.runner.Status()
			st.Iceberg = &spec.IcebergMirrorStatus{DeltaVersion: m.Version, Lag: m.Lag, Snapshots: m.Snapshots,
				LastSync: m.LastSync, LastError: m.LastError}
		}
	}
	return st
}

func (r *Registrar) run(ctx context.Context) {
	defer close(r.done)
	var m *mirror.Mirror
	defer func() {
		r.mu.Lock()
		mr := r.runner
		r.mu.Unlock()
		if mr != nil {
			mr.Stop()
		}
		if m != nil {
			_ = m.Close()
		}
	}()
	tick := time.NewTicker(RetryEvery)
	defer tick.Stop()
	for {
		if r.cat.HiveMetastore != nil && !r.isRegistered() {
			err := registerDelta(ctx, r.cat.HiveMetastore.URI, r.t)
			if ctx.Err() != nil {
				return
			}
			r.mu.Lock()
			r.registered, r.hmsErr = err == nil, errText(err)
			r.mu.Unlock()
			if err != nil {
				r.log.Warn("cannot register the table in the hive metastore; ingestion goes on, and the agent tries again later", "err", err)
			} else {
				r.log.Info("table registered in the hive metastore")
			}
		}
		if r.cat.IcebergREST != nil && m == nil {
			var err error
			m, err = newMirror(ctx, r.cat.IcebergREST, r.t)
			if ctx.Err() != nil {
				return
			}
			r.mu.Lock()
			r.icebergErr = errText(err)
			if err == nil {
				r.runner = mirror.Start(ctx, m, mirror.Options{Every: RetryEvery, Log: r.log})
			}
			r.mu.Unlock()
			if err != nil {
				r.log.Warn("cannot start the table's Iceberg mirror; ingestion goes on, and the agent tries again later", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (r *Registrar) isRegistered() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.registered
}

// errText is err's message, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// callTimeout bounds each exchange with a catalog, so that one that does
// not answer holds neither a registrar nor an API call for long.
const callTimeout = 30 * time.Second

// restClient returns a client of the Iceberg REST catalog rest.
func restClient(ctx context.Context, rest *spec.IcebergREST) (*icebergrest.Client, error) {
	return icebergrest.New(ctx, icebergrest.Config{URI: rest.URI, Warehouse: rest.Warehouse, Token: rest.Token,
		HTTP: &http.Client{Timeout: callTimeout}})
}

// registerDelta registers t in the metastore at uri.
func registerDelta(ctx context.Context, uri string, t Table) error {
	c, err := hivemeta.New(uri)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return c.Register(ctx, t.Schema, t.Name, metastoreLocation(t.Location))
}

// newMirror returns the Iceberg mirror of t in the catalog rest.
func newMirror(ctx context.Context, rest *spec.IcebergREST, t Table) (*mirror.Mirror, error) {
	c, err := restClient(ctx, rest)
	if err != nil {
		return nil, err
	}
	return mirror.New(mirror.Target{Catalog: c, Namespace: []string{t.Schema}, Name: t.Name, Location: t.Location})
}

// DropTimeout bounds a [Drop] as a whole.
const DropTimeout = time.Minute

// Drop drops the registrations of tables in cat that are theirs, keeping
// every file: the Iceberg table without purge, the metastore's table
// without its data. A registration is a table's only when it names the
// table's location: a name the catalog gives another table (which the
// registrar refused to take over), and a table whose location is not
// known (""), are left alone. What does not exist is no error. It gives up
// after [DropTimeout].
func Drop(ctx context.Context, cat *spec.Catalog, tables []Table) error {
	ctx, cancel := context.WithTimeout(ctx, DropTimeout)
	defer cancel()
	var known []Table
	for _, t := range tables {
		if t.Location != "" {
			known = append(known, t)
		}
	}
	if len(known) == 0 {
		return nil
	}
	var errs []error
	if rest := cat.IcebergREST; rest != nil {
		errs = append(errs, dropIceberg(ctx, rest, known))
	}
	if h := cat.HiveMetastore; h != nil {
		errs = append(errs, dropMetastore(ctx, h.URI, known))
	}
	return errors.Join(errs...)
}

// dropIceberg drops those of tables the catalog rest holds at their
// location.
func dropIceberg(ctx context.Context, rest *spec.IcebergREST, tables []Table) error {
	c, err := restClient(ctx, rest)
	if err != nil {
		return fmt.Errorf("dropping from the iceberg REST catalog: %w", err)
	}
	var errs []error
	for _, t := range tables {
		ns := []string{t.Schema}
		meta, err := c.LoadTable(ctx, ns, t.Name)
		if errors.Is(err, icebergrest.ErrNotFound) {
			continue
		}
		if err == nil && strings.TrimSuffix(meta.Location, "/") != mirror.LocationURI(t.Location) {
			continue // another table's: never the agent's to drop
		}
		if err == nil {
			err = c.DropTable(ctx, ns, t.Name)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("dropping %s.%s from the iceberg REST catalog: %w", t.Schema, t.Name, err))
		}
	}
	return errors.Join(errs...)
}

// dropMetastore drops those of tables the metastore at uri holds as Delta
// tables at their location.
func dropMetastore(ctx context.Context, uri string, tables []Table) error {
	c, err := hivemeta.New(uri)
	if err != nil {
		return err
	}
	defer c.Close()
	var errs []error
	for _, t := range tables {
		got, err := c.GetTable(ctx, t.Schema, t.Name)
		if err == nil && (got == nil || got.Provider != "delta" || strings.TrimSuffix(got.Location, "/") != metastoreLocation(t.Location)) {
			continue // none, or another table's
		}
		if err == nil {
			err = c.Drop(ctx, t.Schema, t.Name)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// metastoreLocation is a table location as the metastore records it, for
// Spark and other engines to read: file: and the absolute path for a
// local folder (Hadoop's form); the URL without the agent's store options
// otherwise, with Hadoop's s3a scheme for S3.
func metastoreLocation(location string) string {
	uri := mirror.LocationURI(location)
	if path, ok := strings.CutPrefix(uri, "file://"); ok {
		return "file:" + path
	}
	if rest, ok := strings.CutPrefix(uri, "s3://"); ok {
		return "s3a://" + rest
	}
	return uri
}
