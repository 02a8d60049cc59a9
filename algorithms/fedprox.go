package algorithms

import (
	"context"
	"math"

	"github.com/fedscope/fedscope/model"
)

// FedProx replaces the local gradient steps of FedAvg by the exact proximal
// point θ_i = argmin_u l_i(u) + ‖u − θ_{t−1}‖²/(2η) (docs/papers.md §1.4, paper
// 000), solved with a factorisation computed once per client and η; with
// Batch > 0, one epoch of incremental proximal steps on minibatches, each
// centred at the current local iterate and weighted by BatchNorm (1/n_i by
// default, docs/papers.md §1.5 CORRECTED, §8). Aggregation as in FedAvg with
// w_i = n_i/N.
//
// In full batch a round is an affine map of θ (RoundMap), assembled once per
// η from one Cholesky factorisation per client and kept with the problem;
// PerClient solves every client's proximal problem explicitly instead.
type FedProx struct {
	Eta   float64 // η > 0: larger means a weaker pull towards the global model
	Batch int     // B: 0 for the exact full-batch proximal step
	// BatchNorm weighs each minibatch proximal step: 1/n_i (the zero value)
	// or 1/B.
	BatchNorm model.BatchNorm
	Seed      uint64 // seeds the per-round minibatch partitions
	// PerClient, in full batch, solves every client's proximal problem each
	// round (cached Cholesky factors) instead of the round map: the
	// reference the maps are tested against.
	PerClient bool
}

// Run implements Algorithm.
func (a FedProx) Run(ctx context.Context, p *model.Problem, rounds int, emit func(LinearRound)) error {
	if err := validate(a.Eta, a.Batch); err != nil {
		return err
	}
	ws := model.NewWorkspace(p, a.Batch)
	u, next := make([]float64, p.Dim), make([]float64, p.Dim)
	parts := newPartitions(p, a.Batch, a.Seed)
	// Per client in full batch: a cached Cholesky factor of I + ηG_i
	// (n_i ≥ d) or of the n_i×n_i Woodbury system (n_i < d).
	var factors []model.ProxFactor
	if a.Batch == 0 && a.PerClient {
		factors = p.ProxFactors(a.Eta)
	}
	round := func(t int, theta []float64) error {
		parts.shuffle()
		return aggregate(ctx, p, theta, u, next, func(i int, u []float64) {
			switch {
			case a.Batch > 0:
				p.Clients[i].ProxEpoch(u, a.Eta, parts.perm[i], a.Batch, a.BatchNorm, ws)
			default:
				factors[i].Apply(u, ws)
			}
		})
	}
	if a.Batch == 0 && !a.PerClient {
		m, err := problemMap(ctx, p, MapSpec{Prox: true, Eta: a.Eta})
		if err != nil {
			return err
		}
		round = mapRound(m)
	}
	// The proximal map is a contraction for every η (docs/papers.md §1.6: FedProx
	// needs no condition on γ), and so is each minibatch proximal step under
	// either batch weight ((I + η c X_bᵀX_b)⁻¹ has eigenvalues in (0, 1]), so
	// divergence means broken input, not η.
	diverged := func(t int) error { return &DivergedError{Round: t, Eta: a.Eta, Limit: math.NaN()} }
	return loop(ctx, p, rounds, emit, round, diverged)
}
