package runner

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// SideBySide runs every call, never more than the limit at once, and
// returns each call's error at its index.
func TestSideBySide(t *testing.T) {
	var running, most atomic.Int32
	errs := SideBySide(9, 3, func(k int) error {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		if k%4 == 1 {
			return fmt.Errorf("call %d", k)
		}
		return nil
	})
	if most.Load() > 3 {
		t.Errorf("%d calls ran at once, want at most 3", most.Load())
	}
	for k, err := range errs {
		if want := k%4 == 1; (err != nil) != want || (want && err.Error() != fmt.Sprintf("call %d", k)) {
			t.Errorf("error %d = %v", k, err)
		}
	}
	if errs := SideBySide(0, 3, func(int) error { return errors.New("never") }); len(errs) != 0 {
		t.Errorf("no calls gave %v", errs)
	}
}
