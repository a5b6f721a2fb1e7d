package runner

import "sync"

// SideBySide calls f(k) for every k below n, each on a goroutine of its
// own and at most limit at a time, and returns the error of each call, by
// k, once every call returned.
func SideBySide(n, limit int, f func(k int) error) []error {
	errs := make([]error, n)
	slots := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for k := range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			errs[k] = f(k)
		})
	}
	wg.Wait()
	return errs
}
