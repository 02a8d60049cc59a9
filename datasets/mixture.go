package datasets

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fedscope/fedscope/internal/parallel"
)

// Mixture describes a federated mixed-regression population (docs/papers.md §5.1,
// paper 004; defaults in §8): k cluster models θ*_1..θ*_k, every client
// drawing a hidden label z_i ~ p and holding y_i = X_i θ*_{z_i} + ζ_i with rows
// x ~ N(0, Σ_{z_i}) and ζ ~ N(0, σ²).
//
// It holds three kinds of client, each on its own random streams:
//   - Clients heavy-tailed Phase-2 clients, n_i = ⌊2/(1 − cU)^0.8⌋ with
//     U ~ U[0,1] and c = 1 − (2/(MaxSamples+1))^1.25, so 2 ≤ n_i ≤ MaxSamples
//     (§8; see HeavyTailedSize);
//   - Anchors anchor clients with AnchorPoints points each (Phase 1 needs
//     2·l fresh points per round, §5.2 step c);
//   - Pool fresh 2-point clients for the federated orthogonal iteration of
//     Phase 1 (§5.2 step a; m·T of them, or m when data are reused).
//
// True labels are kept for scoring only; no algorithm reads them.
type Mixture struct {
	Clients int     // M, Phase-2 clients
	Dim     int     // d
	K       int     // k ≥ 2 clusters
	Radius  float64 // R: θ*_j = R·u_j with u_j uniform on the unit sphere (§8: R = 2)
	MinSep  float64 // reject truth draws whose separation Δ is below MinSep (§8: 1.5)
	// Delta, when > 0, rescales the drawn truths about their centroid so that
	// the separation Δ = min_{j≠j'} ‖θ*_j − θ*_{j'}‖ is exactly Delta: the knob
	// that makes the problem harder or easier at fixed noise. 0 keeps the draw.
	Delta float64
	Noise float64 // σ
	// Weights are the mixing weights p (normalised here); nil means uniform.
	Weights []float64
	// CovRatio is β/α for the per-cluster covariances Σ_j = c_j·I with
	// c_j = CovRatio^{j/(k−1)}, so α = 1 and β = CovRatio; 0 or 1 gives
	// Σ_j = I for every cluster (§8).
	CovRatio     float64
	MaxSamples   int // largest heavy-tailed client size, where the tail ends (§8: 300)
	Anchors      int // n_H anchor clients
	AnchorPoints int // points per anchor client
	PoolClients  int // 2-point clients available to Phase 1
}

// Limits of the mixture generator.
const (
	MaxClusters    = 16
	maxTruthDraws  = 10_000
	poolStreamBase = 1 << 42 // stream ids of the Phase-1 pool clients
	anchorStream   = 1 << 41 // stream ids of the anchor clients
)

// Validate reports the first inconsistency of the configuration.
func (c Mixture) Validate() error {
	switch {
	case c.Clients < 1:
		return fmt.Errorf("clients=%d: need at least 1 client", c.Clients)
	case c.Dim < 1:
		return fmt.Errorf("dim=%d: need dimension at least 1", c.Dim)
	case c.K < 2 || c.K > MaxClusters:
		return fmt.Errorf("k=%d: the number of clusters must lie in 2..%d", c.K, MaxClusters)
	case !(c.Radius > 0) || math.IsInf(c.Radius, 0):
		return fmt.Errorf("radius=%v: must be a finite number > 0", c.Radius)
	case !(c.MinSep >= 0) || c.MinSep > 2*c.Radius:
		return fmt.Errorf("min_sep=%v: must lie in 0..2·radius=%v", c.MinSep, 2*c.Radius)
	case !(c.Delta >= 0) || math.IsInf(c.Delta, 0):
		return fmt.Errorf("delta=%v: must be a finite number ≥ 0 (0 keeps the drawn separation)", c.Delta)
	case !(c.Noise >= 0) || math.IsInf(c.Noise, 0):
		return fmt.Errorf("noise=%v: must be a finite number ≥ 0", c.Noise)
	case c.Weights != nil && len(c.Weights) != c.K:
		return fmt.Errorf("weights: %d numbers given, need k=%d", len(c.Weights), c.K)
	case !(c.CovRatio >= 0) || math.IsInf(c.CovRatio, 0) || (c.CovRatio > 0 && c.CovRatio < 1):
		return fmt.Errorf("cov_ratio=%v: must be ≥ 1 (0 means 1)", c.CovRatio)
	case c.MaxSamples < 2:
		return fmt.Errorf("max_samples=%d: must be at least 2", c.MaxSamples)
	case c.Anchors < 0 || c.AnchorPoints < 0 || c.PoolClients < 0:
		return fmt.Errorf("anchors, anchor points and pool clients must be ≥ 0")
	}
	for j, w := range c.Weights {
		if !(w > 0) || math.IsInf(w, 0) {
			return fmt.Errorf("weights: p_%d=%v must be a finite number > 0", j+1, w)
		}
	}
	if c.Dim == 1 && c.K > 2 && c.MinSep > 0 {
		return fmt.Errorf("dim=1 holds at most 2 truths on the sphere of radius R; use dim ≥ 2")
	}
	entries := float64(c.Clients)*float64(c.MaxSamples) + float64(c.Anchors)*float64(c.AnchorPoints) + 2*float64(c.PoolClients)
	if entries*float64(c.Dim) > MaxEntries {
		return fmt.Errorf("data of at most %.0f points × dim %d: over the limit of %d numbers", entries, c.Dim, MaxEntries)
	}
	return nil
}

