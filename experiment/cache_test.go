package experiment

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// TestCache: concurrent callers of one key share one build, the oldest key
// is evicted beyond the size, and a failed build is retried next time.
func TestCache(t *testing.T) {
	c := newCache[int, int](2)
	var builds atomic.Int32
	build := func(v int) func() (int, error) {
		return func() (int, error) { builds.Add(1); return v * 10, nil }
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, err := c.get(1, build(1)); v != 10 || err != nil {
				t.Errorf("get(1) = %v, %v", v, err)
			}
		}()
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Fatalf("8 concurrent gets built %d times, want 1", n)
	}
	c.get(2, build(2))
	c.get(3, build(3)) // evicts 1
	c.get(1, build(1))
	if n := builds.Load(); n != 4 {
		t.Fatalf("after eviction: %d builds, want 4", n)
	}
	fail := errors.New("bad file")
	if _, err := c.get(9, func() (int, error) { return 0, fail }); !errors.Is(err, fail) {
		t.Fatalf("failed build: err %v", err)
	}
	if v, err := c.get(9, build(9)); v != 90 || err != nil {
		t.Fatalf("a failed build was kept: %v, %v", v, err)
	}
}
