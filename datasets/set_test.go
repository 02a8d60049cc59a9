package datasets

import (
	"slices"
	"testing"
)

// TestConcatSplitRoundTrip: the two parts of a split, stacked, hold every
// row of the set once, each with its label.
func TestConcatSplitRoundTrip(t *testing.T) {
	s := &Set{N: 5, Dim: 2, X: []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, Y: []float64{0, 1, 0, 1, 1}, Classes: 2, Names: []string{"a", "b"}}
	rest, held := s.Split(0.4, 3)
	all := Concat([]*Set{rest, held})
	if all.N != s.N || all.Dim != s.Dim || all.Classes != 2 || !slices.Equal(all.Names, s.Names) {
		t.Fatalf("Concat: N=%d Dim=%d Classes=%d Names=%v, want the set's", all.N, all.Dim, all.Classes, all.Names)
	}
	seen := make([]bool, s.N)
	for i := range all.N {
		row := all.Row(i)
		k := int(row[0]) / 2 // rows are (2k, 2k+1)
		if row[1] != row[0]+1 || all.Y[i] != s.Y[k] || seen[k] {
			t.Fatalf("row %d = %v with label %v: not one of the set's rows, or twice", i, row, all.Y[i])
		}
		seen[k] = true
	}
}