// Pairs holds 2-point clients as flat arrays: client c's points are
// (X1[c·d:(c+1)·d], Y1[c]) and (X2[c·d:(c+1)·d], Y2[c]).
type Pairs struct {
	Count          int
	X1, X2, Y1, Y2 []float64
	Labels         []int // true cluster of each client (scoring only)
}

// MixtureFederation is a generated mixture population.
type MixtureFederation struct {
	Dim, K  int
	Truths  [][]float64 // θ*_1..θ*_k
	Weights []float64   // p, normalised
	Scales  []float64   // c_j, Σ_j = c_j·I
	Delta   float64     // realised separation min_{j≠j'} ‖θ*_j − θ*_{j'}‖
	Radius  float64     // R of the configuration (the scale of a random initialisation)
	Noise   float64

	Clients []Client // Phase-2 clients; Truth is θ*_{z_i} (shared, not copied)
	Labels  []int    // z_i of each Phase-2 client
	Anchors []Client // anchor clients
	// AnchorLabels are the anchors' true clusters.
	AnchorLabels []int
	Pool         Pairs // Phase-1 2-point clients
}

// N returns the number of points of the Phase-2 clients.
func (f *MixtureFederation) N() int {
	n := 0
	for i := range f.Clients {
		n += f.Clients[i].N
	}
	return n
}

// HeavyTailedSize is the client size of docs/papers.md §8 (004) for a uniform
// draw u in [0, 1), with its tail reaching the cap:
//
//	n = ⌊2/(1 − c·u)^0.8⌋,  c = 1 − (2/(cap+1))^1.25,
//
// clamped to [2, cap] (the value stays below cap+1, so n reaches the cap).
// Then, for integers 2 ≤ x ≤ cap,
//
//	P(n ≥ x) = ((2/x)^1.25 − (2/(cap+1))^1.25) / (1 − (2/(cap+1))^1.25):
//
// the Pareto tail P(n ≥ x) ∝ x^−1.25 of §8's formula, truncated at the cap.
// §8 writes c = 0.99 and min(300, ·), but with c = 0.99 the formula never
// exceeds ⌊2·100^0.8⌋ = 79, so a cap of 300 (or 1000) never bound and
// max_samples could only shrink clients; c = 0.99 is nearly this law at
// cap = 79 (c = 0.9899).
func HeavyTailedSize(u float64, cap int) int {
	c := 1 - math.Pow(2/float64(cap+1), 1.25)
	n := int(math.Floor(2 / math.Pow(1-c*u, 0.8)))
	return max(2, min(cap, n))
}

// Truths draws the k cluster models from stream 0 of the seed: θ*_j = R·u_j,
// redrawn until Δ ≥ MinSep (§8), then rescaled about their centroid when
// Delta > 0. It returns the truths and the realised separation.
func (c Mixture) Truths(seed uint64) ([][]float64, float64, error) {
	if err := c.Validate(); err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	rng := stream(seed, 0)
	truths := make([][]float64, c.K)
	for j := range truths {
		truths[j] = make([]float64, c.Dim)
	}
	var delta float64
	for draw := 0; ; draw++ {
		if draw == maxTruthDraws {
			return nil, 0, fmt.Errorf("%w: no draw of k=%d truths of norm %v in dim %d reached separation min_sep=%v in %d tries",
				ErrInvalid, c.K, c.Radius, c.Dim, c.MinSep, maxTruthDraws)
		}
		for _, t := range truths {
			UnitTo(t, rng)
			for a := range t {
				t[a] *= c.Radius
			}
		}
		if delta = separation(truths); delta >= c.MinSep && delta > 0 {
			break
		}
	}
	if c.Delta > 0 {
		centroid := make([]float64, c.Dim)
		for _, t := range truths {
			for a, v := range t {
				centroid[a] += v / float64(c.K)
			}
		}
		f := c.Delta / delta
		for _, t := range truths {
			for a := range t {
				t[a] = centroid[a] + f*(t[a]-centroid[a])
			}
		}
		delta = separation(truths)
	}
	return truths, delta, nil
}

// LabelsAndSizes returns the true labels and sizes of the Phase-2 clients
// without generating their data: they are the first two draws of each
// client's stream, exactly as in Generate.
func (c Mixture) LabelsAndSizes(seed uint64) (labels, sizes []int) {
	cum := c.cumulativeWeights()
	labels, sizes = make([]int, c.Clients), make([]int, c.Clients)
	for i := range labels {
		rng := stream(seed, uint64(i)+1)
		labels[i] = pick(cum, rng.Float64())
		sizes[i] = HeavyTailedSize(rng.Float64(), c.MaxSamples)
	}
	return labels, sizes
}

