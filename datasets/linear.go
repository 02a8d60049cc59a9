package datasets

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/fedscope/fedscope/internal/parallel"
)

// GammaScheme selects how per-client truths are drawn for a prescribed model
// heterogeneity Γ. The paper does not say (docs/papers.md §7, 000); §8 gives both.
type GammaScheme int

const (
	// GammaRadius draws θ_i* = θ* + Γ·u_i with u_i uniform on the unit sphere,
	// so Γ is a perturbation radius and the realised max pairwise distance is
	// about √2·Γ (docs/papers.md §8, 000, the recommended default).
	GammaRadius GammaScheme = iota
	// GammaExact draws δ_i ~ N(0, I_d) and rescales all of them by one common
	// factor so that max_{i,j} ‖δ_i − δ_j‖ = Γ exactly (docs/papers.md §8, 000).
	GammaExact
)

// String returns the scheme's name as used on the command line.
func (s GammaScheme) String() string {
	if s == GammaExact {
		return "exact"
	}
	return "radius"
}

// Linear describes a Gaussian linear-regression federation
// (docs/papers.md §1.1 and §1.9, paper 000): y_i = X_i θ_i* + ξ_i with
// ξ ~ N(0, σ²), θ* ~ N(0, I_d), X_i rows i.i.d. N(0, I_d) or, with a covariate
// subspace, N(0, (d/r)·I_E) on a random coordinate set E of size r.
// The zero value is not useful; see the presets in package experiment.
type Linear struct {
	Clients       int         // M, number of clients
	Dim           int         // d, feature dimension
	Samples       int         // n_i of the data-rich (or all) clients
	ScarceClients int         // how many clients (the first ones) are data-scarce
	ScarceSamples int         // n_i of the data-scarce clients
	Noise         float64     // σ, standard deviation of the label noise
	Gamma         float64     // Γ, model heterogeneity (0 = one common truth)
	Scheme        GammaScheme // how Γ is realised
	SubspaceDim   int         // r, covariate subspace dimension; 0 means r = d (no covariate shift)
}

// MaxEntries bounds the size of a generated design (M·n·d numbers) so that a
// typo on the command line gives an error instead of exhausting memory.
const MaxEntries = 50_000_000

// checkSizes reports the first of clients, dim and samples per client
// below 1, the sizes every synthetic federation needs.
func checkSizes(clients, dim, samples int) error {
	switch {
	case clients < 1:
		return fmt.Errorf("clients=%d: need at least 1 client", clients)
	case dim < 1:
		return fmt.Errorf("dim=%d: need dimension at least 1", dim)
	case samples < 1:
		return fmt.Errorf("samples=%d: need at least 1 sample per client", samples)
	}
	return nil
}

// Validate reports the first inconsistency of the configuration.
func (c Linear) Validate() error {
	if err := checkSizes(c.Clients, c.Dim, c.Samples); err != nil {
		return err
	}
	switch {
	case c.ScarceClients < 0 || c.ScarceClients > c.Clients:
		return fmt.Errorf("scarce_clients=%d: must lie in 0..clients=%d", c.ScarceClients, c.Clients)
	case c.ScarceClients > 0 && c.ScarceSamples < 1:
		return fmt.Errorf("scarce_samples=%d: need at least 1 sample per data-scarce client", c.ScarceSamples)
	case !(c.Noise >= 0) || math.IsInf(c.Noise, 0):
		return fmt.Errorf("noise=%v: must be a finite number ≥ 0", c.Noise)
	case !(c.Gamma >= 0) || math.IsInf(c.Gamma, 0):
		return fmt.Errorf("gamma=%v: must be a finite number ≥ 0", c.Gamma)
	case c.SubspaceDim < 0 || c.SubspaceDim > c.Dim:
		return fmt.Errorf("subspace_dim=%d: must lie in 1..dim=%d (0 means dim)", c.SubspaceDim, c.Dim)
	}
	if n := c.TotalSamples(); float64(n)*float64(c.Dim) > MaxEntries {
		return fmt.Errorf("clients × samples × dim = %d × %d: over the limit of %d numbers", n, c.Dim, MaxEntries)
	}
	return nil
}

// SamplesOf returns n_i for client i: the first ScarceClients clients are
// data-scarce (docs/papers.md §1.9, E000-3/4 use 10 scarce and 10 rich clients).
func (c Linear) SamplesOf(i int) int {
	if i < c.ScarceClients {
		return c.ScarceSamples
	}
	return c.Samples
}

// TotalSamples returns N = Σ n_i.
func (c Linear) TotalSamples() int {
	n := 0
	for i := 0; i < c.Clients; i++ {
		n += c.SamplesOf(i)
	}
	return n
}

