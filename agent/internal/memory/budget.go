// Package memory is the agent's one memory budget: every table of every
// pipeline draws its fetched data and its open files' buffers from one
// [Budget], so the agent's buffers stay under one limit however many tables
// it runs.
//
// Two kinds of holders share a Budget:
//
//   - Fetchers [Budget.Acquire] bytes before each fetch, waiting in line
//     (first come, first served) while the budget is full, so fetching pauses
//     rather than growing memory. What a fetch returned is released once its
//     table has written it.
//   - Tables record the bytes their open file buffers in an [Account], which
//     never waits: a table must always be able to write what it fetched, and
//     to flush. A table's pool of decoders records in an Account of its own
//     what its idle decoders keep, and drops them when asked to flush.
//
// When what waits does not fit, the budget asks the account holding the most
// to flush (its table closes and commits the file, as at its flush
// interval), then the next biggest, until it would fit. It asks only once
// open files hold at least half the limit, or when they alone keep the
// waiting fetch out: below that, most of the budget is fetched data that the
// tables are writing, and flushing small files would only make small files.
//
// A fetch larger than the whole limit is granted once nothing else is held,
// so that no record batch is too big to read.
//
// A budget full for a sustained time (fetches waiting for room most of the
// time) says so through [Budget.Pressed]: the agent then holds as many
// partitions as it can, and a cluster of agents gives it no more.
package memory

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Budget is a number of bytes shared by fetchers and accounts. It is safe
// for concurrent use.
type Budget struct {
	limit int64

	mu sync.Mutex
	// used counts every byte acquired, grown or held by an account; held
	// counts the accounts' part, and relief the part of the accounts asked
	// to flush.
	used, held, relief int64
	// waiters are the Acquire calls that wait, first come first served.
	waiters  []*waiter
	accounts []*Account
	pauses   int64
	flushes  int64
	// pressure counts how long the budget was full lately.
	pressure pressure
}

// waiter is one Acquire call waiting for n bytes; ready is closed once they
// are granted.
type waiter struct {
	n     int64
	ready chan struct{}
}

// New returns a budget of limit bytes; limit must be positive.
func New(limit int64) *Budget {
	if limit <= 0 {
		panic("memory: the limit of a budget must be positive")
	}
	return &Budget{limit: limit, pressure: newPressure(time.Now)}
}

// Stats is a budget's state at one moment.
type Stats struct {
	// Limit is the budget's size in bytes.
	Limit int64
	// Used is the bytes held: acquired by fetches, and in open files.
	Used int64
	// Files is the part of Used that accounts hold: open files' buffers,
	// and what tables' idle decoders keep.
	Files int64
	// Pauses counts the acquisitions that had to wait.
	Pauses int64
	// Flushes counts the times an account was asked to flush.
	Flushes int64
}

// Stats returns the budget's current state.
func (b *Budget) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stats{Limit: b.limit, Used: b.used, Files: b.held, Pauses: b.pauses, Flushes: b.flushes}
}

// Acquire takes n bytes, waiting while they do not fit and while earlier
// calls wait. n may exceed the limit: it is then granted once nothing else
// is held. When ctx ends first, Acquire takes nothing and returns ctx's
// error.
func (b *Budget) Acquire(ctx context.Context, n int64) error {
	b.mu.Lock()
	if len(b.waiters) == 0 && b.fits(n) {
		b.used += n
		b.observe()
		b.mu.Unlock()
		return nil
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.pauses++
	b.relieve()
	b.observe()
	b.mu.Unlock()

	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready: // granted meanwhile: give it back
		b.used -= n
	default:
		b.waiters = slices.DeleteFunc(b.waiters, func(o *waiter) bool { return o == w })
	}
	// Whoever waited behind w may fit now.
	b.grant()
	return ctx.Err()
}

// TryAcquire takes n bytes if they fit now and no Acquire call waits, and
// reports whether it took them. It never waits and never asks an account
// to flush: background work (a compaction) that takes memory this way
// gives way to ingestion, whose fetches it never queues ahead of.
func (b *Budget) TryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.waiters) > 0 || !b.fits(n) {
		return false
	}
	b.used += n
	b.observe()
	return true
}

