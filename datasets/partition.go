package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// partitionStream is the random stream of client partitions, apart from the
// data streams 0..M and the split streams.
const partitionStream = 1<<41 + 2

// MaxPartitionTries bounds the redraws of DirichletLabels.
const MaxPartitionTries = 1000

// IID deals the rows 0..n−1 to m clients uniformly at random, in sizes that
// differ by at most one. Each client's indices are sorted.
func IID(n, m int, seed uint64) ([][]int, error) {
	if m < 1 || n < m {
		return nil, fmt.Errorf("%w: cannot deal %d samples to %d clients (need at least one each)", ErrInvalid, n, m)
	}
	perm := Permutation(n, rand.New(rand.NewPCG(seed, partitionStream)))
	out := make([][]int, m)
	lo := 0
	for j := range out {
		size := n / m
		if j < n%m {
			size++
		}
		out[j] = slices.Clone(perm[lo : lo+size])
		slices.Sort(out[j])
		lo += size
	}
	return out, nil
}

// DirichletLabels is the label-skew split of NIID-Bench (Li et al., 2021),
// the usual reading of FedNewton's "Dir_K(c)" split (docs/papers.md §4.6): for
// each class k in turn, shuffle its samples, draw client proportions
// p ~ Dir(c·1_m), zero the share of every client that already holds N/m
// samples or more, renormalise, and deal the class's samples in those
// proportions. The whole draw is repeated until every client holds at least
// minSize samples, at most MaxPartitionTries times (then an error). Smaller c
// means more label skew and more unbalanced sizes. Deterministic in seed.
func DirichletLabels(labels []int, classes, m int, c float64, minSize int, seed uint64) ([][]int, error) {
	n := len(labels)
	switch {
	case m < 1:
		return nil, fmt.Errorf("%w: clients=%d: need at least 1", ErrInvalid, m)
	case !(c > 0) || math.IsInf(c, 0):
		return nil, fmt.Errorf("%w: dirichlet_c=%v: must be a finite number > 0", ErrInvalid, c)
	case minSize < 0 || n < m*minSize:
		return nil, fmt.Errorf("%w: %d samples cannot give %d clients at least %d each", ErrInvalid, n, m, minSize)
	}
	byClass, err := byClass(labels, classes)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, partitionStream))
	dir := newDirichlet(m, c, rng)
	parts := make([][]int, m)
	props := make([]float64, m)
	for try := 0; try < MaxPartitionTries; try++ {
		for j := range parts {
			parts[j] = parts[j][:0]
		}
		for _, idx := range byClass {
			dealClass(parts, slices.Clone(idx), float64(n)/float64(m), props, &dir, rng)
		}
		smallest := n
		for _, p := range parts {
			smallest = min(smallest, len(p))
		}
		if smallest >= minSize {
			out := make([][]int, m)
			for j, p := range parts {
				out[j] = slices.Clone(p)
				slices.Sort(out[j])
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("%w: no Dirichlet(c=%g) split of %d samples over %d clients gave every client %d samples in %d tries; raise dirichlet_c or lower min_size",
		ErrInvalid, c, n, m, minSize, MaxPartitionTries)
}

// byClass lists the rows of every class.
func byClass(labels []int, classes int) ([][]int, error) {
	out := make([][]int, classes)
	for i, k := range labels {
		if k < 0 || k >= classes {
			return nil, fmt.Errorf("%w: label %d of row %d outside 0..%d", ErrInvalid, k, i, classes-1)
		}
		out[k] = append(out[k], i)
	}
	return out, nil
}

// dealClass shuffles one class's rows idx and deals them to the parts in
// proportions drawn from dir, a client holding full (N/m) rows or more
// getting none.
func dealClass(parts [][]int, idx []int, full float64, props []float64, dir *dirichlet, rng *rand.Rand) {
	m := len(parts)
	for i := len(idx) - 1; i > 0; i-- {
		j := rng.IntN(i + 1)
		idx[i], idx[j] = idx[j], idx[i]
	}
	dir.draw(props)
	var sum float64
	for j := range props {
		if float64(len(parts[j])) >= full {
			props[j] = 0
		}
		sum += props[j]
	}
	if !(sum > 0) { // every share underflowed: deal evenly
		for j := range props {
			props[j] = 1
		}
		sum = float64(m)
	}
	// Cut points floor(cumsum(p)·|idx|), as numpy's astype(int).
	lo, cum := 0, 0.0
	for j := range props {
		cum += props[j] / sum
		hi := int(cum * float64(len(idx)))
		if j == m-1 {
			hi = len(idx)
		}
		hi = max(lo, min(hi, len(idx)))
		parts[j] = append(parts[j], idx[lo:hi]...)
		lo = hi
	}
}

// DirichletSizes draws client sizes for a regression set (docs/papers.md §8,
// 003: Dir(c) only draws the sizes): p ~ Dir(c·1_m), then each client gets
// floor + its share p_j of the n − m·floor remaining samples, rounded by
// largest remainders so the sizes sum to n exactly.
func DirichletSizes(n, m int, c float64, floor int, seed uint64) ([]int, error) {
	switch {
	case m < 1:
		return nil, fmt.Errorf("%w: clients=%d: need at least 1", ErrInvalid, m)
	case !(c > 0) || math.IsInf(c, 0):
		return nil, fmt.Errorf("%w: dirichlet_c=%v: must be a finite number > 0", ErrInvalid, c)
	case floor < 0 || n < m*floor:
		return nil, fmt.Errorf("%w: %d samples cannot give %d clients at least %d each", ErrInvalid, n, m, floor)
	}
	props := make([]float64, m)
	newDirichlet(m, c, rand.New(rand.NewPCG(seed, partitionStream+1))).draw(props)
	rest := n - m*floor
	sizes := make([]int, m)
	type frac struct {
		j int
		f float64
	}
	fr := make([]frac, m)
	left := rest
	for j, p := range props {
		share := p * float64(rest)
		sizes[j] = floor + int(share)
		left -= int(share)
		fr[j] = frac{j, share - math.Floor(share)}
	}
	sort.SliceStable(fr, func(a, b int) bool { return fr[a].f > fr[b].f })
	for k := 0; k < left; k++ {
		sizes[fr[k%m].j]++
	}
	return sizes, nil
}

// BySizes deals a seeded random permutation of 0..n−1 into consecutive
// blocks of the given sizes (which must sum to at most n).
func BySizes(n int, sizes []int, seed uint64) [][]int {
	perm := Permutation(n, rand.New(rand.NewPCG(seed, partitionStream+2)))
	out := make([][]int, len(sizes))
	lo := 0
	for j, s := range sizes {
		out[j] = slices.Clone(perm[lo : lo+s])
		slices.Sort(out[j])
		lo += s
	}
	return out
}

// dirichlet draws Dir(c·1_m) vectors as normalised Gamma(c, 1) variates.
type dirichlet struct {
	g distuv.Gamma
}

func newDirichlet(m int, c float64, rng *rand.Rand) dirichlet {
	return dirichlet{g: distuv.Gamma{Alpha: c, Beta: 1, Src: rngSource{rng}}}
}

func (d dirichlet) draw(dst []float64) {
	var sum float64
	for j := range dst {
		dst[j] = d.g.Rand()
		sum += dst[j]
	}
	if !(sum > 0) {
		for j := range dst {
			dst[j] = 1 / float64(len(dst))
		}
		return
	}
	for j := range dst {
		dst[j] /= sum
	}
}

// rngSource lets distuv draw from a *rand.Rand (it wants a rand.Source).
type rngSource struct{ r *rand.Rand }

func (s rngSource) Uint64() uint64 { return s.r.Uint64() }
