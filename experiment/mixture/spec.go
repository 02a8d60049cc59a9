package mixture

import (
	"math"

	"github.com/fedscope/fedscope/datasets"
)

// Spec describes the mixed-regression data and the Phase-1 parameters of
// the two-phase algorithm (paper 004, PAPERS.md §5 and the preset of §8).
type Spec struct {
	Clients int     // M Phase-2 clients, heavy-tailed sizes
	Dim     int     // d
	K       int     // k clusters
	Noise   float64 // σ
	Radius  float64 // R, norm of the drawn truths
	MinSep  float64 // truths are redrawn until Δ ≥ MinSep
	Delta   float64 // Δ: 0 keeps the drawn separation, > 0 rescales the truths to it
	// DeltaAssumed is the Δ handed to FedMD; 0 means the true separation
	// (PAPERS.md §8: the algorithm assumes Δ known; "misspecified Δ" knob).
	DeltaAssumed float64
	Weights      []float64 // mixing weights p; nil = uniform
	CovRatio     float64   // β/α of the per-cluster covariances; 0 = Σ_j = I
	MaxSamples   int       // cap of the client sizes

	Anchors      int     // n_H
	Pairs        int     // l
	Pool         int     // m
	Phase1Rounds int     // T
	OIIters      int     // T1, even
	PowerIters   int     // T2
	Epsilon      float64 // ε
	Reuse        bool    // reuse the pool and the anchors' points every Phase-1 round
	Prox         bool    // FedProx local updates instead of FedAvg
}

// data returns the generator of the federation: the anchors hold 2·l·T
// points and the pool m·T clients in fresh-data mode, 2·l and m when data are
// reused (PAPERS.md §8).
func (m Spec) data() datasets.Mixture {
	pts, pool := 2*m.Pairs*m.Phase1Rounds, m.Pool*m.Phase1Rounds
	if m.Reuse {
		pts, pool = 2*m.Pairs, m.Pool
	}
	return datasets.Mixture{Clients: m.Clients, Dim: m.Dim, K: m.K, Radius: m.Radius, MinSep: m.MinSep,
		Delta: m.Delta, Noise: m.Noise, Weights: m.Weights, CovRatio: m.CovRatio, MaxSamples: m.MaxSamples,
		Anchors: m.Anchors, AnchorPoints: pts, PoolClients: pool}
}

// covRatio returns β/α ≥ 1.
func (m Spec) covRatio() float64 { return math.Max(1, m.CovRatio) }
