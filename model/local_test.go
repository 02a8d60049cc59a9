package model_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
)

// rows returns the sub-design X_b, y_b of the listed rows.
func rows(c datasets.Client, d int, idx []int) (*mat.Dense, *mat.VecDense) {
	x := mat.NewDense(len(idx), d, nil)
	y := mat.NewVecDense(len(idx), nil)
	for j, r := range idx {
		x.SetRow(j, c.X[r*d:(r+1)*d])
		y.SetVec(j, c.Y[r])
	}
	return x, y
}

// proxSolve returns argmin_u 1/(2n)‖y − Xu‖² + ‖u − θ‖²/(2η), the solution of
// (I + ηXᵀX/n) u = θ + ηXᵀy/n (docs/papers.md §1.4), by an LU solve.
func proxSolve(x *mat.Dense, y *mat.VecDense, theta []float64, eta float64) []float64 {
	n, d := x.Dims()
	var a mat.Dense
	a.Mul(x.T(), x)
	a.Scale(eta/float64(n), &a)
	for k := 0; k < d; k++ {
		a.Set(k, k, a.At(k, k)+1)
	}
	var rhs mat.VecDense
	rhs.MulVec(x.T(), y)
	rhs.AddScaledVec(mat.NewVecDense(d, append([]float64(nil), theta...)), eta/float64(n), &rhs)
	var u mat.VecDense
	if err := u.SolveVec(&a, &rhs); err != nil {
		panic(err)
	}
	return u.RawVector().Data
}

// proxResidual returns ∇l(u) + (u − θ)/η for l(u) = 1/(2n)‖y − Xu‖²: zero
// exactly at the proximal point of l centred at θ (first-order optimality of
// the strongly convex proximal objective).
func proxResidual(x *mat.Dense, y *mat.VecDense, u, theta []float64, eta float64) []float64 {
	r := gradient(x, y, u)
	for k := range r {
		r[k] += (u[k] - theta[k]) / eta
	}
	return r
}

func zeroWithin(v []float64, tol float64) bool {
	for _, x := range v {
		if !scalar.EqualWithinAbs(x, 0, tol) {
			return false
		}
	}
	return true
}

func permutation(rng *rand.Rand, n int) []int {
	return rng.Perm(n)
}

// TestGDSteps checks s full-batch gradient steps u ← u − (η/n) Xᵀ(Xu − y)
// (docs/papers.md §1.3) against a loop over the raw design.
func TestGDSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for i, test := range []struct {
		n, d, steps int
		eta         float64
	}{
		{n: 40, d: 8, steps: 1, eta: 0.1},
		{n: 40, d: 8, steps: 10, eta: 0.3},
		{n: 5, d: 12, steps: 7, eta: 0.05}, // raw design
		{n: 30, d: 20, steps: 3, eta: 0.1},
	} {
		p := newProblem(t, datasets.Linear{Clients: 1, Dim: test.d, Samples: test.n, Noise: 0.5}, uint64(i))
		x, y := design(p.Fed.Clients[0], test.d)
		theta := randVec(rng, test.d, 1)
		want := append([]float64(nil), theta...)
		for s := 0; s < test.steps; s++ {
			floats.AddScaled(want, -test.eta, gradient(x, y, want))
		}
		got := append([]float64(nil), theta...)
		p.Clients[0].GDSteps(got, test.eta, test.steps, model.NewWorkspace(p, 0))
		if !floats.EqualApprox(got, want, 1e-12) {
			t.Errorf("case %d: GDSteps = %v, want %v", i, got, want)
		}
	}
}

