package algorithms

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/fedscope/fedscope/model"
)

// RidgeAlgorithm is a racer on a ridge problem in feature space (paper 003).
type RidgeAlgorithm interface {
	// Run iterates `rounds` communication rounds from the DKRR average of
	// the local closed forms (docs/papers.md §4.5, §8) and emits one RidgeRound
	// each.
	Run(ctx context.Context, p *model.Ridge, rounds int, emit func(RidgeRound)) error
}

// RidgeRound is what a ridge racer reports after one round (paper 003).
type RidgeRound struct {
	Index    int
	W        []float64 // the global model W_t, M×C row-major
	TestMSE  float64   // test mean squared error (docs/papers.md §4.7); NaN without a test set
	TestAcc  float64   // test accuracy of the argmax prediction; NaN for regression
	GradNorm float64   // ‖H W_t − b‖_F, the gradient of the global ridge objective
	KRRDist  float64   // ‖W_t − W_KRR‖_F, the distance to centralised KRR
}

// growthLimit is how many times the distance to the KRR solution may grow
// beyond its starting value (the DKRR distance) before a ridge racer counts
// as diverged. The methods here contract towards KRR when they converge, so
// a hundredfold growth is unambiguous and is caught long before overflow.
const growthLimit = 100

// ridgeLoop is the round loop of the ridge racers: w starts at W_DKRR; round
// advances it in place; the loop measures, checks divergence and emits.
func ridgeLoop(ctx context.Context, p *model.Ridge, rounds int, emit func(RidgeRound),
	round func(w []float64, ws *model.RidgeWork) error, diverged func(t int) error) error {
	ws := p.NewWork()
	w := append([]float64(nil), p.DKRR...)
	start := model.Distance(w, p.KRR)
	bound := growthLimit * math.Max(start, 1e-6*(1+model.Norm(p.KRR)))
	for t := 1; t <= rounds; t++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := round(w, ws); err != nil {
			return err
		}
		dist := model.Distance(w, p.KRR)
		if !finite(w) || !(dist <= bound) {
			return diverged(t)
		}
		r := RidgeRound{Index: t, W: append([]float64(nil), w...), KRRDist: dist, GradNorm: p.GradNorm(w, ws)}
		r.TestMSE, r.TestAcc = p.Evaluate(w, ws)
		emit(r)
	}
	return nil
}

// KRR is centralised kernel ridge regression on all data, the reference of
// paper 003: it emits W_KRR = H⁻¹b every round (docs/papers.md §4.1).
type KRR struct{}

// Run implements RidgeAlgorithm.
func (KRR) Run(ctx context.Context, p *model.Ridge, rounds int, emit func(RidgeRound)) error {
	return constLoop(ctx, p, rounds, emit, p.KRR,
		func(t int) error { return &DivergedError{Round: t, Reason: "the KRR solution is not finite"} })
}

// DKRR is one-shot distributed KRR, W_DKRR = Σ_j p_j H_j⁻¹ b_j (docs/papers.md
// §4.1; FedNewton with t = 0); it emits the same model every round.
type DKRR struct{}

// Run implements RidgeAlgorithm.
func (DKRR) Run(ctx context.Context, p *model.Ridge, rounds int, emit func(RidgeRound)) error {
	return constLoop(ctx, p, rounds, emit, p.DKRR,
		func(t int) error { return &DivergedError{Round: t, Reason: "the DKRR solution is not finite"} })
}

// constLoop is ridgeLoop for a racer whose model w does not change (KRR and
// DKRR): its distance to KRR, gradient norm and test scores — the same
// numbers every round — are computed once, and every round emits them with
// a copy of w. Divergence (a w that is not finite or as far from KRR as
// ridgeLoop's bound) is reported at round 1, as ridgeLoop would.
func constLoop(ctx context.Context, p *model.Ridge, rounds int, emit func(RidgeRound), w []float64, diverged func(t int) error) error {
	var r RidgeRound
	for t := 1; t <= rounds; t++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if t == 1 {
			start := model.Distance(p.DKRR, p.KRR)
			bound := growthLimit * math.Max(start, 1e-6*(1+model.Norm(p.KRR)))
			dist := model.Distance(w, p.KRR)
			if !finite(w) || !(dist <= bound) {
				return diverged(t)
			}
			ws := p.NewWork()
			r = RidgeRound{KRRDist: dist, GradNorm: p.GradNorm(w, ws)}
			r.TestMSE, r.TestAcc = p.Evaluate(w, ws)
		}
		r.Index, r.W = t, append([]float64(nil), w...)
		emit(r)
	}
	return nil
}