// Client is one participant's local data set.
type Client struct {
	N int // n_i
	// X is the n_i × d design, row-major; in a compact federation
	// (Federation.Compact) a client with a Support keeps only those columns,
	// n_i × |Support|, the others being zero.
	X       []float64
	Y       []float64 // n_i responses
	Truth   []float64 // θ_i*, the client's own true parameter
	Support []int     // coordinate set E of the covariate subspace, sorted; nil when r = d
}

// Cols returns the number of columns of the client's X: d, or |Support| in
// a compact federation.
func (c *Client) Cols(fed *Federation) int {
	if fed.Compact && c.Support != nil {
		return len(c.Support)
	}
	return fed.Dim
}

// Federation is a set of clients sharing one feature space.
type Federation struct {
	Dim     int
	Clients []Client
	Truth   []float64 // θ*, the common (centre) truth
	Noise   float64   // σ used to draw the labels

	// RealisedGamma is max_{i,j} ‖θ_i* − θ_j*‖, the paper's definition of Γ
	// (docs/papers.md §1.7, Cor. 1), which the radius scheme only approximates.
	RealisedGamma float64

	// Compact federations store a covariate-subspace client's design on its
	// support only (see Client.X): r/d of the memory, the same numbers.
	Compact bool
}

// N returns the total number of samples Σ n_i.
func (f *Federation) N() int {
	n := 0
	for i := range f.Clients {
		n += f.Clients[i].N
	}
	return n
}

// Heterogeneous reports whether any client's truth differs from θ* (with a
// single client in the radius scheme, RealisedGamma is 0 although its truth
// is perturbed).
func (f *Federation) Heterogeneous() bool {
	for i := range f.Clients {
		if dist(f.Clients[i].Truth, f.Truth) > 0 {
			return true
		}
	}
	return false
}

// ErrInvalid wraps every configuration error so callers can tell bad input
// from internal failures.
var ErrInvalid = errors.New("invalid data configuration")

// Generate draws the federation for the given seed.
func (c Linear) Generate(seed uint64) (*Federation, error) {
	fed := &Federation{}
	if err := c.GenerateInto(fed, seed, false); err != nil {
		return nil, err
	}
	return fed, nil
}

// GenerateCompact draws the same federation as Generate in compact form: a
// covariate-subspace client's design is drawn as its n_i × r non-zero
// columns only (Client.X), the same numbers from the same streams.
func (c Linear) GenerateCompact(seed uint64) (*Federation, error) {
	fed := &Federation{}
	if err := c.GenerateInto(fed, seed, true); err != nil {
		return nil, err
	}
	return fed, nil
}

// GenerateInto draws the federation for the given seed into fed (compact
// or not), reusing fed's memory where it is large enough: a sweep that draws
// trial after trial into one federation allocates little beyond the random
// streams.
func (c Linear) GenerateInto(fed *Federation, seed uint64, compact bool) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	d := c.Dim
	clients := fed.Clients
	if cap(clients) < c.Clients {
		clients = append(clients[:cap(clients)], make([]Client, c.Clients-cap(clients))...)
	}
	*fed = Federation{Dim: d, Clients: clients[:c.Clients], Truth: growFloats(fed.Truth, d), Noise: c.Noise, Compact: compact}
	shared := stream(seed, 0)
	for k := range fed.Truth {
		fed.Truth[k] = shared.NormFloat64() // θ* ~ N(0, I_d) (docs/papers.md §8, 000)
	}
	rngs, deltas := c.perturbations(seed)
	// Each client draws only from its own stream, so the clients can be
	// built in parallel with the same result on any number of CPUs.
	parallel.For(len(fed.Clients), func(i int) {
		cl := &fed.Clients[i]
		cl.N = c.SamplesOf(i)
		cl.Truth = append(cl.Truth[:0], fed.Truth...)
		if deltas[i] != nil {
			for k := range cl.Truth {
				cl.Truth[k] += deltas[i][k]
			}
		}
		c.drawClient(cl, rngs[i], compact)
	})
	// Every truth is θ* without heterogeneity: Γ = 0 without an O(M²d) scan.
	if c.Gamma > 0 {
		fed.RealisedGamma = diameter(fed.Clients)
	}
	return nil
}

// perturbations returns every client's random stream and, with model
// heterogeneity, the perturbation of its truth drawn first from it.
func (c Linear) perturbations(seed uint64) ([]*rand.Rand, [][]float64) {
	rngs := make([]*rand.Rand, c.Clients)
	deltas := make([][]float64, c.Clients)
	for i := range rngs {
		rngs[i] = stream(seed, uint64(i)+1)
		if c.Gamma > 0 {
			deltas[i] = drawPerturbation(rngs[i], c.Dim, c.Gamma, c.Scheme)
		}
	}
	if c.Gamma > 0 && c.Scheme == GammaExact {
		scaleToDiameter(deltas, c.Gamma)
	}
	return rngs, deltas
}

