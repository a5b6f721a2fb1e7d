package kafka

import (
	"math/bits"
	"sync"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/record"
)

// Pools of the memory a [Batch] holds until [Batch.Release]: the buffers
// fetch responses are read into and compressed record batches are
// decompressed into, the records slices, and the slices record headers are
// cut from. They are shared by every fetcher of the agent.
var (
	bytePool   = newSlicePool[byte](1<<10, false)
	recordPool = newSlicePool[record.Record](64, true)
	headerPool = newSlicePool[record.Header](64, true)
)

// poolClasses is the number of size classes of a slicePool: four per
// doubling, so that a slice is at most a quarter larger than asked for,
// from the smallest class up to 16384 times it (16 MiB of bytes).
const poolClasses = 4*14 + 1

// slicePool hands out slices of T by size class. Class c holds slices of
// capacity classCap(c); larger slices are made and dropped rather than
// kept, and so are slices that did not come from the pool. Slices go
// around as *[]T so that putting one back does not allocate.
type slicePool[T any] struct {
	// quarter is a quarter of the smallest class's capacity.
	quarter int
	// pointers says T holds pointers, which put clears.
	pointers bool
	classes  [poolClasses]sync.Pool // of *[]T
}

// newSlicePool returns a pool whose smallest class holds slices of
// capacity smallest, a multiple of 4; pointers says T holds pointers.
func newSlicePool[T any](smallest int, pointers bool) *slicePool[T] {
	return &slicePool[T]{quarter: smallest / 4, pointers: pointers}
}

// classCap is the capacity of the slices of class c.
func (p *slicePool[T]) classCap(c int) int {
	return p.quarter * (4 + c%4) << (c / 4)
}

// classOf returns the class whose capacity is the smallest at least n when
// up is set, else the largest at most n; -1 when there is none in the pool.
func (p *slicePool[T]) classOf(n int, up bool) int {
	q := n / p.quarter // n in quarters of the smallest class, rounded down
	if up && q*p.quarter < n {
		q++
	}
	if q < 4 {
		if up {
			return 0
		}
		return -1
	}
	// q is m<<e with m in [4, 8): class 4e+m-4, or the next when up and
	// the bits below m are set.
	e := bits.Len(uint(q)) - 3
	c := 4*e + int(q>>e) - 4
	if up && q&(1<<e-1) != 0 {
		c++
	}
	if c >= poolClasses {
		return -1
	}
	return c
}

// get returns a slice of length 0 and capacity at least n.
func (p *slicePool[T]) get(n int) *[]T {
	c := p.classOf(n, true)
	if c < 0 {
		s := make([]T, 0, n)
		return &s
	}
	if s, ok := p.classes[c].Get().(*[]T); ok {
		return s
	}
	s := make([]T, 0, p.classCap(c))
	return &s
}

// put gives s back for another get to reuse; nothing may use it after.
// When T holds pointers, its elements up to its length are zeroed first, so
// that the pool keeps no memory alive through them. Bytes are not: zeroing
// the fetch buffers cost as much as a tenth of reading 1 KB records, and
// every get is written before it is read.
func (p *slicePool[T]) put(s *[]T) {
	if p.pointers {
		clear(*s)
	}
	*s = (*s)[:0]
	if c := p.classOf(cap(*s), false); c >= 0 {
		p.classes[c].Put(s)
	}
}
