package algorithms

import (
	"context"
	"math"

	"github.com/fedscope/fedscope/model"
)

// FedProx replaces the local gradient steps of FedAvg by the exact proximal
// point θ_i = argmin_u l_i(u) + ‖u − θ_{t−1}‖²/(2η) (PAPERS.md §1.4, paper
// 000), solved with a factorisation computed once per client and η; with
// Batch > 0, one epoch of incremental proximal steps on minibatches, each
// centred at the current local iterate and weighted by BatchNorm (1/n_i by
// default, PAPERS.md §1.5 CORRECTED, §8). Aggregation as in FedAvg with
// w_i = n_i/N.
type FedProx struct {
	Eta   float64 // η > 0: larger means a weaker pull towards the global model
	Batch int     // B: 0 for the exact full-batch proximal step
	// BatchNorm weighs each minibatch proximal step: 1/n_i (the zero value)
	// or 1/B.
	BatchNorm model.BatchNorm
	Seed      uint64 // seeds the per-round minibatch partitions
}

// Run implements Algorithm.
func (a FedProx) Run(ctx context.Context, p *model.Problem, rounds int, emit func(LinearRound)) error {
	if err := validate(a.Eta, a.Batch); err != nil {
		return err
	}
	ws := model.NewWorkspace(p, a.Batch)
	u, next := make([]float64, p.Dim), make([]float64, p.Dim)
	parts := newPartitions(p, a.Batch, a.Seed)
	// Full batch: clients with a Gram matrix solve the proximal problem in
	// the eigenbasis of their Hessian (one decomposition serves every η); the
	// others (n_i < d) use a cached Cholesky factor of the n_i×n_i Woodbury
	// system.
	var spectra []*model.Spectrum
	var maps []model.DiagonalMap
	var factors []model.ProxFactor
	if a.Batch == 0 {
		spectra = p.Spectra()
		maps = make([]model.DiagonalMap, len(spectra))
		for i, sp := range spectra {
			if sp != nil {
				maps[i] = sp.ProxMap(a.Eta)
			} else if factors == nil {
				factors = p.ProxFactors(a.Eta)
			}
		}
	}
	round := func(t int, theta []float64) error {
		parts.shuffle()
		return aggregate(ctx, p, theta, u, next, func(i int, u []float64) {
			switch {
			case a.Batch > 0:
				p.Clients[i].ProxEpoch(u, a.Eta, parts.perm[i], a.Batch, a.BatchNorm, ws)
			case spectra[i] != nil:
				spectra[i].Apply(u, maps[i], ws)
			default:
				factors[i].Apply(u, ws)
			}
		})
	}
	// The proximal map is a contraction for every η (PAPERS.md §1.6: FedProx
	// needs no condition on γ), and so is each minibatch proximal step under
	// either batch weight ((I + η c X_bᵀX_b)⁻¹ has eigenvalues in (0, 1]), so
	// divergence means broken input, not η.
	diverged := func(t int) error { return &DivergedError{Round: t, Eta: a.Eta, Limit: math.NaN()} }
	return loop(ctx, p, rounds, emit, round, diverged)
}
