package algorithms

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fedscope/fedscope/model"
)

// FedAvg is federated averaging with full participation and weights
// w_i = n_i/N (docs/papers.md §1.3, paper 000). Each round every client starts
// from the global model and runs LocalSteps full-batch gradient steps on its
// loss l_i(θ) = 1/(2n_i)‖y_i − X_iθ‖², or, when Batch > 0, LocalSteps epochs
// of minibatch gradient steps (docs/papers.md §1.5), each step weighted by
// BatchNorm (1/n_i by default: one epoch is an incremental-gradient version
// of one full step); the server averages.
//
// In full batch a round is an affine map of θ (RoundMap), assembled once per
// (η, s) and kept with the problem, so a round costs one d×d product
// whatever M and s are; PerClient runs the clients' steps explicitly instead.
type FedAvg struct {
	Eta        float64 // step size η > 0
	LocalSteps int     // s ≥ 1: gradient steps (full batch) or epochs (minibatch) per round
	Batch      int     // B: 0 for full batch; otherwise the minibatch size
	// BatchNorm weighs each minibatch step: 1/n_i (the zero value) or 1/B.
	BatchNorm model.BatchNorm
	Seed      uint64 // seeds the per-round minibatch partitions
	// PerClient, in full batch, runs s explicit gradient steps on every
	// client each round instead of the round map: the reference the maps
	// are tested against.
	PerClient bool
}

// Run implements Algorithm.
func (a FedAvg) Run(ctx context.Context, p *model.Problem, rounds int, emit func(LinearRound)) error {
	if err := validate(a.Eta, a.Batch); err != nil {
		return err
	}
	if a.LocalSteps < 1 {
		return fmt.Errorf("%w: local steps s=%d must be at least 1", ErrBadParams, a.LocalSteps)
	}
	ws := model.NewWorkspace(p, a.Batch)
	u, next := make([]float64, p.Dim), make([]float64, p.Dim)
	parts := newPartitions(p, a.Batch, a.Seed)
	round := func(t int, theta []float64) error {
		parts.shuffle()
		return aggregate(ctx, p, theta, u, next, func(i int, u []float64) {
			s := &p.Clients[i]
			switch {
			case a.Batch == 0:
				s.GDSteps(u, a.Eta, a.LocalSteps, ws)
			default:
				for e := 0; e < a.LocalSteps; e++ {
					s.MinibatchEpoch(u, a.Eta, parts.perm[i], a.Batch, a.BatchNorm, ws)
				}
			}
		})
	}
	if a.Batch == 0 && !a.PerClient {
		m, err := problemMap(ctx, p, MapSpec{Eta: a.Eta, Steps: a.LocalSteps})
		if err != nil {
			return err
		}
		round = mapRound(m)
	}
	diverged := func(t int) error {
		e := &DivergedError{Round: t, Eta: a.Eta}
		pooled, client := p.Curvature()
		switch {
		case a.Batch > 0:
			e.Limit, e.Of = minibatchLimit(p, parts, a.BatchNorm)
		case a.LocalSteps == 1:
			// s = 1 is centralised gradient descent on the pooled loss.
			e.Limit, e.Of = 2/pooled, "the global Hessian"
		default:
			e.Limit, e.Of = 2/client, "the local Hessians"
		}
		return e
	}
	return loop(ctx, p, rounds, emit, round, diverged)
}

func validate(eta float64, batch int) error {
	if !(eta > 0) || math.IsInf(eta, 0) {
		return fmt.Errorf("%w: step size η=%v must be a finite number > 0", ErrBadParams, eta)
	}
	if batch < 0 {
		return fmt.Errorf("%w: batch size B=%d must be ≥ 0 (0 = full batch)", ErrBadParams, batch)
	}
	return nil
}