// Generate draws the whole population for the given seed. Client i of
// Phase 2 draws from stream i+1, anchor h from stream 2^41+h and pool client c
// from stream 2^42+c, so the result does not depend on parallelism.
func (c Mixture) Generate(seed uint64) (*MixtureFederation, error) {
	truths, delta, err := c.Truths(seed)
	if err != nil {
		return nil, err
	}
	fed := &MixtureFederation{Dim: c.Dim, K: c.K, Truths: truths, Delta: delta, Radius: c.Radius, Noise: c.Noise,
		Weights: c.NormalisedWeights(), Scales: make([]float64, c.K)}
	cum := c.cumulativeWeights()
	for j := range fed.Scales {
		fed.Scales[j] = 1
		if c.CovRatio > 1 {
			fed.Scales[j] = math.Pow(c.CovRatio, float64(j)/float64(c.K-1))
		}
	}
	fed.Clients, fed.Labels = make([]Client, c.Clients), make([]int, c.Clients)
	parallel.For(c.Clients, func(i int) {
		rng := stream(seed, uint64(i)+1)
		z := pick(cum, rng.Float64())
		fed.Clients[i], fed.Labels[i] = fed.client(rng, z, HeavyTailedSize(rng.Float64(), c.MaxSamples)), z
	})
	fed.Anchors, fed.AnchorLabels = make([]Client, c.Anchors), make([]int, c.Anchors)
	parallel.For(c.Anchors, func(h int) {
		rng := stream(seed, anchorStream+uint64(h))
		z := pick(cum, rng.Float64())
		fed.Anchors[h], fed.AnchorLabels[h] = fed.client(rng, z, c.AnchorPoints), z
	})
	fed.Pool = fed.pool(seed, c.PoolClients, cum)
	return fed, nil
}

// client draws a client of cluster z with n points from rng.
func (f *MixtureFederation) client(rng *rand.Rand, z, n int) Client {
	cl := Client{N: n, X: make([]float64, n*f.Dim), Y: make([]float64, n), Truth: f.Truths[z]}
	f.drawRows(rng, z, cl.X, cl.Y)
	return cl
}

// pool draws the m 2-point clients of Phase 1, client p from stream
// 2^42+p, in blocks (they are many and tiny).
func (f *MixtureFederation) pool(seed uint64, m int, cum []float64) Pairs {
	d := f.Dim
	pool := Pairs{Count: m, X1: make([]float64, m*d), X2: make([]float64, m*d),
		Y1: make([]float64, m), Y2: make([]float64, m), Labels: make([]int, m)}
	const block = 512
	parallel.For((m+block-1)/block, func(b int) {
		for p := b * block; p < min(m, (b+1)*block); p++ {
			rng := stream(seed, poolStreamBase+uint64(p))
			z := pick(cum, rng.Float64())
			pool.Labels[p] = z
			f.drawRows(rng, z, pool.X1[p*d:(p+1)*d], pool.Y1[p:p+1])
			f.drawRows(rng, z, pool.X2[p*d:(p+1)*d], pool.Y2[p:p+1])
		}
	})
	return pool
}

// drawRows fills len(y) rows of x and y for cluster z from rng:
// x ~ N(0, c_z I), y = xᵀθ*_z + σζ.
func (f *MixtureFederation) drawRows(rng *rand.Rand, z int, x, y []float64) {
	d := f.Dim
	sd := math.Sqrt(f.Scales[z])
	for j := range y {
		row := x[j*d : (j+1)*d]
		var dot float64
		for a := range row {
			row[a] = sd * rng.NormFloat64()
			dot += row[a] * f.Truths[z][a]
		}
		y[j] = dot + f.Noise*rng.NormFloat64()
	}
}

// NormalisedWeights returns the mixing weights p, summing to 1 (uniform
// when Weights is nil), as Generate reports them.
func (c Mixture) NormalisedWeights() []float64 {
	cum := c.cumulativeWeights()
	p := make([]float64, c.K)
	for j := range p {
		lo := 0.0
		if j > 0 {
			lo = cum[j-1]
		}
		p[j] = cum[j] - lo
	}
	return p
}

// cumulativeWeights returns the normalised cumulative mixing weights.
func (c Mixture) cumulativeWeights() []float64 {
	cum := make([]float64, c.K)
	var total float64
	for j := range cum {
		w := 1.0
		if c.Weights != nil {
			w = c.Weights[j]
		}
		total += w
		cum[j] = total
	}
	for j := range cum {
		cum[j] /= total
	}
	cum[c.K-1] = 1
	return cum
}

// pick returns the first j with u < cum[j].
func pick(cum []float64, u float64) int {
	for j, c := range cum {
		if u < c {
			return j
		}
	}
	return len(cum) - 1
}

// separation returns Δ = min_{j≠j'} ‖θ_j − θ_j'‖.
func separation(ts [][]float64) float64 {
	delta := math.Inf(1)
	for j := range ts {
		for l := j + 1; l < len(ts); l++ {
			delta = math.Min(delta, dist(ts[j], ts[l]))
		}
	}
	return delta
}