// TestMinibatchEpoch checks one epoch against a hand-written loop over
// consecutive batches of the permutation, the last one shorter when B does
// not divide n: u ← u − η c X_bᵀ(X_b u − y_b) with c = 1/n (the batch's share
// of the local loss, the default) or c = 1/b (the per-batch mean)
// (docs/papers.md §1.5 CORRECTED).
func TestMinibatchEpoch(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for i, test := range []struct {
		n, d, batch int
		eta         float64
	}{
		{n: 60, d: 8, batch: 10, eta: 0.1},
		{n: 60, d: 8, batch: 7, eta: 0.1}, // 8 batches of 7 and one of 4
		{n: 30, d: 10, batch: 1, eta: 0.02},
		{n: 30, d: 10, batch: 30, eta: 0.2},
		{n: 6, d: 10, batch: 4, eta: 0.1}, // raw design
	} {
		p := newProblem(t, datasets.Linear{Clients: 1, Dim: test.d, Samples: test.n, Noise: 0.5}, uint64(i))
		c := p.Fed.Clients[0]
		perm := permutation(rng, test.n)
		theta := randVec(rng, test.d, 1)

		for _, norm := range []model.BatchNorm{model.NormLocal, model.NormBatch} {
			want := append([]float64(nil), theta...)
			for lo := 0; lo < test.n; lo += test.batch {
				hi := min(lo+test.batch, test.n)
				step := make([]float64, test.d)
				for _, r := range perm[lo:hi] {
					x := c.X[r*test.d : (r+1)*test.d]
					floats.AddScaled(step, floats.Dot(x, want)-c.Y[r], x)
				}
				weight := 1 / float64(test.n)
				if norm == model.NormBatch {
					weight = 1 / float64(hi-lo)
				}
				floats.AddScaled(want, -test.eta*weight, step)
			}

			got := append([]float64(nil), theta...)
			p.Clients[0].MinibatchEpoch(got, test.eta, perm, test.batch, norm, model.NewWorkspace(p, test.batch))
			if !floats.EqualApprox(got, want, 1e-12) {
				t.Errorf("case %d batch_norm=%v: MinibatchEpoch = %v, want %v", i, norm, got, want)
			}
		}
	}
}

// TestMinibatchEpochByHand runs one epoch on a quadratic small enough to
// work out on paper: d = 2, n = 4 rows x = (1,0), (0,1), (1,1), (2,−1) with
// y = 1, 2, 0, 3, batches {1, 2} then {3, 4}, η = 1/2, from u = 0.
//
// With c = 1/n (η c = 1/8) this is the incremental-gradient pass of the
// local loss l = Σ_b l_b, l_b(u) = 1/(2n)‖y_b − X_b u‖²:
//
//	batch 1: residuals Xu − y = (−1, −2), Σ r x = (−1, −2), u = (1/8, 2/8);
//	batch 2: residuals (3/8, −3),  Σ r x = (−45/8, 27/8), u = (53/64, −11/64).
//
// With c = 1/B (η c = 1/4):
//
//	batch 1: u = (1/4, 1/2);
//	batch 2: residuals (3/4, −3), Σ r x = (−21/4, 15/4), u = (25/16, −7/16).
func TestMinibatchEpochByHand(t *testing.T) {
	x := []float64{1, 0, 0, 1, 1, 1, 2, -1}
	y := []float64{1, 2, 0, 3}
	fed := &datasets.Federation{Dim: 2, Truth: []float64{0, 0},
		Clients: []datasets.Client{{N: 4, X: x, Y: y, Truth: []float64{0, 0}}}}
	p := model.NewProblem(fed)
	for _, test := range []struct {
		norm model.BatchNorm
		want []float64
	}{
		{norm: model.NormLocal, want: []float64{53.0 / 64, -11.0 / 64}},
		{norm: model.NormBatch, want: []float64{25.0 / 16, -7.0 / 16}},
	} {
		u := []float64{0, 0}
		p.Clients[0].MinibatchEpoch(u, 0.5, []int{0, 1, 2, 3}, 2, test.norm, model.NewWorkspace(p, 2))
		if !floats.EqualApprox(u, test.want, 1e-15) {
			t.Errorf("batch_norm=%v: one epoch gives %v, want %v", test.norm, u, test.want)
		}
	}
}

// TestProxFactor checks the exact proximal step of FedProx (docs/papers.md §1.4)
// for clients with a Gram matrix (n ≥ d, d×d Cholesky) and without (n < d,
// Woodbury form with an n×n Cholesky): the result u satisfies the optimality
// condition ∇l_i(u) + (u − θ)/η = 0 and equals an LU solve of
// (I + ηX_iᵀX_i/n_i) u = θ + ηX_iᵀy_i/n_i.
func TestProxFactor(t *testing.T) {
	const tol = 1e-10
	rng := rand.New(rand.NewPCG(7, 7))
	for i, test := range []struct {
		n, d int
	}{
		{n: 40, d: 8},
		{n: 10, d: 10},
		{n: 60, d: 20},
		{n: 5, d: 12},
		{n: 1, d: 6},
		{n: 19, d: 20},
	} {
		p := newProblem(t, datasets.Linear{Clients: 1, Dim: test.d, Samples: test.n, Noise: 0.5, Gamma: 0}, uint64(i))
		x, y := design(p.Fed.Clients[0], test.d)
		ws := model.NewWorkspace(p, 0)
		for _, eta := range []float64{1e-3, 0.1, 1, 10} {
			f := model.NewProxFactor(&p.Clients[0], eta)
			theta := randVec(rng, test.d, 3)
			u := append([]float64(nil), theta...)
			f.Apply(u, ws)
			if r := proxResidual(x, y, u, theta, eta); !zeroWithin(r, tol) {
				t.Errorf("case %d (n=%d, d=%d) η=%v: optimality residual %v", i, test.n, test.d, eta, r)
			}
			if want := proxSolve(x, y, theta, eta); !floats.EqualApprox(u, want, tol) {
				t.Errorf("case %d η=%v: Apply = %v, want %v", i, eta, u, want)
			}
		}
	}
}

