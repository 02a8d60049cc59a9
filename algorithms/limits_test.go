package algorithms_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
)

// limitCase is one (algorithm, closed-form limit) pair of docs/papers.md §1.6.
type limitCase struct {
	name  string
	alg   algorithms.Algorithm
	limit func(p *model.Problem) []float64
	// local is the client map of one round, run on the raw design.
	local func(c client, theta []float64) []float64
}

func limitCases(eta float64) []limitCase {
	var cs []limitCase
	for _, s := range []int{1, 5, 10} {
		cs = append(cs, limitCase{
			name:  fmt.Sprintf("FedAvg s=%d", s),
			alg:   algorithms.FedAvg{Eta: eta, LocalSteps: s},
			limit: func(p *model.Problem) []float64 { return algorithms.FedAvgLimit(p, eta, s) },
			local: func(c client, theta []float64) []float64 { return c.gd(theta, eta, s) },
		})
	}
	return append(cs, limitCase{
		name:  "FedProx",
		alg:   algorithms.FedProx{Eta: eta},
		limit: func(p *model.Problem) []float64 { return algorithms.FedProxLimit(p, eta) },
		local: func(c client, theta []float64) []float64 { return c.prox(theta, eta) },
	})
}

// TestLimits checks the closed-form fixed points of docs/papers.md §1.6 in three
// independent ways: θ_∞ is a fixed point of one round computed on the raw
// designs; long runs from θ_0 = 0 reach it to 1e-8; and, for s = 1, it is
// the pooled least-squares solution. The cases include data-scarce clients
// with n_i < d and a covariate-subspace federation whose pooled XᵀX is
// singular (d = 10, r = 2, three clients cover at most 6 coordinates; and
// d = 14, r = 5 with two clients of 3 rows), where θ_∞ is the fixed point in
// the row space of X: zero on uncovered coordinates.
func TestLimits(t *testing.T) {
	const tol = 1e-8
	for i, test := range []struct {
		cfg      datasets.Linear
		singular bool
		rounds   int // 3000 unless set: enough to converge to 1e-8
	}{
		{cfg: datasets.Linear{Clients: 5, Dim: 8, Samples: 30, Noise: 0.5}},
		{cfg: datasets.Linear{Clients: 5, Dim: 12, Samples: 40, Noise: 0.5, ScarceClients: 3, ScarceSamples: 4, Gamma: 1}},
		{cfg: datasets.Linear{Clients: 3, Dim: 10, Samples: 30, Noise: 0.5, SubspaceDim: 2}, singular: true},
		// Data-scarce clients with fewer rows than subspace coordinates (the
		// kernel branch of the thin decomposition) and uncovered coordinates.
		{cfg: datasets.Linear{Clients: 4, Dim: 14, Samples: 30, Noise: 0.5, ScarceClients: 2, ScarceSamples: 3, SubspaceDim: 5, Gamma: 0.5}, singular: true,
			rounds: 40_000}, // the slowest observed direction contracts by 1 − 7.5e-4 per round
	} {
		p := newProblem(t, test.cfg, 31)
		rounds := test.rounds
		if rounds == 0 {
			rounds = 3000
		}
		pool := stacked(p.Fed)
		cs := clients(p.Fed)

		// The null space of XᵀX: coordinates no client observes.
		var svd mat.SVD
		if !svd.Factorize(pool.x, mat.SVDNone) {
			t.Fatal("SVD failed")
		}
		if singular := svd.Rank(1e-10) < p.Dim; singular != test.singular {
			t.Fatalf("case %d: pooled XᵀX singular = %v, want %v", i, singular, test.singular)
		}
		covered := make([]bool, p.Dim)
		for k := range covered {
			covered[k] = test.cfg.SubspaceDim == 0
		}
		for _, c := range p.Fed.Clients {
			for _, k := range c.Support {
				covered[k] = true
			}
		}

		// A step size with η λ_max(X_iᵀX_i/n_i) = 0.5 for the stiffest client:
		// all local maps contract and convergence is fast.
		_, curv := p.Curvature()
		eta := 0.5 / curv
		for _, lc := range limitCases(eta) {
			want := lc.limit(p)
			if !finiteAll(want) {
				t.Fatalf("case %d %s: limit %v", i, lc.name, want)
			}
			if next := average(cs, want, lc.local); !within(next, want, 1e-10) {
				t.Errorf("case %d %s: one round moves θ_∞ from %v to %v", i, lc.name, want, next)
			}
			for k, c := range covered {
				if !c && math.Abs(want[k]) > 1e-12 {
					t.Errorf("case %d %s: θ_∞[%d] = %v on an uncovered coordinate, want 0", i, lc.name, k, want[k])
				}
			}
			got, err := run(lc.alg, p, rounds)
			if err != nil {
				t.Fatalf("case %d %s: %v", i, lc.name, err)
			}
			if last := got[len(got)-1].Theta; !floats.EqualApprox(last, want, tol) {
				t.Errorf("case %d %s: θ_%d = %v, want θ_∞ = %v", i, lc.name, rounds, last, want)
			}
		}
		if ls := algorithms.FedAvgLimit(p, eta, 1); !floats.EqualApprox(ls, p.LeastSquares, 1e-10) {
			t.Errorf("case %d: FedAvgLimit(s=1) = %v, want least squares %v", i, ls, p.LeastSquares)
		}
	}
}

