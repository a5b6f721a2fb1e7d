package memory_test

import (
	"context"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/memory"
)

// fakeClock is a clock that moves only when a test moves it.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time       { return c.t }
func (c *fakeClock) pass(d time.Duration) { c.t = c.t.Add(d) }
func newClocked(limit int64) (*memory.Budget, *fakeClock) {
	c := &fakeClock{t: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	b := memory.New(limit)
	b.SetClock(c.now)
	return b, c
}

// pressedAt fails the test unless b.Pressed answers want after the clock
// moved by d.
func pressedAt(t *testing.T, b *memory.Budget, c *fakeClock, d time.Duration, want bool) {
	t.Helper()
	c.pass(d)
	if got := b.Pressed(); got != want {
		t.Fatalf("at %s: Pressed() = %v, want %v", c.t.Format("15:04:05.000"), got, want)
	}
}

// A budget whose fetches wait for room for three quarters of the window is
// pressed, not before; once room is back it stays pressed until it was
// full for at most a quarter of the window.
func TestPressedAfterSustainedWaiting(t *testing.T) {
	ctx := context.Background()
	b, c := newClocked(10)
	if err := b.Acquire(ctx, 10); err != nil {
		t.Fatal(err)
	}
	pressedAt(t, b, c, 20*time.Second, false) // full, but nothing waits
	waiter := acquire(t, ctx, b, 4)
	pressedAt(t, b, c, 22*time.Second, false)
	pressedAt(t, b, c, time.Second, true) // waiting 23 s of the last 30
	b.Release(10)
	granted(t, waiter, "4 bytes once 10 are released")
	pressedAt(t, b, c, 10*time.Second, true)  // waited 19 s of the last 30: between the bounds
	pressedAt(t, b, c, 15*time.Second, false) // waited 4 s of the last 30
	pressedAt(t, b, c, time.Hour, false)
}

// A spike, however full, is not pressure; a budget full for a long time
// with no call at all is pressed at the first call after, and the count
// does not hold on to what is older than the window.
func TestPressedSpikeAndSilence(t *testing.T) {
	for _, tc := range []struct {
		name string
		// full is how long the budget is past its limit; then it answers
		// pressed, and after the time after with room, later.
		full, after    time.Duration
		pressed, later bool
	}{
		{name: "a 20 s spike", full: 20 * time.Second, after: 5 * time.Second},
		{name: "a day full", full: 24 * time.Hour, pressed: true, after: 31 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, c := newClocked(10)
			b.Grow(50)
			pressedAt(t, b, c, tc.full, tc.pressed)
			b.Release(50)
			pressedAt(t, b, c, tc.after, tc.later)
		})
	}
}

// A budget full most of the time, with short breaks (as when each release
// lets a waiting fetch through before the next one waits), is pressed; one
// full half of the time keeps its answer.
func TestPressedWithBreaks(t *testing.T) {
	b, c := newClocked(10)
	cycle := func(n int, full, free time.Duration) {
		for range n {
			b.Grow(11)
			c.pass(full)
			b.Release(11)
			c.pass(free)
		}
	}
	cycle(40, 900*time.Millisecond, 100*time.Millisecond)
	pressedAt(t, b, c, 0, true)
	cycle(60, 500*time.Millisecond, 500*time.Millisecond)
	pressedAt(t, b, c, 0, true)
	cycle(60, 100*time.Millisecond, 900*time.Millisecond)
	pressedAt(t, b, c, 0, false)
	cycle(60, 500*time.Millisecond, 500*time.Millisecond)
	pressedAt(t, b, c, 0, false)
}
