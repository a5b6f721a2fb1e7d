package memory

import "time"

// SetClock makes b count its pressure on the clock now, from now on.
func (b *Budget) SetClock(now func() time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pressure = newPressure(now)
	b.observe()
}