// drawClient draws a client's covariate subspace and its rows and
// responses y = x·θ_i + σε from rng, given its truth and size: rows
// N(0, I_d), or with a subspace of r < d coordinates rows on them scaled by
// √(d/r), so that E‖x‖² = d for every r (E000-4), stored on the subspace
// only when compact.
func (c Linear) drawClient(cl *Client, rng *rand.Rand, compact bool) {
	d, r := c.Dim, c.SubspaceDim
	if r == 0 {
		r = d
	}
	buf := cl.Support
	cl.Support = nil
	if r < d {
		cl.Support = randomSubset(rng, d, r, buf)
	}
	cols := d
	if compact && cl.Support != nil {
		cols = r
	}
	scale := math.Sqrt(float64(d) / float64(r))
	cl.X = growFloats(cl.X, cl.N*cols)
	cl.Y = growFloats(cl.Y, cl.N)
	for j := 0; j < cl.N; j++ {
		row := cl.X[j*cols : (j+1)*cols]
		var dot float64
		switch {
		case cl.Support == nil:
			for k := range row {
				row[k] = rng.NormFloat64()
			}
			for k, v := range row {
				dot += v * cl.Truth[k]
			}
		case cols == r:
			// The same draws, in the order of the support, as the dense
			// rows below; the zero columns add nothing to x·θ.
			for a, k := range cl.Support {
				row[a] = scale * rng.NormFloat64()
				dot += row[a] * cl.Truth[k]
			}
		default:
			clear(row)
			for _, k := range cl.Support {
				row[k] = scale * rng.NormFloat64()
			}
			for k, v := range row {
				dot += v * cl.Truth[k]
			}
		}
		cl.Y[j] = dot + c.Noise*rng.NormFloat64()
	}
}

func growFloats(buf []float64, n int) []float64 {
	if cap(buf) < n {
		return make([]float64, n)
	}
	return buf[:n]
}

// drawPerturbation returns Γ·u with u uniform on the sphere (radius scheme) or
// an unscaled δ ~ N(0, I_d) (exact scheme, rescaled later).
func drawPerturbation(rng *rand.Rand, d int, gamma float64, scheme GammaScheme) []float64 {
	v := make([]float64, d)
	norm := GaussianTo(v, rng)
	if scheme == GammaExact {
		return v
	}
	f := gamma / math.Sqrt(norm)
	for k := range v {
		v[k] *= f
	}
	return v
}

// scaleToDiameter rescales all vectors by one factor so that their maximum
// pairwise distance equals gamma.
func scaleToDiameter(vs [][]float64, gamma float64) {
	diam := maxPairwise(len(vs), func(i, j int) float64 { return dist(vs[i], vs[j]) })
	if diam == 0 {
		// A single client: Γ is 0 by definition, so its truth is θ* (the
		// unscaled δ ~ N(0, I_d) must not be left in place).
		for _, v := range vs {
			clear(v)
		}
		return
	}
	f := gamma / diam
	for _, v := range vs {
		for k := range v {
			v[k] *= f
		}
	}
}

func diameter(cs []Client) float64 {
	return maxPairwise(len(cs), func(i, j int) float64 { return dist(cs[i].Truth, cs[j].Truth) })
}

// maxPairwise returns max_{i<j} f(i, j), the rows i in parallel; a maximum
// does not depend on the order, so neither does the result.
func maxPairwise(n int, f func(i, j int) float64) float64 {
	rows := make([]float64, n)
	parallel.For(n, func(i int) {
		for j := i + 1; j < n; j++ {
			rows[i] = math.Max(rows[i], f(i, j))
		}
	})
	var m float64
	for _, v := range rows {
		m = math.Max(m, v)
	}
	return m
}

func dist(a, b []float64) float64 {
	var s float64
	for k := range a {
		t := a[k] - b[k]
		s += t * t
	}
	return math.Sqrt(s)
}

// randomSubset returns r distinct indices of 0..d-1 in increasing order, by a
// partial Fisher–Yates shuffle, in buf's memory when it can hold d indices.
func randomSubset(rng *rand.Rand, d, r int, buf []int) []int {
	perm := buf[:0]
	if cap(perm) < d {
		perm = make([]int, 0, d)
	}
	perm = perm[:d]
	for k := range perm {
		perm[k] = k
	}
	for k := 0; k < r; k++ {
		j := k + rng.IntN(d-k)
		perm[k], perm[j] = perm[j], perm[k]
	}
	out := perm[:r]
	slices.Sort(out)
	return out
}
