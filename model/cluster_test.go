package model_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/floats"
)

// permutations returns every permutation of 0..k−1 by recursion (a different
// construction from the lexicographic successor the package uses).
func permutations(k int) [][]int {
	if k == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(k - 1) {
		for pos := 0; pos <= len(p); pos++ {
			q := append(append(append([]int{}, p[:pos]...), k-1), p[pos:]...)
			out = append(out, q)
		}
	}
	return out
}

// bruteSum and bruteMax are the brute-force optima of Σ_j c[j][π(j)] and
// max_j c[j][π(j)].
func bruteSum(c []float64, k int) float64 {
	best := math.Inf(1)
	for _, p := range permutations(k) {
		var s float64
		for j, a := range p {
			s += c[j*k+a]
		}
		best = math.Min(best, s)
	}
	return best
}

func bruteMax(c []float64, k int) float64 {
	best := math.Inf(1)
	for _, p := range permutations(k) {
		var m float64
		for j, a := range p {
			m = math.Max(m, c[j*k+a])
		}
		best = math.Min(best, m)
	}
	return best
}

func isPermutation(p []int) bool {
	seen := make([]bool, len(p))
	for _, a := range p {
		if a < 0 || a >= len(p) || seen[a] {
			return false
		}
		seen[a] = true
	}
	return true
}

// TestHungarianEqualsBruteForce checks the Hungarian algorithm against
// enumeration for k = 1..7 on random cost matrices, including matrices with
// many ties (small integers).
func TestHungarianEqualsBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for k := 1; k <= 7; k++ {
		for trial := 0; trial < 30; trial++ {
			c := make([]float64, k*k)
			for e := range c {
				if trial%2 == 0 {
					c[e] = rng.Float64() * 10
				} else {
					c[e] = float64(rng.IntN(4))
				}
			}
			got, perm := model.Hungarian(c, k)
			want := bruteSum(c, k)
			if math.Abs(got-want) > 1e-9 || !isPermutation(perm) {
				t.Fatalf("k=%d trial %d: Hungarian %v (perm %v), brute force %v", k, trial, got, perm, want)
			}
			var s float64
			for j, a := range perm {
				s += c[j*k+a]
			}
			if math.Abs(s-got) > 1e-9 {
				t.Fatalf("k=%d: returned sum %v is not the permutation's %v", k, got, s)
			}
		}
	}
}

// TestMatchClustersEqualsBruteForce checks the bottleneck value, through
// enumeration (k ≤ 6) and through the Hungarian bisection (k = 7, 8), against
// brute force, and that the returned permutation attains it.
func TestMatchClustersEqualsBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for k := 1; k <= 8; k++ {
		for trial := 0; trial < 20; trial++ {
			c := make([]float64, k*k)
			for e := range c {
				c[e] = rng.ExpFloat64()
				if trial%3 == 0 {
					c[e] = float64(rng.IntN(3))
				}
			}
			got, perm := model.MatchClusters(c, k)
			want := bruteMax(c, k)
			if got != want || !isPermutation(perm) {
				t.Fatalf("k=%d trial %d: MatchClusters %v (perm %v), brute force %v", k, trial, got, perm, want)
			}
			var m float64
			for j, a := range perm {
				m = math.Max(m, c[j*k+a])
			}
			if m != got {
				t.Fatalf("k=%d: permutation %v reaches %v, not %v", k, perm, m, got)
			}
		}
	}
}

// TestClusterDistanceInvariantToRelabelling checks that permuting the
// estimated centres changes neither d(θ̂, θ*) nor which estimate is matched to
// which truth, for k up to 8 (both code paths), and the value against brute
// force over permutations of the actual distances.
func TestClusterDistanceInvariantToRelabelling(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for k := 2; k <= 8; k++ {
		truth, est := make([][]float64, k), make([][]float64, k)
		for j := range truth {
			truth[j], est[j] = make([]float64, 4), make([]float64, 4)
			for a := range truth[j] {
				truth[j][a] = rng.NormFloat64() * 3
				est[j][a] = truth[j][a] + rng.NormFloat64()
			}
		}
		d, perm := model.ClusterDistance(est, truth)
		cost := make([]float64, k*k)
		for j := range truth {
			for a := range est {
				cost[j*k+a] = floats.Distance(est[a], truth[j], 2)
			}
		}
		if want := bruteMax(cost, k); math.Abs(d-want) > 1e-12*want {
			t.Fatalf("k=%d: distance %v, brute force %v", k, d, want)
		}
		for trial := 0; trial < 5; trial++ {
			pi := rng.Perm(k)
			shuffled := make([][]float64, k)
			for a := range est {
				shuffled[pi[a]] = est[a] // estimate a is now called pi[a]
			}
			d2, perm2 := model.ClusterDistance(shuffled, truth)
			if d2 != d {
				t.Fatalf("k=%d: relabelling changed the distance %v → %v", k, d, d2)
			}
			for j := range truth {
				if perm2[j] != pi[perm[j]] {
					t.Fatalf("k=%d: truth %d matched to %d, want relabelled %d", k, j, perm2[j], pi[perm[j]])
				}
			}
		}
	}
}

// TestClusterDistanceKnown checks a hand-made case: estimates are the truths
// in reverse order, each moved by a known offset; the distance is the largest
// offset.
func TestClusterDistanceKnown(t *testing.T) {
	truth := [][]float64{{0, 0}, {10, 0}, {0, 10}}
	est := [][]float64{{0, 10.3}, {10, 0.1}, {0.2, 0}}
	d, perm := model.ClusterDistance(est, truth)
	if math.Abs(d-0.3) > 1e-12 || perm[0] != 2 || perm[1] != 1 || perm[2] != 0 {
		t.Fatalf("distance %v perm %v, want 0.3 and [2 1 0]", d, perm)
	}
	assign := []int{2, 2, 1, 0, 0, 1}
	labels := []int{0, 0, 1, 2, 1, 1}
	re := make([]int, len(assign))
	model.Relabel(re, assign, perm)
	if want := []int{0, 0, 1, 2, 2, 1}; !slices.Equal(re, want) {
		t.Fatalf("relabelled %v, want %v", re, want)
	}
	if got := model.Misclustered(re, labels); math.Abs(got-1.0/6) > 1e-15 {
		t.Fatalf("misclustered %v, want 1/6", got)
	}
}