// aggregate runs one round with full participation: each client i starts
// from θ, updates its copy in place with local(i, u), and the server averages
// the results with weights w_i = n_i/N into θ (docs/papers.md §1.3, step 3).
func aggregate(ctx context.Context, p *model.Problem, theta, u, next []float64, local func(i int, u []float64)) error {
	clear(next)
	for i := range p.Clients {
		if err := ctx.Err(); err != nil {
			return err
		}
		copy(u, theta)
		local(i, u)
		axpy(p.Weights[i], u, next)
	}
	copy(theta, next)
	return nil
}

func axpy(alpha float64, x, y []float64) {
	for k, v := range x {
		y[k] += alpha * v
	}
}

// partitions holds each client's row order for the current round. docs/papers.md
// §8 (E000-2): a fresh random permutation at the start of every round, split
// into consecutive batches, reused for the s passes of the round. Client i
// shuffles with its own stream, so racers and reruns see the same batches.
type partitions struct {
	batch int
	perm  [][]int
	rng   []*rand.Rand
}

func newPartitions(p *model.Problem, batch int, seed uint64) *partitions {
	if batch == 0 {
		return &partitions{}
	}
	ps := &partitions{batch: batch, perm: make([][]int, len(p.Clients)), rng: make([]*rand.Rand, len(p.Clients))}
	for i := range p.Clients {
		ps.perm[i] = make([]int, p.Clients[i].N)
		ps.rng[i] = rand.New(rand.NewPCG(seed, minibatchStream+uint64(i)))
	}
	return ps
}

// minibatchStream offsets the minibatch streams from the data streams of
// package datasets (which use 0..M).
const minibatchStream = 1 << 40

func (ps *partitions) shuffle() {
	for i, perm := range ps.perm {
		for j := range perm {
			perm[j] = j
		}
		rng := ps.rng[i]
		for j := len(perm) - 1; j > 0; j-- {
			k := rng.IntN(j + 1)
			perm[j], perm[k] = perm[k], perm[j]
		}
	}
}

// curvature returns the largest c·λ_max(X_bᵀX_b) over the current batches,
// with the batch weight c of norm (1/n_i or 1/|b|).
func (ps *partitions) curvature(p *model.Problem, norm model.BatchNorm) float64 {
	var c float64
	for i, perm := range ps.perm {
		s := &p.Clients[i]
		for lo := 0; lo < len(perm); lo += ps.batch {
			idx := perm[lo:min(lo+ps.batch, len(perm))]
			// RowsCurvature is λ_max(X_bᵀX_b/|b|).
			lam := model.RowsCurvature(s.X, s.Dim, idx) * float64(len(idx))
			c = math.Max(c, lam*norm.Scale(s.N, len(idx)))
		}
	}
	return c
}

// minibatchLimit is the stable step of minibatch FedAvg and what it refers
// to. One step is u ← (I − η c X_bᵀX_b) u + η c X_bᵀy_b; its linear part is
// non-expansive iff η c λ_max(X_bᵀX_b) ≤ 2, and an epoch, a product of such
// factors, is then non-expansive too. So the limit is
// 2 / max_{i,b} c λ_max(X_bᵀX_b): with c = 1/n_i (NormLocal) the batches'
// shares of the local Hessians, never larger than X_iᵀX_i/n_i (X_bᵀX_b ⪯
// X_iᵀX_i), so the limit is at least the full-batch one 2/λ_max(X_iᵀX_i/n_i);
// with c = 1/|b| (NormBatch) the minibatch Hessians X_bᵀX_b/|b|, n_i/|b| times
// larger, so the limit is n_i/|b| times smaller (docs/papers.md §1.5, §1.6).
func minibatchLimit(p *model.Problem, parts *partitions, norm model.BatchNorm) (float64, string) {
	of := "the batches' shares X_bᵀX_b/n_i of the local Hessians (batch_norm=local)"
	if norm == model.NormBatch {
		of = "the minibatch Hessians X_bᵀX_b/B (batch_norm=batch)"
	}
	return 2 / parts.curvature(p, norm), of
}