// Grow takes n bytes at once, past the limit if need be: for memory already
// in hand, such as a fetch response larger than what was acquired for it.
// Going past the limit asks the biggest accounts to flush.
func (b *Budget) Grow(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used += n
	b.relieve()
	b.observe()
}

// Release gives back n bytes taken by Acquire or Grow.
func (b *Budget) Release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	if b.used < 0 {
		panic("memory: released more than was taken")
	}
	b.grant()
}

// fits reports whether n more bytes fit: within the limit, or, for more
// than the limit, when nothing is held.
func (b *Budget) fits(n int64) bool {
	return b.used+n <= b.limit || b.used == 0
}

// grant hands bytes to the waiters that fit, in order, then asks for
// flushes if the first one left still does not fit.
func (b *Budget) grant() {
	for len(b.waiters) > 0 && b.fits(b.waiters[0].n) {
		w := b.waiters[0]
		b.waiters[0] = nil
		b.waiters = b.waiters[1:]
		b.used += w.n
		close(w.ready)
	}
	b.relieve()
	b.observe()
}

// relieve asks accounts to flush, biggest first, until the first waiter
// would fit (or, with none waiting, the budget is back within its limit)
// once those asked have flushed. It asks only while open files hold at
// least half the limit, or when the files alone keep the waiter out.
func (b *Budget) relieve() {
	// need must fit besides what is held; more than the limit fits only
	// once nothing is held, as the limit does.
	var need int64
	if len(b.waiters) > 0 {
		need = min(b.waiters[0].n, b.limit)
	}
	for {
		after := b.used - b.relief // held once the asked accounts flushed
		files := b.held - b.relief
		if after+need <= b.limit || files == 0 {
			return
		}
		if files < b.limit/2 && files+need <= b.limit {
			return // fetched data fills the budget: wait for it to be written
		}
		a := b.biggest()
		if a == nil {
			return
		}
		a.asked = true
		b.relief += a.held
		b.flushes++
		select {
		case a.flush <- struct{}{}:
		default: // already asked
		}
	}
}

// biggest returns the account holding the most among those not yet asked
// to flush, or nil when none holds anything.
func (b *Budget) biggest() *Account {
	var top *Account
	for _, a := range b.accounts {
		if !a.asked && a.held > 0 && (top == nil || a.held > top.held) {
			top = a
		}
	}
	return top
}

// Account is what one holder that can flush (a table, for its open file)
// holds of a budget. The holder sets what it holds as it changes and
// flushes when [Account.Flush] asks it to. An Account is safe for
// concurrent use.
type Account struct {
	b     *Budget
	held  int64
	asked bool // asked to flush, and has not yet
	flush chan struct{}
}

// NewAccount returns an account of b holding nothing. End it with
// [Account.Close].
func (b *Budget) NewAccount() *Account {
	a := &Account{b: b, flush: make(chan struct{}, 1)}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.accounts = append(b.accounts, a)
	return a
}

// Set records that the holder now holds n bytes. It never waits, even past
// the limit: the budget then asks the biggest holders to flush. Setting 0
// after a flush answers the budget's request, if any.
func (a *Account) Set(n int64) {
	b := a.b
	b.mu.Lock()
	defer b.mu.Unlock()
	a.set(n)
	b.grant()
}

// set is Set with b.mu held.
func (a *Account) set(n int64) {
	b := a.b
	delta := n - a.held
	a.held = n
	b.held += delta
	b.used += delta
	if !a.asked {
		return
	}
	b.relief += delta
	if n == 0 {
		a.asked = false
		select {
		case <-a.flush: // a request not yet seen is answered
		default:
		}
	}
}

// Flush returns the channel on which the budget asks the holder to flush
// everything the account holds, then Set 0.
func (a *Account) Flush() <-chan struct{} { return a.flush }

// Close gives back what the account holds and removes it from its budget.
func (a *Account) Close() {
	b := a.b
	b.mu.Lock()
	defer b.mu.Unlock()
	a.set(0)
	b.accounts = slices.DeleteFunc(b.accounts, func(o *Account) bool { return o == a })
	b.grant()
}
