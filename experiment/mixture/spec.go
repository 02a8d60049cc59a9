package mixture

import (
	"math"

	"github.com/fedscope/fedscope/datasets"
)

// Spec describes the mixed-regression data and the Phase-1 parameters of
// the two-phase algorithm (paper 004, docs/papers.md §5 and the preset of §8).
type Spec struct {
	Clients int     // M Phase-2 clients, heavy-tailed sizes
	Dim     int     // d
	K       int     // k clusters
	Noise   float64 // σ
	Radius  float64 // R, norm of the drawn truths
	MinSep  float64 // truths are redrawn until Δ ≥ MinSep
	Delta   float64 // Δ: 0 keeps the drawn separation, > 0 rescales the truths to it
	// DeltaAssumed is the Δ handed to FedMD; 0 means the true separation
	// (docs/papers.md §8: the algorithm assumes Δ known; "misspecified Δ" knob).
	DeltaAssumed float64
	Weights      []float64 // mixing weights p; nil = uniform
	CovRatio     float64   // β/α of the per-cluster covariances; 0 = Σ_j = I
	MaxSamples   int       // cap of the client sizes

	Anchors      int     // n_H; 0 = ⌈ln N / p_min⌉ (AnchorsFor)
	Pairs        int     // l
	Pool         int     // m
	Phase1Rounds int     // T
	OIIters      int     // T1, even
	PowerIters   int     // T2
	Epsilon      float64 // ε
	Reuse        bool    // reuse the pool and the anchors' points every Phase-1 round
	Prox         bool    // FedProx local updates instead of FedAvg
}

// data returns the generator of the federation for a seed: the anchors
// hold 2·l·T points and the pool m·T clients in fresh-data mode, 2·l and m
// when data are reused (docs/papers.md §8); the anchor count is resolved
// (anchors).
func (m Spec) data(seed uint64) datasets.Mixture {
	d := m.base()
	d.Anchors, _, _ = m.anchors(seed)
	return d
}

// base is the generator without the anchor count.
func (m Spec) base() datasets.Mixture {
	pts, pool := 2*m.Pairs*m.Phase1Rounds, m.Pool*m.Phase1Rounds
	if m.Reuse {
		pts, pool = 2*m.Pairs, m.Pool
	}
	return datasets.Mixture{Clients: m.Clients, Dim: m.Dim, K: m.K, Radius: m.Radius, MinSep: m.MinSep,
		Delta: m.Delta, Noise: m.Noise, Weights: m.Weights, CovRatio: m.CovRatio, MaxSamples: m.MaxSamples,
		Anchors: m.Anchors, AnchorPoints: pts, PoolClients: pool}
}

// maxAnchors is the largest anchor count, given or resolved.
const maxAnchors = 1000

// anchors returns the number of anchor clients n_H: the given one, or, when
// Anchors is 0, the theory's n_H = ⌈ln N / p_min⌉ (docs/papers.md §5.2, Thm 1:
// then every cluster holds an anchor with probability about 1 − k/N, since
// k(1 − p_min)^{n_H} ≤ k·exp(−p_min n_H) ≤ k/N), with N the Phase-2 points
// of this seed and p_min the smallest mixing weight; at least k and at most
// 1000. need is ⌈ln N / p_min⌉ either way.
func (m Spec) anchors(seed uint64) (n, need int, auto bool) {
	base := m.base()
	if err := base.Validate(); err != nil {
		return max(m.Anchors, m.K), m.K, m.Anchors == 0
	}
	_, sizes := base.LabelsAndSizes(seed)
	total := 0
	for _, s := range sizes {
		total += s
	}
	need = AnchorsFor(total, base.NormalisedWeights())
	if m.Anchors > 0 {
		return m.Anchors, need, false
	}
	return min(max(need, m.K), maxAnchors), need, true
}

// AnchorsFor is the anchor count of docs/papers.md §5.2 (Thm 1), ⌈ln N / p_min⌉,
// for N points and mixing weights p.
func AnchorsFor(n int, p []float64) int {
	pmin := math.Inf(1)
	for _, w := range p {
		pmin = math.Min(pmin, w)
	}
	return int(math.Ceil(math.Log(float64(n)) / pmin))
}

// covRatio returns β/α ≥ 1.
func (m Spec) covRatio() float64 { return math.Max(1, m.CovRatio) }
