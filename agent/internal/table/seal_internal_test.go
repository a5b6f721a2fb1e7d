package table

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/objstoretest"
	"github.com/tributary-io/terraform-provider-tributary/agent/schema"
)

// TestSealDoesNotWaitForTheStore seals a data file whose store has not
// made it durable yet: Seal returns, the table can start the next file,
// and Wait returns the file's add action once the store is done, which
// then commits. A store that fails gives Wait its error, and the file is
// not left pending.
func TestSealDoesNotWaitForTheStore(t *testing.T) {
	ps := parquet.NewSchema("spark_schema", parquet.Group{"id": parquet.Optional(parquet.Int(64))})
	columns := []schema.Field{{Name: "id", Type: &schema.Type{Kind: schema.Long}, Nullable: true}}
	for _, fail := range []error{nil, errors.New("the store went away")} {
		s := objstoretest.NewHeldStore()
		s.Fail = fail
		opts, _ := Options{}.withDefaults()
		tb, err := openIn(s, opts, true)
		if err != nil {
			t.Fatal(err)
		}
		fw, err := tb.NewFile(ps)
		if err != nil {
			t.Fatal(err)
		}
		if err := fw.WriteColumns([][]parquet.Value{{parquet.Int64Value(1).Level(0, 1, 0), parquet.Int64Value(2).Level(0, 1, 0)}}, 2); err != nil {
			t.Fatal(err)
		}
		name := fw.Name()
		sealed := make(chan *SealedFile, 1)
		go func() {
			sf, err := fw.Seal()
			if err != nil {
				t.Error(err)
			}
			sealed <- sf
		}()
		var sf *SealedFile
		select {
		case sf = <-sealed:
		case <-time.After(10 * time.Second):
			t.Fatal("Seal waited for the store to make the file durable")
		}
		if sf == nil {
			t.FailNow()
		}
		next, err := tb.NewFile(ps) // the next file starts while the first uploads
		if err != nil {
			t.Fatal(err)
		}
		next.Abort()
		select {
		case <-sf.done:
			t.Fatal("the sealed file was done before the store made it durable")
		default:
		}
		short, stop := context.WithTimeout(context.Background(), 10*time.Millisecond)
		if _, err := sf.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Wait() on a context that ends before the store = %v, want its deadline", err)
		}
		stop()
		close(s.Release)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		add, err := sf.Wait(ctx)
		cancel()
		if fail != nil {
			if !errors.Is(err, fail) {
				t.Errorf("Wait() error = %v, want %v", err, fail)
			}
			tb.mu.Lock()
			_, pending := tb.pending[name]
			tb.mu.Unlock()
			if pending {
				t.Errorf("the failed file %s is still pending", name)
			}
		} else {
			if err != nil {
				t.Fatal(err)
			}
			if add.Path != name || add.NumRecords != 2 || add.Size == 0 {
				t.Errorf("Wait() = %+v, want %s with 2 records and a size", add, name)
			}
			if _, err := tb.Commit(Commit{Schema: columns, Files: []AddFile{add}}); err != nil {
				t.Fatal(err)
			}
			if got := tb.Snapshot().NumFiles; got != 1 {
				t.Errorf("the table has %d files after the commit, want 1", got)
			}
		}
		if sf.Held() != 0 {
			t.Errorf("Held() = %d once the file is done, want 0", sf.Held())
		}
		if err := tb.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