// FedNewton is Algorithm 1 of paper 003 with the GLOBAL gradient
// (docs/papers.md §4.2 and the erratum of §7): from W̄⁰ = W_DKRR, each round
//
//	g_j = H_j W̄ − b_j (uploaded),  g = Σ_j p_j g_j (broadcast),
//	d_j = H_j⁻¹ g (uploaded),      W̄ ← W̄ − Σ_j p_j d_j (broadcast).
//
// With the local gradient every round would return W_DKRR; with the global
// one the only fixed point is W_KRR, reached at the rate of the contraction
// factor Υ (model.Ridge.Contraction), or missed when Υ exceeds 1.
type FedNewton struct {
	// Start, when not nil, replaces the DKRR start W̄⁰ (M×C; tests use it
	// to check the Newton step from an arbitrary point).
	Start []float64
	// Step, when > 0, damps the update to W̄ ← W̄ − η Σ_j p_j d_j (the
	// paper's step is η = 1): with η = model.DampedStep(μ_max) the error
	// contracts by model.DampedRate < 1 per round for every λ.
	Step float64
}

// Run implements RidgeAlgorithm.
func (a FedNewton) Run(ctx context.Context, p *model.Ridge, rounds int, emit func(RidgeRound)) error {
	c := p.C
	g := make([]float64, p.M*c)
	step := make([]float64, p.M*c)
	ops, gs, ds := make([]*model.RidgeOp, len(p.Clients)), make([][]float64, len(p.Clients)), make([][]float64, len(p.Clients))
	for j := range ops {
		ops[j], gs[j], ds[j] = p.Clients[j].Op, g, make([]float64, p.M*c)
	}
	started := a.Start == nil
	round := func(w []float64, ws *model.RidgeWork) error {
		if !started {
			if len(a.Start) != len(w) {
				return fmt.Errorf("%w: start has %d numbers, want %d", ErrBadParams, len(a.Start), len(w))
			}
			copy(w, a.Start)
			started = true
		}
		clear(g)
		for j := range p.Clients {
			if err := ctx.Err(); err != nil {
				return err
			}
			cl := &p.Clients[j]
			cl.Op.MulTo(ws.U, w, c, ws.Scratch) // H_j W̄
			for k, b := range cl.B {
				g[k] += p.Weights[j] * (ws.U[k] - b)
			}
		}
		// d_j = H_j⁻¹ g for every client at once (independent solves, which
		// SolveBatch overlaps), then summed in client order.
		if err := ctx.Err(); err != nil {
			return err
		}
		model.SolveBatch(ops, ds, gs, c, ws.Scratch)
		if err := ctx.Err(); err != nil {
			return err
		}
		clear(step)
		for j := range p.Clients {
			axpy(p.Weights[j], ds[j], step)
		}
		eta := 1.0
		if a.Step > 0 {
			eta = a.Step
		}
		axpy(-eta, step, w)
		return nil
	}
	diverged := func(t int) error { return &newtonDivergence{round: t, p: p} }
	return ridgeLoop(ctx, p, rounds, emit, round, diverged)
}

// newtonDivergence is FedNewton's divergence: a *DivergedError (through
// Unwrap) whose reason names the cause of Υ ≥ 1 — few samples per client,
// heterogeneity across clients, or a small λ (model.Ridge.Diagnose) —
// worked out when the error is first read, so that a sweep that only
// counts divergences (DivergedRound) does not pay for the diagnosis.
type newtonDivergence struct {
	round int
	p     *model.Ridge
	once  sync.Once
	err   *DivergedError
}

func (e *newtonDivergence) diverged() *DivergedError {
	e.once.Do(func() { e.err = &DivergedError{Round: e.round, Reason: e.p.Diagnose().Sentence()} })
	return e.err
}

func (e *newtonDivergence) Error() string { return e.diverged().Error() }
func (e *newtonDivergence) Unwrap() error { return e.diverged() }

// DivergedRound reports whether err is a ridge racer's divergence and the
// round it was detected at, without building FedNewton's diagnosis.
func DivergedRound(err error) (int, bool) {
	var nd *newtonDivergence
	if errors.As(err, &nd) {
		return nd.round, true
	}
	var de *DivergedError
	if errors.As(err, &de) {
		return de.Round, true
	}
	return 0, false
}

