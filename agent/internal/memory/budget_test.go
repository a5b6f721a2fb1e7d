package memory_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
)

// acquire starts b.Acquire(ctx, n) in a goroutine, waits until it either
// returned or waits in line (the budget counted a pause), and returns the
// channel its result arrives on.
func acquire(t *testing.T, ctx context.Context, b *memory.Budget, n int64) <-chan error {
	t.Helper()
	pauses := b.Stats().Pauses
	done := make(chan error, 1)
	go func() { done <- b.Acquire(ctx, n) }()
	for b.Stats().Pauses == pauses {
		select {
		case err := <-done:
			done <- err
			return done
		default:
			runtime.Gosched()
		}
	}
	return done
}

// waiting fails the test unless the Acquire behind done is still waiting:
// an Acquire that waits in line returns only once granted (or cancelled),
// so this holds until something releases.
func waiting(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("%s returned (%v), want it to wait", what, err)
	default:
	}
}

func granted(t *testing.T, done <-chan error, what string) {
	t.Helper()
	if err := <-done; err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func used(t *testing.T, b *memory.Budget, want int64) {
	t.Helper()
	if got := b.Stats().Used; got != want {
		t.Fatalf("used %d, want %d", got, want)
	}
}

// asked reports whether a was asked to flush, consuming the request.
func asked(a *memory.Account) bool {
	select {
	case <-a.Flush():
		return true
	default:
		return false
	}
}

func TestAcquireWaitsUntilReleased(t *testing.T) {
	ctx := context.Background()
	b := memory.New(10)
	if err := b.Acquire(ctx, 6); err != nil {
		t.Fatal(err)
	}
	if err := b.Acquire(ctx, 4); err != nil { // exactly the limit fits
		t.Fatal(err)
	}
	done := acquire(t, ctx, b, 3)
	waiting(t, done, "an acquisition over the limit")
	b.Release(2)
	waiting(t, done, "3 bytes with 2 free")
	b.Release(4)
	granted(t, done, "3 bytes with 6 free")
	used(t, b, 7)
	if st := b.Stats(); st.Pauses != 1 || st.Limit != 10 {
		t.Fatalf("stats %+v, want 1 pause and limit 10", st)
	}
}

// Waiters are served first come, first served: a small acquisition that
// would fit does not overtake a bigger one that waits before it.
func TestAcquireIsFirstComeFirstServed(t *testing.T) {
	ctx := context.Background()
	b := memory.New(10)
	if err := b.Acquire(ctx, 10); err != nil {
		t.Fatal(err)
	}
	big := acquire(t, ctx, b, 8)
	small := acquire(t, ctx, b, 2)
	b.Release(2)
	waiting(t, small, "2 bytes behind a waiting 8")
	waiting(t, big, "8 bytes with 2 free")
	used(t, b, 8)
	// A newcomer queues behind them even when it would fit.
	b.Release(8)
	granted(t, big, "8 bytes first")
	granted(t, small, "then 2 bytes")
	used(t, b, 10)
}

// An acquisition larger than the whole limit is granted once nothing else
// is held, and while it is held nothing else fits.
func TestAcquireOverTheLimit(t *testing.T) {
	ctx := context.Background()
	b := memory.New(10)
	if err := b.Acquire(ctx, 25); err != nil {
		t.Fatal(err)
	}
	after := acquire(t, ctx, b, 1)
	waiting(t, after, "an acquisition while the budget is overdrawn")
	b.Release(25)
	granted(t, after, "1 byte once the big one is released")

	huge := acquire(t, ctx, b, 25)
	waiting(t, huge, "25 bytes while 1 is held")
	b.Release(1)
	granted(t, huge, "25 bytes once nothing is held")
	used(t, b, 25)
}

// A cancelled acquisition takes nothing, and those behind it move up.
func TestAcquireCancelled(t *testing.T) {
	b := memory.New(10)
	if err := b.Acquire(context.Background(), 8); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	first := acquire(t, ctx, b, 5)
	second := acquire(t, context.Background(), b, 2)
	waiting(t, second, "2 bytes behind a waiting 5")
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled acquisition returned %v", err)
	}
	granted(t, second, "2 bytes once the 5 before it gave up")
	used(t, b, 10)

	// A context that ended before the call takes nothing either.
	if err := b.Acquire(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("acquisition on an ended context returned %v", err)
	}
	used(t, b, 10)
}

// When a waiting acquisition does not fit, the account holding the most is
// asked to flush, and only as many accounts as it takes to make room.
func TestBiggestAccountIsAskedFirst(t *testing.T) {
	ctx := context.Background()
	b := memory.New(100)
	small, big, medium := b.NewAccount(), b.NewAccount(), b.NewAccount()
	small.Set(10)
	big.Set(50)
	medium.Set(30)
	done := acquire(t, ctx, b, 20)
	if !asked(big) || asked(medium) || asked(small) {
		t.Fatal("want only the biggest account asked to flush")
	}
	// Growing the asked account does not ask another one.
	big.Set(55)
	if asked(medium) || asked(small) {
		t.Fatal("an account was asked while the biggest flushes")
	}
	waiting(t, done, "20 bytes while the biggest account has not flushed")
	big.Set(0)
	granted(t, done, "20 bytes once the biggest account flushed")
	used(t, b, 60)
	if st := b.Stats(); st.Files != 40 || st.Flushes != 1 {
		t.Fatalf("stats %+v, want 40 bytes in files and 1 flush asked", st)
	}

	// Once it has flushed, the account may be asked again: here by going
	// back over the limit, with nobody waiting.
	big.Set(45)
	if !asked(big) || asked(medium) || asked(small) {
		t.Fatal("want the biggest account asked again")
	}
	big.Close()
	medium.Close()
	small.Close()
	b.Release(20)
	used(t, b, 0)
}

