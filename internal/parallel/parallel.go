// Package parallel runs independent work on all cores.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For runs f(0), …, f(n−1) on up to GOMAXPROCS goroutines and waits. Each
// index must be independent of the others and write only its own results, so
// that the outcome does not depend on the schedule or the number of CPUs.
func For(n int, f func(i int)) {
	workers := Workers(n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	var next atomic.Int64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}

// Workers returns how many goroutines For and Ordered use for n tasks:
// min(GOMAXPROCS, n), at least 1.
func Workers(n int) int { return max(1, min(runtime.GOMAXPROCS(0), n)) }

// Ordered runs work(i, slot) for i = 0, …, n−1 on Workers(n) goroutines and
// then reduce(i, slot) for each i in increasing order of i, one at a time.
// slot in [0, Workers(n)) names the goroutine, so that work can write into
// per-worker scratch that reduce then folds into a shared result: a sum
// accumulated this way adds its terms in index order, so it is the same
// bit for bit on any number of CPUs, with memory for Workers(n) terms
// instead of n. reduce(i, …) runs after work(i, …) and before the same slot
// is handed index i' > i.
func Ordered(n int, work func(i, slot int), reduce func(i, slot int)) {
	OrderedOn(Workers(n), n, work, reduce)
}

// OrderedOn is Ordered on at most `workers` goroutines (slots 0…workers−1).
func OrderedOn(workers, n int, work func(i, slot int), reduce func(i, slot int)) {
	workers = max(1, min(workers, n))
	if workers <= 1 {
		for i := 0; i < n; i++ {
			work(i, 0)
			reduce(i, 0)
		}
		return
	}
	var (
		next atomic.Int64
		mu   sync.Mutex
		turn = sync.NewCond(&mu)
		done int // indices reduced so far
		wg   sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				// Indices are claimed in increasing order, so the index whose
				// turn it is always belongs to a goroutine that can reach it.
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				work(i, w)
				mu.Lock()
				for done != i {
					turn.Wait()
				}
				mu.Unlock()
				reduce(i, w)
				mu.Lock()
				done++
				turn.Broadcast()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}
