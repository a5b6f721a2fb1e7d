package runner

import (
	"log/slog"
	"os"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/maintenance"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/registration"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// Settings are the settings of a table loop, or fanout run, that come
// from its pipeline and the agent's configuration.
type Settings struct {
	// FlushEvery is the longest a buffered record waits for its commit.
	FlushEvery time.Duration
	// MaxRows and MaxBytes bound a data file.
	MaxRows  int64
	MaxBytes int64
	// Continuous is false for a triggered pipeline, which reads up to the
	// end offsets it found at its start.
	Continuous bool
	// GCGrace is how old an unreferenced file of the agent must be before
	// garbage collection deletes it.
	GCGrace time.Duration
	// FileMode is the permission of new files in local table folders (see
	// [table.Options.FileMode]); 0 is the table's default.
	FileMode os.FileMode
	// Compact, MinSmallFiles and Vacuum are the pipeline's auto_compact,
	// auto_compact_min_files and auto_vacuum.
	Compact       bool
	MinSmallFiles int
	Vacuum        bool
	// Catalog, when the tables' destination_catalog names a catalog, is
	// where they are registered, as Schema (their destination_schema) and
	// their name.
	Catalog *spec.Catalog
	Schema  string
}

// Upkeep is what the agent that maintains a table runs beside its
// writer: the maintenance of its files and its registration in its
// catalog.
type Upkeep struct {
	// Maintenance is the maintenance's options (see package maintenance).
	Maintenance maintenance.Options
	// Catalog, when set, is where Table is registered (see package
	// registration).
	Catalog *spec.Catalog
	Table   registration.Table
}

// Upkeep returns the upkeep of the table name at dir, one the runner
// writes, whose compactions read within budget.
func (s *Settings) Upkeep(budget *memory.Budget, name, dir string) Upkeep {
	return Upkeep{Maintenance: s.Maintenance(budget), Catalog: s.Catalog,
		Table: registration.Table{Schema: s.Schema, Name: name, Location: dir}}
}

// Maintenance returns the options of the maintenance of a table the runner
// writes (see package maintenance), whose compactions read within budget.
func (s *Settings) Maintenance(budget *memory.Budget) maintenance.Options {
	return maintenance.Options{Compact: s.Compact, MinSmallFiles: s.MinSmallFiles, TargetSize: s.MaxBytes,
		Vacuum: s.Vacuum, Budget: budget}
}

// TableOptions returns the options of a table the runner opens, which owner
// describes (see [table.Options.Owner]).
func (s *Settings) TableOptions(owner string, log *slog.Logger) table.Options {
	return table.Options{Owner: owner, GCGrace: s.GCGrace, Logger: log, FileMode: s.FileMode}
}
