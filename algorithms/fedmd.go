package algorithms

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/internal/parallel"
	"github.com/fedscope/fedscope/model"
)

// FedMD is Phase 1 of the two-phase clustered algorithm, federated moment
// descent (docs/papers.md §5.2, paper 004), with the corrections of §7 and the
// choices of §8:
//
//   - every anchor h starts at θ_{h,0} = 0;
//   - in round t the server takes a fresh set S_t of m 2-point clients and,
//     for each anchor separately, runs the federated orthogonal iteration
//     (§5.3) for T1 rounds on Y_{h,t} = (1/m) Σ_{i∈S_t} ε(x_i1, y_i1, θ_h) ε(x_i2, y_i2, θ_h)ᵀ,
//     ε(x, y, θ) = (y − ⟨x, θ⟩) x, giving Û (d×k);
//   - the anchor forms A = (1/l) Σ_j (Ûᵀ ε(x_j, y_j, θ_h)) (Ûᵀ ε(x̃_j, ỹ_j, θ_h))ᵀ
//     from 2l fresh points and runs power iteration on A Aᵀ for T2 steps,
//     giving β̂; the sign of β̂ makes β̂ᵀ(mean of Ûᵀε over the 2l points)
//     positive (§8: the paper leaves the ± open);
//   - σ̂² = β̂ᵀ A β̂ clipped at 0 (§7: the paper's formula does not typecheck);
//   - if σ̂ > εΔ the anchor moves θ_h ← θ_h + (α σ̂/(2β²)) Û β̂, otherwise it
//     stays put (§7: the paper's else-branch is printed reversed).
//
// After the last round the anchors are clustered (ClusterAnchors) into the
// k coarse centres that start Phase 2.
type FedMD struct {
	Rounds     int     // T
	Pool       int     // m, 2-point clients per round
	Pairs      int     // l, point pairs per anchor and round
	OIIters    int     // T1, even
	PowerIters int     // T2
	Epsilon    float64 // ε in (0, 1/4)
	Alpha      float64 // α, lower bound of the covariances
	Beta       float64 // β, upper bound of the covariances
	Delta      float64 // Δ the algorithm assumes (the true one unless misspecified)
	// Reuse makes every round use the same m pool clients and the same 2l
	// points of each anchor instead of fresh ones (docs/papers.md §8 "reuse data").
	Reuse bool
	Seed  uint64 // seeds the random starts of the orthogonal and power iterations
}

// fedmdStream offsets the random streams of FedMD from the data streams.
const fedmdStream = 1 << 43

func (f FedMD) validate(p *model.Mixture) error {
	fed := p.Fed
	switch {
	case f.Rounds < 1:
		return fmt.Errorf("%w: Phase-1 rounds T=%d must be ≥ 1", ErrBadParams, f.Rounds)
	case f.Pool < 1:
		return fmt.Errorf("%w: pool size m=%d must be ≥ 1", ErrBadParams, f.Pool)
	case f.Pairs < 1:
		return fmt.Errorf("%w: anchor pairs l=%d must be ≥ 1", ErrBadParams, f.Pairs)
	case f.OIIters < 2 || f.OIIters%2 != 0:
		return fmt.Errorf("%w: orthogonal iterations T1=%d must be even and ≥ 2", ErrBadParams, f.OIIters)
	case f.PowerIters < 1:
		return fmt.Errorf("%w: power iterations T2=%d must be ≥ 1", ErrBadParams, f.PowerIters)
	case !(f.Epsilon > 0 && f.Epsilon < 0.25):
		return fmt.Errorf("%w: ε=%v must lie in (0, 1/4)", ErrBadParams, f.Epsilon)
	case !(f.Alpha > 0) || !(f.Beta >= f.Alpha) || math.IsInf(f.Beta, 0):
		return fmt.Errorf("%w: need 0 < α ≤ β, got α=%v β=%v", ErrBadParams, f.Alpha, f.Beta)
	case !(f.Delta > 0) || math.IsInf(f.Delta, 0):
		return fmt.Errorf("%w: Δ=%v must be a finite number > 0", ErrBadParams, f.Delta)
	case len(fed.Anchors) < p.K:
		return fmt.Errorf("%w: %d anchors cannot give k=%d centres", ErrBadParams, len(fed.Anchors), p.K)
	}
	needPool, needPts := f.Pool*f.Rounds, 2*f.Pairs*f.Rounds
	if f.Reuse {
		needPool, needPts = f.Pool, 2*f.Pairs
	}
	if fed.Pool.Count < needPool {
		return fmt.Errorf("%w: Phase 1 needs %d 2-point clients, the federation has %d", ErrBadParams, needPool, fed.Pool.Count)
	}
	for _, a := range fed.Anchors {
		if a.N < needPts {
			return fmt.Errorf("%w: Phase 1 needs %d points per anchor, an anchor has %d", ErrBadParams, needPts, a.N)
		}
	}
	return nil
}

