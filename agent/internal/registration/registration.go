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

	poke   chan struct{}
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
	r := &Registrar{cat: cat, t: t, log: log.With("catalog", cat.Name),
		poke: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
	go r.run(ctx)
	return r
}

// Committed tells the registrar the table has a new commit. It never
// waits.
func (r *Registrar) Committed() {
	r.mu.Lock()
	mr := r.runner
	r.mu.Unlock()
	if mr != nil {
		mr.Committed()
	}
	select {
	case r.poke <- struct{}{}:
	default:
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
		case <-r.poke:
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

// registerDelta registers t in the metastore at uri.
func registerDelta(ctx context.Context, uri string, t Table) error {
	c, err := hivemeta.New(uri)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Register(ctx, t.Schema, t.Name, metastoreLocation(t.Location))
}

// newMirror returns the Iceberg mirror of t in the catalog rest.
func newMirror(ctx context.Context, rest *spec.IcebergREST, t Table) (*mirror.Mirror, error) {
	c, err := icebergrest.New(ctx, icebergrest.Config{URI: rest.URI, Warehouse: rest.Warehouse, Token: rest.Token})
	if err != nil {
		return nil, err
	}
	return mirror.New(mirror.Target{Catalog: c, Namespace: []string{t.Schema}, Name: t.Name, Location: t.Location})
}

// Drop drops t's registrations in cat, keeping every file: the Iceberg
// table without purge, the metastore's table without its data. What does
// not exist is no error.
func Drop(ctx context.Context, cat *spec.Catalog, t Table) error {
	var errs []error
	if rest := cat.IcebergREST; rest != nil {
		c, err := icebergrest.New(ctx, icebergrest.Config{URI: rest.URI, Warehouse: rest.Warehouse, Token: rest.Token})
		if err == nil {
			err = c.DropTable(ctx, []string{t.Schema}, t.Name)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("dropping %s.%s from the iceberg REST catalog: %w", t.Schema, t.Name, err))
		}
	}
	if h := cat.HiveMetastore; h != nil {
		c, err := hivemeta.New(h.URI)
		if err == nil {
			err = c.Drop(ctx, t.Schema, t.Name)
			_ = c.Close()
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