// RidgeFedAvg is FedAvg on the ridge objective as paper 003 configures it
// (docs/papers.md §4.5): from W̄, each client runs LocalSteps full-batch gradient
// steps W ← W − η(H_j W − b_j) on its regularised loss; the server averages
// with p_j.
type RidgeFedAvg struct {
	Eta        float64 // learning rate (Table 2: 0.001)
	LocalSteps int     // s (2 in the paper)
}

// Run implements RidgeAlgorithm.
func (a RidgeFedAvg) Run(ctx context.Context, p *model.Ridge, rounds int, emit func(RidgeRound)) error {
	if err := validate(a.Eta, 0); err != nil {
		return err
	}
	if a.LocalSteps < 1 {
		return fmt.Errorf("%w: local steps s=%d must be at least 1", ErrBadParams, a.LocalSteps)
	}
	c := p.C
	next, u := make([]float64, p.M*c), make([]float64, p.M*c)
	round := func(w []float64, ws *model.RidgeWork) error {
		clear(next)
		for j := range p.Clients {
			if err := ctx.Err(); err != nil {
				return err
			}
			cl := &p.Clients[j]
			copy(u, w)
			for s := 0; s < a.LocalSteps; s++ {
				cl.Op.MulTo(ws.U, u, c, ws.Scratch)
				for k, b := range cl.B {
					u[k] -= a.Eta * (ws.U[k] - b)
				}
			}
			axpy(p.Weights[j], u, next)
		}
		copy(w, next)
		return nil
	}
	diverged := func(t int) error {
		var lmax float64
		for j := range p.Clients {
			lmax = math.Max(lmax, maxEig(p.Clients[j].Op, p))
		}
		return &DivergedError{Round: t, Eta: a.Eta, Limit: 2 / lmax, Of: "the local ridge Hessians"}
	}
	return ridgeLoop(ctx, p, rounds, emit, round, diverged)
}

// RidgeFedProx is FedProx on the ridge objective with the exact local
// solution (docs/papers.md §4.5): W_j = (H_j + μI)⁻¹(b_j + μW̄), averaged with p_j.
type RidgeFedProx struct {
	Mu float64 // λ_prox > 0 (Table 2)
}

// Run implements RidgeAlgorithm.
func (a RidgeFedProx) Run(ctx context.Context, p *model.Ridge, rounds int, emit func(RidgeRound)) error {
	if !(a.Mu > 0) || math.IsInf(a.Mu, 0) {
		return fmt.Errorf("%w: λ_prox=%v must be a finite number > 0", ErrBadParams, a.Mu)
	}
	ops, err := p.ProxOps(a.Mu)
	if err != nil {
		return fmt.Errorf("FedProx λ_prox=%g: %w", a.Mu, err)
	}
	c := p.C
	next := make([]float64, p.M*c)
	rhs, sol := make([][]float64, len(p.Clients)), make([][]float64, len(p.Clients))
	for j := range rhs {
		rhs[j], sol[j] = make([]float64, p.M*c), make([]float64, p.M*c)
	}
	round := func(w []float64, ws *model.RidgeWork) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for j := range p.Clients {
			for k, b := range p.Clients[j].B {
				rhs[j][k] = b + a.Mu*w[k]
			}
		}
		// The clients' solves are independent: SolveBatch overlaps them.
		model.SolveBatch(ops, sol, rhs, c, ws.Scratch)
		if err := ctx.Err(); err != nil {
			return err
		}
		clear(next)
		for j := range p.Clients {
			axpy(p.Weights[j], sol[j], next)
		}
		copy(w, next)
		return nil
	}
	diverged := func(t int) error { return &DivergedError{Round: t, Reason: "the proximal iterates are not finite"} }
	return ridgeLoop(ctx, p, rounds, emit, round, diverged)
}

// maxEig estimates λ_max of a ridge Hessian by power iteration (only to word
// a divergence message).
func maxEig(op *model.RidgeOp, p *model.Ridge) float64 {
	ws := p.NewWork()
	v, hv := make([]float64, p.M), make([]float64, p.M)
	for k := range v {
		v[k] = 1 / math.Sqrt(float64(p.M)) * float64(1+k%3)
	}
	var lam float64
	for it := 0; it < 100; it++ {
		op.MulTo(hv, v, 1, ws.Scratch)
		lam = model.Norm(hv)
		if lam == 0 {
			return 0
		}
		for k := range v {
			v[k] = hv[k] / lam
		}
	}
	return lam
}