// fedmdState is Phase 1 in progress.
type fedmdState struct {
	f       FedMD
	p       *model.Mixture
	t       int         // rounds done
	anchors [][]float64 // θ_h
	moved   []bool      // whether anchor h moved in the last round (σ̂ > εΔ)
	moving  int         // how many did
	work    []anchorWork
}

// anchorWork is one anchor's random stream and scratch memory, so that the
// anchors of a round run in parallel without allocating.
type anchorWork struct {
	rng                *rand.Rand
	y                  []float64 // d×d
	u, scratch         []float64 // d×k
	a, ak, bk, mean, v []float64 // k×k, k, k, k, k
	vs                 []float64 // k
}

func newFedMD(f FedMD, p *model.Mixture) *fedmdState {
	d, k := p.Dim, p.K
	st := &fedmdState{f: f, p: p, anchors: make([][]float64, len(p.Fed.Anchors)), work: make([]anchorWork, len(p.Fed.Anchors)),
		moved: make([]bool, len(p.Fed.Anchors))}
	for h := range st.anchors {
		st.anchors[h] = make([]float64, d) // θ_{h,0} = 0 (docs/papers.md §8)
		st.work[h] = anchorWork{rng: rand.New(rand.NewPCG(f.Seed, fedmdStream+uint64(h))),
			y: make([]float64, d*d), u: make([]float64, d*k), scratch: make([]float64, d*k),
			a: make([]float64, k*k), ak: make([]float64, k), bk: make([]float64, k),
			mean: make([]float64, k), v: make([]float64, k), vs: make([]float64, k)}
	}
	return st
}

// round runs one FedMD round for every anchor (in parallel: each anchor
// reads shared data and writes only its own state).
func (st *fedmdState) round() {
	f := st.f
	lo := st.t * f.Pool
	ptLo := st.t * 2 * f.Pairs
	if f.Reuse {
		lo, ptLo = 0, 0
	}
	parallel.For(len(st.anchors), func(h int) { st.moved[h] = st.step(h, lo, ptLo) })
	st.moving = 0
	for _, m := range st.moved {
		if m {
			st.moving++
		}
	}
	st.t++
}

// step is steps b–e of Algorithm 3 for anchor h, on the pool clients from
// lo and the anchor's points from ptLo; it reports whether the anchor moved.
func (st *fedmdState) step(h, lo, ptLo int) bool {
	f, fed := st.f, st.p.Fed
	d, k := st.p.Dim, st.p.K
	w := &st.work[h]
	theta := st.anchors[h]
	// b. Y_{h,t} from the fresh 2-point clients, then its top-k left
	// singular subspace by orthogonal iteration from a random start.
	formY(w.y, fed.Pool, lo, f.Pool, theta, d)
	for e := range w.u {
		w.u[e] = w.rng.NormFloat64()
	}
	Orthonormalize(w.u, d, k)
	OrthogonalIteration(w.y, d, k, f.OIIters, w.u, w.scratch)
	// c., d. The moment A in that subspace, and β̂ and σ̂ from it.
	w.moments(&fed.Anchors[h], ptLo, f.Pairs, theta, d, k)
	sigma := w.direction(f.PowerIters, k)
	// e. Move along r = Û β̂ while the moment is above εΔ; else freeze.
	if !(sigma > f.Epsilon*f.Delta) {
		return false
	}
	eta := f.Alpha * sigma / (2 * f.Beta * f.Beta)
	for r := 0; r < d; r++ {
		var s float64
		for c := 0; c < k; c++ {
			s += w.u[r*k+c] * w.v[c]
		}
		theta[r] += eta * s
	}
	return true
}