// TestLimitPanics checks that FedAvgLimit rejects s < 1.
func TestLimitPanics(t *testing.T) {
	p := newProblem(t, datasets.Linear{Clients: 2, Dim: 3, Samples: 5, Noise: 0.5}, 1)
	for _, s := range []int{0, -1} {
		if !panics(func() { algorithms.FedAvgLimit(p, 0.1, s) }) {
			t.Errorf("FedAvgLimit(s=%d) did not panic", s)
		}
	}
}

// TestParadox reproduces the central observation of paper 000 (docs/papers.md
// §1.6, E000-1 of §1.9) at the paper's scale: M = 25, d = 100, n_i = 500,
// σ = 0.5, η = 0.1. The fixed point of FedAvg with s = 5 is not a stationary
// point of the global loss, its gradient norm is orders of magnitude above
// that at the pooled least-squares solution, and yet it estimates θ* about as
// well. GradNorm is also checked against (2/N)‖Xᵀ(Xθ − y)‖ from raw data.
func TestParadox(t *testing.T) {
	if testing.Short() {
		t.Skip("paper-scale problem")
	}
	const eta = 0.1
	p := newProblem(t, datasets.Linear{Clients: 25, Dim: 100, Samples: 500, Noise: 0.5}, 2024)
	pool := stacked(p.Fed)
	scratch := make([]float64, p.GradNormScratch())

	lim := algorithms.FedAvgLimit(p, eta, 5)
	gLim, gLS := p.GradNorm(lim, scratch), p.GradNorm(p.LeastSquares, scratch)
	for _, th := range [][]float64{lim, p.LeastSquares, p.Fed.Truth} {
		if got, want := p.GradNorm(th, scratch), pool.gradNorm(th); !scalar.EqualWithinAbsOrRel(got, want, 1e-12, 1e-10) {
			t.Errorf("GradNorm = %v, want (2/N)‖Xᵀ(Xθ − y)‖ = %v", got, want)
		}
	}
	t.Logf("‖∇l‖ at FedAvg s=5 limit %.3g, at least squares %.3g; ‖θ − θ*‖ %.4g vs %.4g",
		gLim, gLS, p.EstError(lim), p.LSError)
	if gLS > 1e-12 {
		t.Errorf("‖∇l(θ_LS)‖ = %v, want ≈ 0", gLS)
	}
	if gLim < 1e-3 || gLim < 100*gLS {
		t.Errorf("‖∇l(θ_∞)‖ = %v: the FedAvg s=5 fixed point looks stationary (least squares: %v)", gLim, gLS)
	}
	if ratio := p.EstError(lim) / p.LSError; math.Abs(ratio-1) > 0.2 {
		t.Errorf("‖θ_∞ − θ*‖/‖θ_LS − θ*‖ = %v, want within 20 %% of 1", ratio)
	}

	// The run of the figure (150 rounds) ends at that fixed point.
	got, err := run(algorithms.FedAvg{Eta: eta, LocalSteps: 5}, p, 150)
	if err != nil {
		t.Fatal(err)
	}
	last := got[len(got)-1]
	if !floats.EqualApprox(last.Theta, lim, 1e-8) {
		t.Errorf("θ_150 is %v away from θ_∞", floats.Distance(last.Theta, lim, 2))
	}
	if !scalar.EqualWithinRel(last.GradNorm, gLim, 1e-6) {
		t.Errorf("‖∇l(θ_150)‖ = %v, want ‖∇l(θ_∞)‖ = %v", last.GradNorm, gLim)
	}
}
