package runner

import "time"

// Clock holds the timers of a table loop or fanout run.
type Clock struct {
	// Flush fires a flush interval after the first buffered record; it
	// is stopped until then.
	Flush *time.Timer
	// Discover ticks at each partition discovery; nil without discovery,
	// and stopDiscover stops it.
	Discover     <-chan time.Time
	stopDiscover func()
	// GC ticks at each garbage collection: files a crash left behind
	// become collectable only after the grace period, so collection also
	// runs while the loop does.
	GC *time.Ticker
}

// NewClock returns the timers of a loop that discovers partitions
// every discoverEvery (never when 0) and whose tables' grace period is
// gcGrace.
func NewClock(discoverEvery, gcGrace time.Duration) *Clock {
	c := &Clock{Flush: time.NewTimer(time.Hour), GC: time.NewTicker(gcGrace / 4)}
	c.Discover, c.stopDiscover = DiscoverTicks(discoverEvery)
	c.Flush.Stop()
	return c
}

// Stop stops the timers.
func (c *Clock) Stop() {
	c.Flush.Stop()
	c.stopDiscover()
	c.GC.Stop()
}