// moments sets w.a to A = (1/l) Σ (Ûᵀε_j)(Ûᵀε̃_j)ᵀ from the anchor's 2l
// points from ptLo, and w.mean to the mean of Ûᵀε over those points (for
// the sign of β̂): step c of Algorithm 3.
func (w *anchorWork) moments(anchor *datasets.Client, ptLo, pairs int, theta []float64, d, k int) {
	clear(w.a)
	clear(w.mean)
	for j := 0; j < pairs; j++ {
		projectedEps(w.ak, anchor, ptLo+j, theta, w.u, d, k)
		projectedEps(w.bk, anchor, ptLo+pairs+j, theta, w.u, d, k)
		for r := 0; r < k; r++ {
			w.mean[r] += (w.ak[r] + w.bk[r]) / float64(2*pairs)
			for c := 0; c < k; c++ {
				w.a[r*k+c] += w.ak[r] * w.bk[c] / float64(pairs)
			}
		}
	}
}

// direction sets w.v to β̂, the top eigenvector of A Aᵀ by power iteration
// from a random unit start, signed to agree with the mean moment, and
// returns σ̂ = √(β̂ᵀ A β̂) (clipped at 0): step d of Algorithm 3.
func (w *anchorWork) direction(iters, k int) float64 {
	unit(w.v, w.rng)
	PowerIteration(w.a, k, iters, w.v, w.vs)
	var dir float64
	for r := 0; r < k; r++ {
		dir += w.v[r] * w.mean[r]
	}
	if dir < 0 {
		for r := range w.v {
			w.v[r] = -w.v[r]
		}
	}
	var s2 float64
	for r := 0; r < k; r++ {
		for c := 0; c < k; c++ {
			s2 += w.v[r] * w.a[r*k+c] * w.v[c]
		}
	}
	return math.Sqrt(math.Max(s2, 0))
}

// centres clusters the current anchor estimates into k centres (k×d) and
// says how the anchors grouped.
func (st *fedmdState) centres() ([]float64, AnchorGroups) {
	return GroupAnchors(st.anchors, st.p.K, st.f.Delta)
}

// formY sets y (d×d) = (1/m) Σ_{c=lo}^{lo+m−1} r1 r2 x1 x2ᵀ with r = y − ⟨x, θ⟩,
// the aggregate of the pool clients' uploads in Algorithm 3.
func formY(y []float64, pool datasets.Pairs, lo, m int, theta []float64, d int) {
	clear(y)
	inv := 1 / float64(m)
	for c := lo; c < lo+m; c++ {
		x1, x2 := pool.X1[c*d:(c+1)*d], pool.X2[c*d:(c+1)*d]
		r1, r2 := pool.Y1[c], pool.Y2[c]
		for a, v := range theta {
			r1 -= x1[a] * v
			r2 -= x2[a] * v
		}
		f := inv * r1 * r2
		for a, xa := range x1 {
			s := f * xa
			row := y[a*d : (a+1)*d]
			for b, xb := range x2 {
				row[b] += s * xb
			}
		}
	}
}

// projectedEps sets dst (k) = Ûᵀ ε(x_j, y_j, θ) for point j of a client.
func projectedEps(dst []float64, c *datasets.Client, j int, theta, u []float64, d, k int) {
	x := c.X[j*d : (j+1)*d]
	r := c.Y[j]
	for a, v := range theta {
		r -= x[a] * v
	}
	clear(dst[:k])
	for a, xa := range x {
		s := r * xa
		row := u[a*k : (a+1)*k]
		for b, ub := range row {
			dst[b] += s * ub
		}
	}
}

// AnchorGroups says how the anchors grouped under the Δ/2 rule at the end
// of Phase 1 (docs/papers.md §5.2 step 3, §8), so that a fallback is never
// silent.
type AnchorGroups struct {
	Anchors    int  // n_H
	Components int  // connected components of the graph "distance < Δ/2"
	Dropped    int  // anchors in the components beyond the k largest
	KMeans     bool // fewer than k components: k-means split the anchors
}

// ClusterAnchors turns the anchors' estimates into k centres (k×d row-major)
// by the rule of docs/papers.md §8 (004), the end of Phase 1 (§5.2 step 3): two
// anchors are linked when their distance is below Δ/2; the connected
// components are clusters. With more than k components the k largest (by
// anchor count; ties to the one with the smaller first anchor) are kept and
// the rest dropped; with fewer than k, the anchors are split by k-means
// (Lloyd's iterations) started from the component means plus, one at a time,
// the anchor farthest from its nearest centre. Each centre is the mean of its
// anchors. There must be at least k anchors.
func ClusterAnchors(thetas [][]float64, k int, delta float64) []float64 {
	c, _ := GroupAnchors(thetas, k, delta)
	return c
}

