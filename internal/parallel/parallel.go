// Package parallel runs independent work on all cores.
package parallel

import (
	"runtime"
	"sync"
)

// For runs f(0), …, f(n−1) on up to GOMAXPROCS goroutines and waits. Each
// index must be independent of the others and write only its own results, so
// that the outcome does not depend on the schedule or the number of CPUs.
func For(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
