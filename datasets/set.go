package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// Set is a labelled data set: N rows of Dim features and one response per
// row. For classification (Classes > 0) Y holds class indices 0..Classes−1
// and Names the original label of each class; for regression Classes is 0.
type Set struct {
	N, Dim  int
	X       []float64 // N×Dim, row-major
	Y       []float64 // responses or class indices
	Classes int       // number of classes; 0 for regression
	Names   []string  // original label text per class (classification)
}

// Row returns the i-th feature row.
func (s *Set) Row(i int) []float64 { return s.X[i*s.Dim : (i+1)*s.Dim] }

// Labels returns the class index of every row (classification only).
func (s *Set) Labels() []int {
	out := make([]int, s.N)
	for i, y := range s.Y {
		out[i] = int(y)
	}
	return out
}

// Subset copies the rows listed in idx into a new set with the same classes.
func (s *Set) Subset(idx []int) *Set {
	out := &Set{N: len(idx), Dim: s.Dim, X: make([]float64, len(idx)*s.Dim), Y: make([]float64, len(idx)),
		Classes: s.Classes, Names: s.Names}
	for k, i := range idx {
		copy(out.X[k*s.Dim:(k+1)*s.Dim], s.Row(i))
		out.Y[k] = s.Y[i]
	}
	return out
}

// Concat stacks the rows of sets of one dimension into one set, with the
// classes of the first (e.g. clients' training sets pooled for tuning).
func Concat(sets []*Set) *Set {
	out := &Set{Dim: sets[0].Dim, Classes: sets[0].Classes, Names: sets[0].Names}
	for _, s := range sets {
		out.N += s.N
		out.X = append(out.X, s.X...)
		out.Y = append(out.Y, s.Y...)
	}
	return out
}

// Split deals a seeded random fraction of the rows into a hold-out set and
// returns (rest, holdout). Both keep at least one row when N ≥ 2.
func (s *Set) Split(frac float64, seed uint64) (rest, holdout *Set) {
	perm := Permutation(s.N, rand.New(rand.NewPCG(seed, splitStream)))
	k := int(math.Round(frac * float64(s.N)))
	k = max(min(k, s.N-1), min(1, s.N-1))
	h := slices.Clone(perm[:k])
	r := slices.Clone(perm[k:])
	slices.Sort(h) // keep file order within each part: easier to reason about
	slices.Sort(r)
	return s.Subset(r), s.Subset(h)
}

// splitStream is the random stream of hold-out splits, apart from the
// client streams 0..M of the generators.
const splitStream = 1 << 41

// Scaling is a per-feature affine map x ↦ (x − Min)/(Max − Min) onto [0,1],
// fitted on a training set; constant features map to 0.
type Scaling struct{ Min, Max []float64 }

// FitScaling returns the min–max scaling of the training set s.
func FitScaling(s *Set) Scaling {
	sc := Scaling{Min: make([]float64, s.Dim), Max: make([]float64, s.Dim)}
	for k := range sc.Min {
		sc.Min[k], sc.Max[k] = math.Inf(1), math.Inf(-1)
	}
	for i := 0; i < s.N; i++ {
		for k, v := range s.Row(i) {
			sc.Min[k] = math.Min(sc.Min[k], v)
			sc.Max[k] = math.Max(sc.Max[k], v)
		}
	}
	return sc
}

// Apply scales the features of s in place. Test data may fall outside
// [0,1]; that is expected and left alone.
func (sc Scaling) Apply(s *Set) {
	for i := 0; i < s.N; i++ {
		row := s.Row(i)
		for k := range row {
			if k >= len(sc.Min) {
				row[k] = 0
				continue
			}
			if w := sc.Max[k] - sc.Min[k]; w > 0 {
				row[k] = (row[k] - sc.Min[k]) / w
			} else {
				row[k] = 0
			}
		}
	}
}

// MedianDistance returns the median Euclidean distance between pairs of
// rows, over at most 500 seeded random rows (the median heuristic for the
// kernel bandwidth). It is 1 for sets with fewer than two distinct rows.
func (s *Set) MedianDistance(seed uint64) float64 {
	rows := Permutation(s.N, rand.New(rand.NewPCG(seed, medianStream)))
	rows = rows[:min(len(rows), 500)]
	var ds []float64
	for a := 0; a < len(rows); a++ {
		for b := a + 1; b < len(rows); b++ {
			var d2 float64
			ra, rb := s.Row(rows[a]), s.Row(rows[b])
			for k := range ra {
				t := ra[k] - rb[k]
				d2 += t * t
			}
			ds = append(ds, math.Sqrt(d2))
		}
	}
	if len(ds) == 0 {
		return 1
	}
	sort.Float64s(ds)
	m := ds[len(ds)/2]
	if !(m > 0) {
		return 1
	}
	return m
}

const medianStream = 1<<41 + 1

// Permutation returns a uniformly random permutation of 0..n−1 (Fisher–Yates).
func Permutation(n int, rng *rand.Rand) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := rng.IntN(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// Describe is a short description for titles, e.g. "N=1000, d=16, 10 classes".
func (s *Set) Describe() string {
	if s.Classes > 0 {
		return fmt.Sprintf("N=%d, d=%d, %d classes", s.N, s.Dim, s.Classes)
	}
	return fmt.Sprintf("N=%d, d=%d, regression", s.N, s.Dim)
}