// GroupAnchors is ClusterAnchors, also reporting how the anchors grouped.
func GroupAnchors(thetas [][]float64, k int, delta float64) ([]float64, AnchorGroups) {
	n := len(thetas)
	if n < k || k < 1 {
		panic("algorithms: ClusterAnchors: fewer anchors than clusters")
	}
	d := len(thetas[0])
	roots, members := components(thetas, delta/2)
	groups := AnchorGroups{Anchors: n, Components: len(roots), KMeans: len(roots) < k}
	for _, r := range roots[min(k, len(roots)):] {
		groups.Dropped += len(members[r])
	}
	centres := make([]float64, k*d)
	for j, r := range roots[:min(k, len(roots))] {
		meanTo(centres[j*d:(j+1)*d], thetas, members[r])
	}
	if len(roots) < k {
		kMeans(thetas, centres, len(roots), k)
	}
	return centres, groups
}

// components groups the points that a chain of distances below radius
// links, and returns each group's root (its first point) and members,
// largest group first; equal sizes in order of their first point.
func components(thetas [][]float64, radius float64) (roots []int, members map[int][]int) {
	n := len(thetas)
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if model.Distance(thetas[i], thetas[j]) < radius {
				ri, rj := find(i), find(j)
				if ri != rj {
					parent[max(ri, rj)] = min(ri, rj) // the root is the smallest member
				}
			}
		}
	}
	members = map[int][]int{}
	for i := 0; i < n; i++ {
		r := find(i)
		if members[r] == nil {
			roots = append(roots, r)
		}
		members[r] = append(members[r], i)
	}
	// Roots are in order of their first point and the sort is stable.
	slices.SortStableFunc(roots, func(a, b int) int { return cmp.Compare(len(members[b]), len(members[a])) })
	return roots, members
}

// meanTo sets dst to the mean of the points listed in idx.
func meanTo(dst []float64, thetas [][]float64, idx []int) {
	clear(dst)
	for _, i := range idx {
		for a, v := range thetas[i] {
			dst[a] += v / float64(len(idx))
		}
	}
}

// kMeans completes the first `from` centres (k×d row-major) to k: each new
// centre is the point farthest from its nearest centre so far, and then
// Lloyd's iterations (at most 100) move every centre to the mean of its
// points; an empty cluster keeps its centre.
func kMeans(thetas [][]float64, centres []float64, from, k int) {
	d := len(thetas[0])
	nearest := func(x []float64, upto int) (int, float64) {
		best, bd := 0, math.Inf(1)
		for j := 0; j < upto; j++ {
			if dd := model.Distance(x, centres[j*d:(j+1)*d]); dd < bd {
				best, bd = j, dd
			}
		}
		return best, bd
	}
	for j := from; j < k; j++ {
		far, fd := 0, -1.0
		for i, x := range thetas {
			if _, dd := nearest(x, j); dd > fd {
				far, fd = i, dd
			}
		}
		copy(centres[j*d:(j+1)*d], thetas[far])
	}
	assign := make([]int, len(thetas))
	for iter := 0; iter < 100; iter++ {
		changed := iter == 0
		for i, x := range thetas {
			if a, _ := nearest(x, k); a != assign[i] {
				assign[i], changed = a, true
			}
		}
		if !changed {
			break
		}
		for j := 0; j < k; j++ {
			var idx []int
			for i, a := range assign {
				if a == j {
					idx = append(idx, i)
				}
			}
			if len(idx) > 0 {
				meanTo(centres[j*d:(j+1)*d], thetas, idx)
			}
		}
	}
}

// unit fills v with a uniform draw from the unit sphere (datasets.GaussianTo
// divided by its norm, where datasets.UnitTo multiplies by the inverse: the
// last bits differ, and each keeps the numbers it has always drawn).
func unit(v []float64, rng *rand.Rand) {
	s := math.Sqrt(datasets.GaussianTo(v, rng))
	for r := range v {
		v[r] /= s
	}
}
