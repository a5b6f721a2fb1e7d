package table

import (
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/table/storage"
)

// racingStore is a store on which another writer creates the table right
// after the first listing of the log: the race two agents run on an object
// store when both open a new table at once.
type racingStore struct {
	storage.Store
	raced bool
}

func (s *racingStore) List(dir string) ([]storage.Entry, error) {
	entries, err := s.Store.List(dir)
	if dir == logDir && !s.raced {
		s.raced = true
		for _, name := range []string{logPath(0), newDataFileName("snappy")} {
			if perr := s.PutIfAbsent(name, []byte("{}")); perr != nil {
				return nil, perr
			}
		}
	}
	return entries, err
}

// TestCheckFolderRace checks that a folder in which another writer creates
// the table while it is being checked is a table, not foreign data.
func TestCheckFolderRace(t *testing.T) {
	local, err := storage.Open(t.TempDir(), DefaultFileMode)
	if err != nil {
		t.Fatal(err)
	}
	s := &racingStore{Store: local}
	if err := checkFolder(s); err != nil {
		t.Fatalf("checkFolder with a table created during the check: %v", err)
	}
}
