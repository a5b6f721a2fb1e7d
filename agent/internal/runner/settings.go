package runner

import (
	"log/slog"
	"os"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/maintenance"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table"
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
