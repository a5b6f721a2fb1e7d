package memory

import "time"

// PressureWindow is the time over which [Budget.Pressed] judges whether a
// budget is under pressure: long enough that a burst (a backlog read at
// start, one large batch) is not taken for an agent holding more than it
// can.
const PressureWindow = 30 * time.Second

// pressureSlots is how many slots the window is counted in: the window
// judged is the last 29 to 30 of them, and the budget's bookkeeping stays
// this small however often it fills and empties.
const pressureSlots = 30

// pressureSlot is the length of one slot.
const pressureSlot = PressureWindow / pressureSlots

// pressure counts how long a budget was full in each slot of the last
// PressureWindow. The budget's mutex guards it.
type pressure struct {
	now    func() time.Time
	origin time.Time
	// full says whether the budget has been full since since, the time
	// (from origin) up to which the full time is counted.
	full  bool
	since time.Duration
	// slot is the number of the slot since falls in; slots holds the full
	// time of slot s at s % pressureSlots, for the slots up to slot.
	slot  int64
	slots [pressureSlots]time.Duration
	// pressed is the last answer of Pressed.
	pressed bool
}

// newPressure returns a count starting now on the clock now.
func newPressure(now func() time.Time) pressure {
	return pressure{now: now, origin: now()}
}

// set records that from now on the budget is full or not.
func (p *pressure) set(full bool) {
	if full != p.full {
		p.count()
		p.full = full
	}
}

// count adds the full time up to now to the slots it falls in.
func (p *pressure) count() {
	to := p.now().Sub(p.origin)
	// Only the last window matters.
	p.since = max(p.since, to-PressureWindow)
	for p.since < to {
		s := int64(p.since / pressureSlot)
		p.move(s)
		end := min(to, time.Duration(s+1)*pressureSlot)
		if p.full {
			p.slots[s%pressureSlots] += end - p.since
		}
		p.since = end
	}
	p.move(int64(to / pressureSlot))
}

// move makes slot s the last one, emptying those it passes.
func (p *pressure) move(s int64) {
	if s-p.slot >= pressureSlots {
		clear(p.slots[:])
	} else {
		for k := p.slot + 1; k <= s; k++ {
			p.slots[k%pressureSlots] = 0
		}
	}
	p.slot = max(p.slot, s)
}

// Pressed reports whether the budget is under pressure: holding about all
// it can, for a sustained time rather than a moment. The budget is full
// while a fetch waits for room or while more than the limit is held
// (memory already in hand, or open files past it). Pressed turns true once
// the budget was full for at least three quarters of the last
// [PressureWindow], and false again once it was full for at most a
// quarter of it; in between it keeps its last answer, so that a budget
// full half of the time does not flip from one call to the next.
//
// An agent under pressure holds as many partitions as its memory allows:
// a cluster gives it no more (see membership.Joiner.Pressed).
func (b *Budget) Pressed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := &b.pressure
	p.count()
	var full time.Duration
	for _, d := range p.slots {
		full += d
	}
	switch {
	case full >= PressureWindow/4*3:
		p.pressed = true
	case full <= PressureWindow/4:
		p.pressed = false
	}
	return p.pressed
}

// observe records whether the budget is full now; b.mu is held.
func (b *Budget) observe() {
	b.pressure.set(len(b.waiters) > 0 || b.used > b.limit)
}
