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
	Phase1Rounds int     // T; 0 = what the proof of Thm 1 needs (ProofRounds), capped
	OIIters      int     // T1, even
	PowerIters   int     // T2
	Epsilon      float64 // ε
	Reuse        bool    // reuse the pool and the anchors' points every Phase-1 round
	Prox         bool    // FedProx local updates instead of FedAvg
}

// data returns the generator of the federation for a seed: the anchors
// hold 2·l·T points and the pool m·T clients in fresh-data mode, 2·l and m
// when data are reused (docs/papers.md §8); the Phase-1 rounds and the
// anchor count are resolved (resolve).
func (m Spec) data(seed uint64) datasets.Mixture {
	return m.resolve(seed).base()
}

// resolve returns the spec with the Phase-1 rounds T and the anchor count
// n_H resolved for the drawn instance (phase1Rounds, anchors).
func (m Spec) resolve(seed uint64) Spec {
	m.Phase1Rounds, _, _ = m.phase1Rounds(seed)
	m.Anchors, _, _ = m.anchors(seed)
	return m
}

// maxPhase1Rounds caps the Phase-1 rounds the proof asks for.
const maxPhase1Rounds = 60

// phase1Rounds returns T: the given one, or, when Phase1Rounds is 0, the
// rounds the proof of Thm 1 needs for the drawn instance, ⌈ProofRounds⌉
// (at least 1, at most maxPhase1Rounds); need is ProofRounds either way
// (NaN when the truths cannot be drawn).
func (m Spec) phase1Rounds(seed uint64) (t int, need float64, auto bool) {
	need = math.NaN()
	b := m.base()
	if ts, delta, err := b.Truths(seed); err == nil {
		if m.DeltaAssumed > 0 {
			delta = m.DeltaAssumed
		}
		need = ProofRounds(1, m.covRatio(), radiusOf(ts), m.Epsilon, delta)
	}
	if m.Phase1Rounds > 0 {
		return m.Phase1Rounds, need, false
	}
	if math.IsNaN(need) {
		return 1, need, true
	}
	return min(max(int(math.Ceil(need)), 1), maxPhase1Rounds), need, true
}

// radiusOf returns the largest norm of the truths, R.
func radiusOf(ts [][]float64) float64 {
	var r float64
	for _, t := range ts {
		var s float64
		for _, v := range t {
			s += v * v
		}
		r = math.Max(r, math.Sqrt(s))
	}
	return r
}

// ProofRounds is the number of Phase-1 rounds the proof of Thm 1 takes,
// (16β²/α²) log(βR/(εΔ)) (docs/papers.md §5.2): Prop. 2 shrinks an anchor's
// residual by 1 − α²/(8β²) per round, from βR down to εΔ. At least 0.
func ProofRounds(alpha, beta, radius, eps, delta float64) float64 {
	return math.Max(0, 16*beta*beta/(alpha*alpha)*math.Log(beta*radius/(eps*delta)))
}

// base is the generator with the spec's counts as they are (0 rounds and 0
// anchors when unresolved: enough for the truths and the sizes).
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
// k(1 − p_min)^{n_H} ≤ k·exp(−p_min n_H) ≤ k/N), with p_min the smallest
// mixing weight and N = Σ n_i over every client of the run (paper 004,
// Sec. 2; docs/papers.md §8, corrected): the Phase-2 points of this seed, the
// 2-point clients of Phase 1 and the anchors' own points, which depend on
// n_H — so n_H is the fixed point of n ↦ ⌈ln N(n) / p_min⌉ (reached in a few
// steps: N grows by a fraction per anchor); at least k and at most 1000.
// need is that count either way, total the N it rests on.
func (m Spec) anchors(seed uint64) (n, need int, auto bool) {
	n, need, auto, _ = m.anchorCount(seed)
	return n, need, auto
}

// anchorCount is anchors with the N it rests on.
func (m Spec) anchorCount(seed uint64) (n, need int, auto bool, total int) {
	rounds, _, _ := m.phase1Rounds(seed)
	r := m
	r.Phase1Rounds = rounds
	base := r.base()
	base.Anchors = 0
	if err := base.Validate(); err != nil {
		return max(m.Anchors, m.K), m.K, m.Anchors == 0, 0
	}
	_, sizes := base.LabelsAndSizes(seed)
	fixed := 2 * base.PoolClients // the 2-point clients of Phase 1
	for _, s := range sizes {
		fixed += s
	}
	weights := base.NormalisedWeights()
	count := func(anchors int) (int, int) {
		total := fixed + anchors*base.AnchorPoints
		return AnchorsFor(total, weights), total
	}
	if m.Anchors > 0 {
		need, total = count(m.Anchors)
		return m.Anchors, need, false, total
	}
	a := m.K
	for range 50 {
		need, total = count(a)
		next := min(max(need, m.K), maxAnchors)
		if next == a {
			break
		}
		a = next
	}
	return a, need, true, total
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
