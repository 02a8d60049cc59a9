package experiment

import "sync"

// cache keeps the last few prepared data sets by key, so that a re-run, or
// a change of η, s, B or the racers, reuses the statistics instead of
// recomputing them (docs/design.md: "computed once per dataset and shared by
// every algorithm and every re-run"). Each entry is built once: callers
// asking for the same key at the same time wait for the first build. A
// failed build is not kept.
type cache[K comparable, V any] struct {
	mu    sync.Mutex
	size  int
	m     map[K]*cacheEntry[V]
	order []K // oldest first
}

type cacheEntry[V any] struct {
	once sync.Once
	v    V
	err  error
}

func newCache[K comparable, V any](size int) *cache[K, V] {
	return &cache[K, V]{size: size, m: map[K]*cacheEntry[V]{}}
}

// get returns the value for key, building it with build on a miss.
func (c *cache[K, V]) get(key K, build func() (V, error)) (V, error) {
	c.mu.Lock()
	e, ok := c.m[key]
	if !ok {
		e = &cacheEntry[V]{}
		if len(c.order) >= c.size {
			delete(c.m, c.order[0])
			c.order = c.order[1:]
		}
		c.m[key] = e
		c.order = append(c.order, key)
	}
	c.mu.Unlock()
	e.once.Do(func() { e.v, e.err = build() })
	if e.err != nil {
		c.forget(key, e)
	}
	return e.v, e.err
}

func (c *cache[K, V]) forget(key K, e *cacheEntry[V]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m[key] != e {
		return
	}
	delete(c.m, key)
	for i, k := range c.order {
		if k == key {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}

// clear empties the cache (tests and benchmarks measure cold runs with it).
func (c *cache[K, V]) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m, c.order = map[K]*cacheEntry[V]{}, nil
}
