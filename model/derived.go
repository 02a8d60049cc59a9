package model

import (
	"container/list"
	"sync"
)

// maxDerived bounds the memory of what racers derive from one Problem and
// keep for the next run (round maps, power chains): a session that scrubs
// through step sizes keeps the most recent ones.
const maxDerived = 256 << 20

// derived is a least-recently-used cache of values derived from a Problem,
// bounded in bytes, plus a lock that serialises their construction so that
// racers asking for the same value at once build it once.
type derived struct {
	mu      sync.Mutex
	build   sync.Mutex
	entries map[any]*list.Element
	lru     list.List // of *derivedEntry, most recent at the front
	bytes   int
}

type derivedEntry struct {
	key  any
	val  any
	size int
}

// Lookup returns the value derived from the problem and kept under key, if
// it is still cached.
func (p *Problem) Lookup(key any) (any, bool) {
	c := &p.derived
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*derivedEntry).val, true
	}
	return nil, false
}

// Keep caches v, which takes size bytes, under key, dropping the least
// recently used values beyond the memory bound. A value larger than the
// bound is not kept.
func (p *Problem) Keep(key, v any, size int) {
	c := &p.derived
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[any]*list.Element{}
	}
	if e, ok := c.entries[key]; ok {
		c.bytes -= e.Value.(*derivedEntry).size
		c.lru.Remove(e)
		delete(c.entries, key)
	}
	if size > maxDerived {
		return
	}
	c.entries[key] = c.lru.PushFront(&derivedEntry{key: key, val: v, size: size})
	c.bytes += size
	for c.bytes > maxDerived {
		e := c.lru.Back()
		de := e.Value.(*derivedEntry)
		c.lru.Remove(e)
		delete(c.entries, de.key)
		c.bytes -= de.size
	}
}

// Build runs f while holding the problem's build lock: callers check Lookup
// again inside f, so that of several racers asking for the same derived
// value at once only the first computes it.
func (p *Problem) Build(f func()) {
	p.derived.build.Lock()
	defer p.derived.build.Unlock()
	f()
}
