package model

import (
	"math"
	"slices"
)

// Cluster indices are unidentifiable, so every clustering metric first
// matches estimated clusters to true ones (docs/papers.md §5.1, §6, §8 for 004):
//
//	d(θ̂, θ*) = min_π max_j ‖θ̂_π(j) − θ*_j‖.
//
// The min over permutations of a max is a bottleneck assignment. For k ≤ 6
// the k! permutations are enumerated; beyond, the bottleneck value is found
// by bisection over the k² costs, each step asking the Hungarian algorithm
// whether a perfect matching avoids every cost above the threshold (docs/papers.md
// §8: "use the Hungarian algorithm beyond that"). Among the permutations that
// reach the bottleneck value the one with the smallest total cost is chosen,
// so that the matching is also sensible for the clusters that are not the
// worst.

// ExhaustiveMaxK is the largest k for which permutations are enumerated.
const ExhaustiveMaxK = 6

// ClusterDistance returns d(θ̂, θ*) for k estimated and k true centres and the
// best permutation: perm[j] is the estimated centre matched to truth j.
func ClusterDistance(est, truth [][]float64) (float64, []int) {
	k := len(truth)
	if len(est) != k {
		panic("model: ClusterDistance: different numbers of estimated and true centres")
	}
	cost := make([]float64, k*k)
	for j := range truth {
		for a := range est {
			cost[j*k+a] = Distance(est[a], truth[j])
		}
	}
	return MatchClusters(cost, k)
}

// MatchClusters solves the bottleneck assignment on a k×k cost matrix
// (row-major, cost[j·k+a] = cost of matching estimate a to truth j): it
// returns min_π max_j cost[j][π(j)] and the minimising π, ties broken by the
// smallest Σ_j cost[j][π(j)].
func MatchClusters(cost []float64, k int) (float64, []int) {
	if len(cost) != k*k {
		panic("model: MatchClusters: cost matrix is not k×k")
	}
	if k <= ExhaustiveMaxK {
		return bruteForceMatch(cost, k)
	}
	return hungarianMatch(cost, k)
}

// bruteForceMatch enumerates all k! permutations in lexicographic order,
// keeping the first one that minimises (max, sum).
func bruteForceMatch(cost []float64, k int) (float64, []int) {
	perm := make([]int, k)
	for j := range perm {
		perm[j] = j
	}
	best := slices.Clone(perm)
	bestMax, bestSum := math.Inf(1), math.Inf(1)
	for {
		var mx, sum float64
		for j, a := range perm {
			c := cost[j*k+a]
			mx = math.Max(mx, c)
			sum += c
		}
		if mx < bestMax || (mx == bestMax && sum < bestSum) {
			bestMax, bestSum = mx, sum
			copy(best, perm)
		}
		if !nextPermutation(perm) {
			return bestMax, best
		}
	}
}

// nextPermutation advances p to the next permutation in lexicographic order,
// reporting false after the last one.
func nextPermutation(p []int) bool {
	i := len(p) - 2
	for i >= 0 && p[i] >= p[i+1] {
		i--
	}
	if i < 0 {
		return false
	}
	j := len(p) - 1
	for p[j] <= p[i] {
		j--
	}
	p[i], p[j] = p[j], p[i]
	slices.Reverse(p[i+1:])
	return true
}

