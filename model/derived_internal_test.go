package model

import "testing"

// TestDerivedLRU checks the derived-value cache: values come back until the
// memory bound forces the least recently used out, a lookup counts as a
// use, a replaced key frees its old size, and a value over the bound is not
// kept.
func TestDerivedLRU(t *testing.T) {
	var p Problem
	third := maxDerived / 3
	p.Keep("a", 1, third)
	p.Keep("b", 2, third)
	p.Keep("c", 3, third)
	if v, ok := p.Lookup("a"); !ok || v != 1 {
		t.Fatalf("a: %v, %v", v, ok)
	}
	p.Keep("d", 4, third) // over the bound: b is the least recently used
	if _, ok := p.Lookup("b"); ok {
		t.Error("b kept beyond the bound")
	}
	for _, k := range []string{"a", "c", "d"} {
		if _, ok := p.Lookup(k); !ok {
			t.Errorf("%s dropped", k)
		}
	}
	p.Keep("a", 5, 1) // replacing frees a's third
	p.Keep("e", 6, third)
	for k, want := range map[string]int{"a": 5, "c": 3, "d": 4, "e": 6} {
		if v, ok := p.Lookup(k); !ok || v != want {
			t.Errorf("%s = %v, %v; want %d", k, v, ok, want)
		}
	}
	p.Keep("huge", 7, maxDerived+1)
	if _, ok := p.Lookup("huge"); ok {
		t.Error("a value over the bound was kept")
	}
	if p.derived.bytes > maxDerived {
		t.Errorf("%d bytes kept, bound %d", p.derived.bytes, maxDerived)
	}
}
