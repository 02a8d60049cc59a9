package parallel

import (
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
)

// TestOrdered checks that every index is worked on once, that reduce sees
// the indices in increasing order one at a time, after their work, with the
// slot that did the work, and that a floating-point sum accumulated this way
// is the same bits as the serial sum, on one to four CPUs.
func TestOrdered(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	const n = 1000
	terms := make([]float64, n)
	for i := range terms {
		terms[i] = 1 / float64(3*i+1) // not exactly representable: the order of the sum shows
	}
	var serial float64
	for _, x := range terms {
		serial += x
	}
	for procs := 1; procs <= 4; procs++ {
		runtime.GOMAXPROCS(procs)
		slots := make([]float64, Workers(n))
		owner := make([]int, n)
		var order []int
		var inReduce atomic.Int32
		var sum float64
		Ordered(n, func(i, slot int) {
			owner[i] = slot
			slots[slot] = terms[i]
		}, func(i, slot int) {
			if inReduce.Add(1) != 1 {
				t.Errorf("GOMAXPROCS=%d: two reductions at once", procs)
			}
			if owner[i] != slot {
				t.Errorf("GOMAXPROCS=%d: index %d reduced with slot %d, worked on with %d", procs, i, slot, owner[i])
			}
			order = append(order, i)
			sum += slots[slot]
			inReduce.Add(-1)
		})
		want := make([]int, n)
		for i := range want {
			want[i] = i
		}
		if !slices.Equal(order, want) {
			t.Errorf("GOMAXPROCS=%d: reduce order %v…, want 0, 1, 2, …", procs, order[:min(10, len(order))])
		}
		if sum != serial {
			t.Errorf("GOMAXPROCS=%d: ordered sum %v, serial %v", procs, sum, serial)
		}
	}
}

// TestFor checks that every index runs exactly once.
func TestFor(t *testing.T) {
	for _, n := range []int{0, 1, 7, 500} {
		counts := make([]atomic.Int32, n)
		For(n, func(i int) { counts[i].Add(1) })
		for i := range counts {
			if c := counts[i].Load(); c != 1 {
				t.Errorf("n=%d: index %d ran %d times", n, i, c)
			}
		}
	}
}