// While open files hold less than half the budget, fetched data fills it:
// the waiter waits for it to be written rather than have small files
// flushed, unless the files alone keep it out.
func TestFilesUnderHalfAreNotFlushed(t *testing.T) {
	ctx := context.Background()
	b := memory.New(100)
	a := b.NewAccount()
	a.Set(20)
	if err := b.Acquire(ctx, 70); err != nil {
		t.Fatal(err)
	}
	done := acquire(t, ctx, b, 20)
	if asked(a) {
		t.Fatal("a file under half the budget was asked to flush")
	}
	b.Release(70)
	granted(t, done, "20 bytes once fetched data is written")

	// 45 bytes of files keep out an acquisition of 60.
	a.Set(45)
	b.Release(20)
	done = acquire(t, ctx, b, 60)
	if !asked(a) {
		t.Fatal("want the file asked to flush when it alone keeps the waiter out")
	}
	a.Set(0)
	granted(t, done, "60 bytes once the file flushed")
}

// An acquisition over the limit asks every account to flush; growing past
// the limit asks the biggest.
func TestOverdrawAsksForFlushes(t *testing.T) {
	ctx := context.Background()
	b := memory.New(10)
	x, y := b.NewAccount(), b.NewAccount()
	x.Set(3)
	y.Set(2)
	done := acquire(t, ctx, b, 25)
	if !asked(x) || !asked(y) {
		t.Fatal("want every account asked to flush for an acquisition over the limit")
	}
	x.Set(0)
	waiting(t, done, "25 bytes while an account still holds some")
	y.Close()
	granted(t, done, "25 bytes once nothing else is held")
	b.Release(25)

	x.Set(6)
	b.Grow(5)
	if len(x.Flush()) != 1 {
		t.Fatal("want the biggest account asked to flush once Grow went past the limit")
	}
	// A request the holder has not seen yet is answered by a flush made
	// for another reason (its size or its interval).
	x.Set(0)
	if asked(x) {
		t.Fatal("a request answered by a flush is still pending")
	}
	b.Release(5)
	used(t, b, 0)
}

// Fetchers and tables as the agent runs them: fetchers acquire and hand
// their bytes to a table, whose loop releases them into its open file and
// flushes when asked. Nobody deadlocks, every fetcher gets through (first
// come, first served), and once all is done nothing is held.
func TestBudgetUnderLoad(t *testing.T) {
	const (
		tables, fetchersPerTable, fetches = 4, 4, 200
		limit                             = 1000
	)
	ctx := context.Background()
	b := memory.New(limit)
	var fetchers sync.WaitGroup
	var loops sync.WaitGroup
	for tbl := range tables {
		batches := make(chan int64, 2)
		acc := b.NewAccount()
		loops.Go(func() {
			defer acc.Close()
			var held int64
			for {
				select {
				case n, ok := <-batches:
					if !ok {
						return
					}
					b.Release(n)
					held += n / 2 // what the file keeps of it
					acc.Set(held)
				case <-acc.Flush():
					held = 0
					acc.Set(0)
				}
			}
		})
		var senders sync.WaitGroup
		for f := range fetchersPerTable {
			senders.Go(func() {
				rnd := rand.New(rand.NewPCG(uint64(tbl), uint64(f)))
				for range fetches {
					n := 1 + rnd.Int64N(limit/4)
					if rnd.IntN(50) == 0 {
						n = limit + 1 // now and then more than the whole budget
					}
					if err := b.Acquire(ctx, n); err != nil {
						t.Error(err)
						return
					}
					batches <- n
				}
			})
		}
		fetchers.Go(func() {
			senders.Wait()
			close(batches)
		})
	}
	fetchers.Wait()
	loops.Wait()
	st := b.Stats()
	t.Logf("%+v", st)
	if st.Used != 0 || st.Files != 0 {
		t.Fatalf("everything was released and every account closed, yet %+v", st)
	}
	if st.Pauses == 0 || st.Flushes == 0 {
		t.Fatalf("want acquisitions that waited and flushes asked: %+v", st)
	}
}

// TryAcquire takes what fits at once, never behind a waiting Acquire, and
// never asks an account to flush: background work gives way to fetches.
func TestTryAcquire(t *testing.T) {
	ctx := context.Background()
	b := memory.New(10)
	a := b.NewAccount()
	defer a.Close()
	a.Set(6)
	if !b.TryAcquire(4) {
		t.Fatal("4 bytes of 4 free not taken")
	}
	used(t, b, 10)
	if b.TryAcquire(1) || asked(a) {
		t.Fatal("a full budget gave a byte, or asked the account to flush")
	}
	b.Release(4)
	fetch := acquire(t, ctx, b, 5) // waits: 4 free
	if b.TryAcquire(1) {
		t.Error("took a byte ahead of a waiting Acquire")
	}
	a.Set(0)
	granted(t, fetch, "the waiting fetch")
	if !b.TryAcquire(5) {
		t.Error("5 bytes of 5 free not taken")
	}
	used(t, b, 10)
}