// TestProxEpoch checks the incremental minibatch proximal pass of
// docs/papers.md §1.5/§8 under both batch weights c (1/n, the default, and 1/b):
// every single-batch step satisfies the optimality condition
// c X_bᵀ(X_b u − y_b) + (u − u_prev)/η = 0 of its batch loss
// (c/2)‖y_b − X_b u‖² centred at the previous iterate, and a whole epoch
// equals the chain of LU solves u ← (I + η c X_bᵀX_b)⁻¹ (u + η c X_bᵀy_b)
// over consecutive batches.
func TestProxEpoch(t *testing.T) {
	const tol = 1e-10
	rng := rand.New(rand.NewPCG(8, 8))
	for i, test := range []struct {
		n, d, batch int
		eta         float64
	}{
		{n: 60, d: 8, batch: 10, eta: 0.1},
		{n: 60, d: 8, batch: 60, eta: 0.1}, // a single batch
		{n: 50, d: 8, batch: 12, eta: 1},   // last batch of 2
		{n: 30, d: 20, batch: 5, eta: 0.1}, // b < d: Woodbury per batch
		{n: 30, d: 10, batch: 1, eta: 3},
		{n: 6, d: 10, batch: 4, eta: 0.1}, // raw design
	} {
		p := newProblem(t, datasets.Linear{Clients: 1, Dim: test.d, Samples: test.n, Noise: 0.5}, uint64(i))
		c := p.Fed.Clients[0]
		s := &p.Clients[0]
		ws := model.NewWorkspace(p, test.batch)
		perm := permutation(rng, test.n)
		theta := randVec(rng, test.d, 2)

		for _, norm := range []model.BatchNorm{model.NormLocal, model.NormBatch} {
			// Step by step, one batch per call.
			u := append([]float64(nil), theta...)
			want := append([]float64(nil), theta...)
			for lo := 0; lo < test.n; lo += test.batch {
				idx := perm[lo:min(lo+test.batch, test.n)]
				// (c/2)‖y_b − X_b u‖² with c = 1/n is 1/(2b)‖·‖² with the
				// rows scaled by √(b/n): the helpers' 1/(2b) loss applies.
				scale := 1.0
				if norm == model.NormLocal {
					scale = math.Sqrt(float64(len(idx)) / float64(test.n))
				}
				prev := append([]float64(nil), u...)
				s.ProxEpoch(u, test.eta, idx, test.batch, norm, ws)
				xb, yb := rows(c, test.d, idx)
				xb.Scale(scale, xb)
				yb.ScaleVec(scale, yb)
				if r := proxResidual(xb, yb, u, prev, test.eta); !zeroWithin(r, tol) {
					t.Errorf("case %d batch_norm=%v batch at %d: optimality residual %v", i, norm, lo, r)
				}
				want = proxSolve(xb, yb, want, test.eta)
			}

			// The whole epoch in one call.
			got := append([]float64(nil), theta...)
			s.ProxEpoch(got, test.eta, perm, test.batch, norm, ws)
			if !floats.EqualApprox(got, want, tol) {
				t.Errorf("case %d batch_norm=%v: ProxEpoch = %v, want %v", i, norm, got, want)
			}
		}
	}
}

// localFixture is one Gram client (n ≥ d), one raw client (n < d) and
// everything the local steps need, sized like the paradox preset.
type localFixture struct {
	p          *model.Problem
	gram, raw  *model.Stats
	fGram, fWB model.ProxFactor
	perm       []int
	u          []float64
}