// hungarianMatch finds the bottleneck value by bisection over the sorted
// costs (a threshold τ is feasible when the Hungarian algorithm finds a
// matching of zero cost on the indicator matrix [cost > τ]), then the
// smallest-sum matching among the feasible entries.
func hungarianMatch(cost []float64, k int) (float64, []int) {
	values := slices.Clone(cost)
	slices.Sort(values)
	values = slices.Compact(values)
	ind := make([]float64, k*k)
	feasible := func(tau float64) bool {
		for e, c := range cost {
			ind[e] = 0
			if c > tau {
				ind[e] = 1
			}
		}
		sum, _ := Hungarian(ind, k)
		return sum == 0
	}
	lo, hi := 0, len(values)-1 // values[hi] is always feasible
	for lo < hi {
		mid := (lo + hi) / 2
		if feasible(values[mid]) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	tau := values[lo]
	// Forbid the entries above τ with a cost no feasible matching can reach.
	var total float64
	for _, c := range cost {
		total += math.Abs(c)
	}
	big := 2*total + 1
	restricted := ind
	for e, c := range cost {
		restricted[e] = c
		if c > tau {
			restricted[e] = big
		}
	}
	_, perm := Hungarian(restricted, k)
	return tau, perm
}

// Hungarian solves the linear assignment problem on a k×k cost matrix
// (row-major): it returns min_π Σ_j cost[j][π(j)] and π, by the O(k³)
// shortest-augmenting-path form of the Hungarian algorithm with row and
// column potentials (Kuhn 1955, Munkres 1957; the potentials formulation of
// Jonker–Volgenant). Costs must be finite.
func Hungarian(cost []float64, k int) (float64, []int) {
	if len(cost) != k*k {
		panic("model: Hungarian: cost matrix is not k×k")
	}
	h := hungarian{cost: cost, k: k, u: make([]float64, k+1), v: make([]float64, k+1), match: make([]int, k+1),
		way: make([]int, k+1), minv: make([]float64, k+1), used: make([]bool, k+1)}
	for row := 1; row <= k; row++ {
		h.insert(row)
	}
	perm := make([]int, k)
	for c := 1; c <= k; c++ {
		perm[h.match[c]-1] = c - 1
	}
	var sum float64
	for j, a := range perm {
		sum += cost[j*k+a]
	}
	return sum, perm
}

// hungarian is the state of Hungarian, in 1-based arrays: column 0 is a
// virtual column holding the row being inserted; match[c] is the row
// assigned to column c; u and v are the row and column potentials.
type hungarian struct {
	cost       []float64
	k          int
	u, v, minv []float64
	match, way []int
	used       []bool
}

// insert adds row to the matching along a shortest augmenting path.
func (h *hungarian) insert(row int) {
	h.match[0] = row
	c0 := 0
	for c := range h.minv {
		h.minv[c] = math.Inf(1)
		h.used[c] = false
	}
	for {
		c0 = h.step(c0)
		if h.match[c0] == 0 {
			break
		}
	}
	for c0 != 0 { // augment along the alternating path
		c1 := h.way[c0]
		h.match[c0] = h.match[c1]
		c0 = c1
	}
}

// step visits column c0, relaxes the reduced costs of its row to the
// unvisited columns, moves the potentials by the smallest, and returns the
// column reached.
func (h *hungarian) step(c0 int) int {
	k := h.k
	h.used[c0] = true
	r0 := h.match[c0]
	delta, c1 := math.Inf(1), 0
	for c := 1; c <= k; c++ {
		if h.used[c] {
			continue
		}
		cur := h.cost[(r0-1)*k+c-1] - h.u[r0] - h.v[c]
		if cur < h.minv[c] {
			h.minv[c], h.way[c] = cur, c0
		}
		if h.minv[c] < delta {
			delta, c1 = h.minv[c], c
		}
	}
	for c := 0; c <= k; c++ {
		if h.used[c] {
			h.u[h.match[c]] += delta
			h.v[c] -= delta
		} else {
			h.minv[c] -= delta
		}
	}
	return c1
}

// Relabel maps assignments from estimated-cluster indices to the true
// cluster each estimate is matched with: dst[i] = j where perm[j] = assign[i].
// Negative assignments (none) stay negative.
func Relabel(dst, assign, perm []int) {
	inv := make([]int, len(perm))
	for j, a := range perm {
		inv[a] = j
	}
	for i, a := range assign {
		if a < 0 {
			dst[i] = a
			continue
		}
		dst[i] = inv[a]
	}
}

// Misclustered returns the fraction of clients whose relabelled assignment
// differs from their true label.
func Misclustered(relabelled, labels []int) float64 {
	if len(labels) == 0 {
		return math.NaN()
	}
	wrong := 0
	for i, z := range labels {
		if relabelled[i] != z {
			wrong++
		}
	}
	return float64(wrong) / float64(len(labels))
}