func newLocalFixture(t testing.TB, d, n, nScarce int) *localFixture {
	p := newProblem(t, datasets.Linear{Clients: 2, Dim: d, Samples: n, ScarceClients: 1, ScarceSamples: nScarce, Noise: 0.5}, 1)
	f := &localFixture{p: p, raw: &p.Clients[0], gram: &p.Clients[1], perm: permutation(rand.New(rand.NewPCG(1, 1)), n),
		u: make([]float64, d)}
	f.fWB = model.NewProxFactor(f.raw, 0.1)
	f.fGram = model.NewProxFactor(f.gram, 0.1)
	if f.raw.Gram != nil || f.gram.Gram == nil {
		t.Fatal("fixture: want one raw and one Gram client")
	}
	return f
}

// TestLocalStepAllocs checks that the local steps allocate nothing, as the
// Workspace promises. The batch of 400 in ProxEpoch exceeds the size (320)
// above which gonum's blocked Cholesky (lapack64.Potrf) hands a trailing update
// of at least four 64-wide blocks to Dgemm, which then runs in parallel and
// allocates goroutines and channels.
func TestLocalStepAllocs(t *testing.T) {
	if raceOn {
		t.Skip("under the race detector sync.Pool drops items on purpose: allocation counts mean nothing")
	}
	f := newLocalFixture(t, 20, 400, 12)
	const eta = 0.01
	for _, test := range []struct {
		name  string
		batch int
		step  func(ws *model.Workspace)
	}{
		{name: "GDSteps gram", step: func(ws *model.Workspace) { f.gram.GDSteps(f.u, eta, 3, ws) }},
		{name: "GDSteps raw", step: func(ws *model.Workspace) { f.raw.GDSteps(f.u, eta, 3, ws) }},
		{name: "MinibatchEpoch", batch: 20, step: func(ws *model.Workspace) { f.gram.MinibatchEpoch(f.u, eta, f.perm, 20, model.NormLocal, ws) }},
		{name: "ProxFactor.Apply gram", step: func(ws *model.Workspace) { f.fGram.Apply(f.u, ws) }},
		{name: "ProxFactor.Apply woodbury", step: func(ws *model.Workspace) { f.fWB.Apply(f.u, ws) }},
		{name: "ProxEpoch", batch: 20, step: func(ws *model.Workspace) { f.gram.ProxEpoch(f.u, eta, f.perm, 20, model.NormLocal, ws) }},
		{name: "ProxEpoch large batch", batch: 400, step: func(ws *model.Workspace) { f.gram.ProxEpoch(f.u, eta, f.perm, 400, model.NormLocal, ws) }},
	} {
		ws := model.NewWorkspace(f.p, test.batch)
		if a := testing.AllocsPerRun(20, func() { test.step(ws) }); a != 0 {
			t.Errorf("%s: %v allocations per call, want 0", test.name, a)
		}
	}
}

// BenchmarkLocalStep times one client's work per round at the paradox scale
// (d = 100, n_i = 500; a data-scarce client with n_i = 50 for the raw paths).
func BenchmarkLocalStep(b *testing.B) {
	const (
		eta   = 0.1
		batch = 50
	)
	f := newLocalFixture(b, 100, 500, 50)
	for _, bench := range []struct {
		name  string
		batch int
		step  func(ws *model.Workspace)
	}{
		{name: "GDSteps/gram", step: func(ws *model.Workspace) { f.gram.GDSteps(f.u, eta, 1, ws) }},
		{name: "GDSteps/raw", step: func(ws *model.Workspace) { f.raw.GDSteps(f.u, eta, 1, ws) }},
		{name: fmt.Sprintf("MinibatchEpoch/B=%d", batch), batch: batch, step: func(ws *model.Workspace) { f.gram.MinibatchEpoch(f.u, eta, f.perm, batch, model.NormLocal, ws) }},
		{name: "ProxFactor.Apply/gram", step: func(ws *model.Workspace) { f.fGram.Apply(f.u, ws) }},
		{name: "ProxFactor.Apply/woodbury", step: func(ws *model.Workspace) { f.fWB.Apply(f.u, ws) }},
		{name: fmt.Sprintf("ProxEpoch/B=%d", batch), batch: batch, step: func(ws *model.Workspace) { f.gram.ProxEpoch(f.u, eta, f.perm, batch, model.NormLocal, ws) }},
	} {
		b.Run(bench.name, func(b *testing.B) {
			ws := model.NewWorkspace(f.p, bench.batch)
			clear(f.u)
			b.ReportAllocs()
			for b.Loop() {
				bench.step(ws)
			}
		})
	}
}
