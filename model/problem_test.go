package model_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
)

// The truths of these tests are computed from the raw designs with gonum mat
// (products, SVD, LU solves), never from the statistics under test.

func newProblem(t testing.TB, c datasets.Linear, seed uint64) *model.Problem {
	t.Helper()
	fed, err := c.Generate(seed)
	if err != nil {
		t.Fatalf("Generate(%+v): %v", c, err)
	}
	return model.NewProblem(fed)
}

// stacked returns the pooled design X (N×d) and responses y of a federation.
func stacked(fed *datasets.Federation) (*mat.Dense, *mat.VecDense) {
	var xs, ys []float64
	for _, c := range fed.Clients {
		xs = append(xs, c.X...)
		ys = append(ys, c.Y...)
	}
	n := len(ys)
	return mat.NewDense(n, fed.Dim, xs), mat.NewVecDense(n, ys)
}

// design returns client i's X_i and y_i as gonum matrices (copies).
func design(c datasets.Client, d int) (*mat.Dense, *mat.VecDense) {
	return mat.NewDense(c.N, d, append([]float64(nil), c.X...)), mat.NewVecDense(c.N, append([]float64(nil), c.Y...))
}

// gradient returns (1/n) Xᵀ(Xu − y).
func gradient(x *mat.Dense, y *mat.VecDense, u []float64) []float64 {
	n, d := x.Dims()
	var r, g mat.VecDense
	r.MulVec(x, mat.NewVecDense(d, u))
	r.SubVec(&r, y)
	g.MulVec(x.T(), &r)
	g.ScaleVec(1/float64(n), &g)
	return g.RawVector().Data
}

func randVec(rng *rand.Rand, d int, scale float64) []float64 {
	v := make([]float64, d)
	for k := range v {
		v[k] = scale * rng.NormFloat64()
	}
	return v
}

// sigmaMax2 returns σ_max(X)², the largest eigenvalue of XᵀX, from an SVD of X.
func sigmaMax2(x *mat.Dense) float64 {
	var svd mat.SVD
	if !svd.Factorize(x, mat.SVDNone) {
		panic("SVD failed")
	}
	s := svd.Values(nil)
	return s[0] * s[0]
}

// TestGradientTo checks ∇l_i(u) = (1/n_i) X_iᵀ(X_i u − y_i) for clients that
// keep a Gram matrix (n_i ≥ d) and raw-design clients (n_i < d).
func TestGradientTo(t *testing.T) {
	const tol = 1e-12
	rng := rand.New(rand.NewPCG(1, 1))
	for i, test := range []struct {
		n, d int
	}{
		{n: 40, d: 8},
		{n: 8, d: 8}, // n = d: still the Gram path
		{n: 5, d: 12},
		{n: 1, d: 3},
		{n: 60, d: 20},
	} {
		p := newProblem(t, datasets.Linear{Clients: 1, Dim: test.d, Samples: test.n, Noise: 0.5}, uint64(i))
		s := &p.Clients[0]
		if (s.Gram != nil) != (test.n >= test.d) {
			t.Errorf("case %d: Gram kept = %v for n = %d, d = %d", i, s.Gram != nil, test.n, test.d)
		}
		if want := map[bool]int{true: 0, false: test.n}[s.Gram != nil]; s.ScratchLen() != want {
			t.Errorf("case %d: ScratchLen() = %d, want %d", i, s.ScratchLen(), want)
		}
		x, y := design(p.Fed.Clients[0], test.d)
		for trial := 0; trial < 3; trial++ {
			u := randVec(rng, test.d, 2)
			got := make([]float64, test.d)
			s.GradientTo(got, u, make([]float64, s.ScratchLen()))
			if want := gradient(x, y, u); !floats.EqualApprox(got, want, tol) {
				t.Errorf("case %d: GradientTo = %v, want %v", i, got, want)
			}
			var xu, h mat.VecDense
			xu.MulVec(x, mat.NewVecDense(test.d, u))
			h.MulVec(x.T(), &xu)
			h.ScaleVec(1/float64(test.n), &h)
			s.HessianTo(got, u, make([]float64, s.ScratchLen()))
			if want := h.RawVector().Data; !floats.EqualApprox(got, want, tol) {
				t.Errorf("case %d: HessianTo = %v, want %v", i, got, want)
			}
		}
	}
}

// TestPooled checks the pooled statistics of the global objective, Gram =
// XᵀX/N and XtY = Xᵀy/N of the stacked data, and the weights w_i = n_i/N, for
// federations mixing Gram and raw-design clients.
func TestPooled(t *testing.T) {
	const tol = 1e-12
	for i, cfg := range []datasets.Linear{
		{Clients: 5, Dim: 8, Samples: 30, Noise: 0.5},
		{Clients: 5, Dim: 12, Samples: 40, Noise: 0.5, ScarceClients: 3, ScarceSamples: 4, Gamma: 1},
		{Clients: 4, Dim: 10, Samples: 6, Noise: 0.5, SubspaceDim: 3},
	} {
		p := newProblem(t, cfg, 7)
		x, y := stacked(p.Fed)
		n, d := x.Dims()
		if p.N != n || p.Dim != d {
			t.Fatalf("case %d: N, Dim = %d, %d, want %d, %d", i, p.N, p.Dim, n, d)
		}
		var g mat.Dense
		g.Mul(x.T(), x)
		g.Scale(1/float64(n), &g)
		if !floats.EqualApprox(p.Gram, g.RawMatrix().Data, tol) {
			t.Errorf("case %d: pooled Gram differs from XᵀX/N", i)
		}
		var b mat.VecDense
		b.MulVec(x.T(), y)
		b.ScaleVec(1/float64(n), &b)
		if !floats.EqualApprox(p.XtY, b.RawVector().Data, tol) {
			t.Errorf("case %d: pooled XtY = %v, want %v", i, p.XtY, b.RawVector().Data)
		}
		for j, w := range p.Weights {
			if want := float64(p.Fed.Clients[j].N) / float64(n); w != want {
				t.Errorf("case %d: w_%d = %v, want n_i/N = %v", i, j, w, want)
			}
		}
		if sum := floats.Sum(p.Weights); !scalar.EqualWithinAbsOrRel(sum, 1, tol, tol) {
			t.Errorf("case %d: Σ w_i = %v, want 1", i, sum)
		}
	}
}

// TestLeastSquares checks that the reference solves the normal equations
// XᵀXθ = Xᵀy, equals the pseudo-inverse solution X⁺y computed by an SVD of the
// raw stacked design, and, when XᵀX is singular (covariate subspaces that
// leave coordinates uncovered), is the minimum-norm solution: orthogonal to
// the null space, i.e. zero on every uncovered coordinate.
func TestLeastSquares(t *testing.T) {
	for i, test := range []struct {
		cfg      datasets.Linear
		singular bool
	}{
		{cfg: datasets.Linear{Clients: 5, Dim: 8, Samples: 30, Noise: 0.5}},
		{cfg: datasets.Linear{Clients: 5, Dim: 20, Samples: 40, Noise: 0.5, ScarceClients: 4, ScarceSamples: 3}},
		{cfg: datasets.Linear{Clients: 3, Dim: 10, Samples: 30, Noise: 0.5, SubspaceDim: 2}, singular: true},
		{cfg: datasets.Linear{Clients: 2, Dim: 12, Samples: 3, Noise: 0.5}, singular: true}, // N = 6 < d
	} {
		p := newProblem(t, test.cfg, 5)
		x, y := stacked(p.Fed)
		_, d := x.Dims()
		theta := mat.NewVecDense(d, p.LeastSquares)

		// Normal equations: ‖Xᵀ(Xθ − y)‖ small against ‖Xᵀy‖.
		var r, g, b mat.VecDense
		r.MulVec(x, theta)
		r.SubVec(&r, y)
		g.MulVec(x.T(), &r)
		b.MulVec(x.T(), y)
		if res := mat.Norm(&g, 2) / mat.Norm(&b, 2); res > 1e-10 {
			t.Errorf("case %d: relative normal-equation residual %v", i, res)
		}

		// Minimum-norm least squares from an SVD of X itself.
		var svd mat.SVD
		if !svd.Factorize(x, mat.SVDThin) {
			t.Fatal("SVD failed")
		}
		rank := svd.Rank(1e-10)
		var want mat.Dense
		svd.SolveTo(&want, mat.NewDense(y.Len(), 1, y.RawVector().Data), rank)
		if !floats.EqualApprox(p.LeastSquares, want.RawMatrix().Data, 1e-8) {
			t.Errorf("case %d: LeastSquares = %v, want X⁺y = %v", i, p.LeastSquares, want.RawMatrix().Data)
		}
		if (rank < d) != test.singular {
			t.Errorf("case %d: rank %d of %d, singular = %v", i, rank, d, test.singular)
		}

		// Orthogonal to the null space of X: in the subspace model the null
		// space contains every coordinate no client observes.
		if test.cfg.SubspaceDim > 0 {
			covered := make([]bool, d)
			for _, c := range p.Fed.Clients {
				for _, k := range c.Support {
					covered[k] = true
				}
			}
			var uncovered int
			for k, c := range covered {
				if !c {
					uncovered++
					if math.Abs(p.LeastSquares[k]) > 1e-12 {
						t.Errorf("case %d: θ_LS[%d] = %v on an uncovered coordinate, want 0", i, k, p.LeastSquares[k])
					}
				}
			}
			if test.singular && uncovered == 0 {
				t.Errorf("case %d: test design covers every coordinate; not a singular case", i)
			}
		}
		if want := floats.Distance(p.LeastSquares, p.Fed.Truth, 2); !scalar.EqualWithinAbsOrRel(p.LSError, want, 1e-12, 1e-12) {
			t.Errorf("case %d: LSError = %v, want ‖θ_LS − θ*‖ = %v", i, p.LSError, want)
		}
	}
}

// TestCurvature checks λ_max(XᵀX/N) and max_i λ_max(X_iᵀX_i/n_i) against
// σ_max² of the raw designs from an SVD.
func TestCurvature(t *testing.T) {
	const tol = 1e-10
	for i, cfg := range []datasets.Linear{
		{Clients: 5, Dim: 8, Samples: 30, Noise: 0.5},
		{Clients: 5, Dim: 12, Samples: 40, Noise: 0.5, ScarceClients: 3, ScarceSamples: 4},
		{Clients: 4, Dim: 10, Samples: 5, Noise: 0.5, SubspaceDim: 2}, // all raw, r = 2: scale d/r
	} {
		p := newProblem(t, cfg, 13)
		x, _ := stacked(p.Fed)
		wantPooled := sigmaMax2(x) / float64(p.N)
		var wantClient float64
		for j, c := range p.Fed.Clients {
			xi, _ := design(c, p.Dim)
			lam := sigmaMax2(xi) / float64(c.N)
			wantClient = math.Max(wantClient, lam)
			if got := p.Clients[j].MaxCurvature(); !scalar.EqualWithinAbsOrRel(got, lam, tol, tol) {
				t.Errorf("case %d client %d: MaxCurvature = %v, want %v", i, j, got, lam)
			}
		}
		pooled, client := p.Curvature()
		if !scalar.EqualWithinAbsOrRel(pooled, wantPooled, tol, tol) {
			t.Errorf("case %d: pooled curvature = %v, want %v", i, pooled, wantPooled)
		}
		if !scalar.EqualWithinAbsOrRel(client, wantClient, tol, tol) {
			t.Errorf("case %d: client curvature = %v, want %v", i, client, wantClient)
		}
	}
}

// TestGradNorm checks ‖∇l(θ)‖ = (2/N)‖Xᵀ(Xθ − y)‖ for the loss of the
// paper's plots, l(θ) = (1/N) Σ‖y_i − X_iθ‖² (docs/papers.md §1.2), from raw data.
func TestGradNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for i, cfg := range []datasets.Linear{
		{Clients: 5, Dim: 8, Samples: 30, Noise: 0.5},
		{Clients: 5, Dim: 12, Samples: 40, Noise: 0.5, ScarceClients: 3, ScarceSamples: 4, Gamma: 2},
	} {
		p := newProblem(t, cfg, 17)
		x, y := stacked(p.Fed)
		for _, theta := range [][]float64{make([]float64, p.Dim), randVec(rng, p.Dim, 1), p.Fed.Truth} {
			var r, g mat.VecDense
			r.MulVec(x, mat.NewVecDense(p.Dim, theta))
			r.SubVec(&r, y)
			g.MulVec(x.T(), &r)
			want := 2 / float64(p.N) * mat.Norm(&g, 2)
			got := p.GradNorm(theta, make([]float64, p.GradNormScratch()))
			if !scalar.EqualWithinAbsOrRel(got, want, 1e-12, 1e-12) {
				t.Errorf("case %d: GradNorm = %v, want %v", i, got, want)
			}
		}
		if g := p.GradNorm(p.LeastSquares, make([]float64, p.Dim)); g > 1e-12 {
			t.Errorf("case %d: GradNorm at least squares = %v, want ≈ 0", i, g)
		}
	}
}

// TestErrors checks EstError = ‖θ − θ*‖, and ClientError: NaN without model
// heterogeneity, Σ_i (n_i/N)‖θ − θ_i*‖ with it.
func TestErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for i, test := range []struct {
		cfg    datasets.Linear
		hetero bool
	}{
		{cfg: datasets.Linear{Clients: 5, Dim: 8, Samples: 30, Noise: 0.5}},
		{cfg: datasets.Linear{Clients: 5, Dim: 8, Samples: 30, Noise: 0.5, Gamma: 1.5, ScarceClients: 2, ScarceSamples: 5}, hetero: true},
		{cfg: datasets.Linear{Clients: 3, Dim: 6, Samples: 10, Noise: 0.5, Gamma: 0.1, Scheme: datasets.GammaExact}, hetero: true},
	} {
		p := newProblem(t, test.cfg, 19)
		theta := randVec(rng, p.Dim, 1)
		if got, want := p.EstError(theta), floats.Distance(theta, p.Fed.Truth, 2); !scalar.EqualWithinAbsOrRel(got, want, 1e-12, 1e-12) {
			t.Errorf("case %d: EstError = %v, want %v", i, got, want)
		}
		got := p.ClientError(theta)
		if !test.hetero {
			if !math.IsNaN(got) {
				t.Errorf("case %d: ClientError = %v without heterogeneity, want NaN", i, got)
			}
			continue
		}
		var want float64
		for _, c := range p.Fed.Clients {
			want += float64(c.N) / float64(p.N) * floats.Distance(theta, c.Truth, 2)
		}
		if !scalar.EqualWithinAbsOrRel(got, want, 1e-12, 1e-12) {
			t.Errorf("case %d: ClientError = %v, want %v", i, got, want)
		}
	}
}

// TestMinNormSolve checks the solver on matrices with a known answer: a
// positive definite system (solved by LU independently) and a singular
// PSD one, A = V diag(λ) Vᵀ with some λ = 0, whose minimum-norm solution is
// V diag(1/λ on the support) Vᵀ b.
func TestMinNormSolve(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for i, test := range []struct {
		d     int
		eigen []float64
	}{
		{d: 4, eigen: []float64{3, 1, 0.5, 0.1}},
		{d: 5, eigen: []float64{2, 1, 0, 0, 0}},
		{d: 6, eigen: []float64{1e3, 1, 1e-3, 0, 0, 0}},
		{d: 3, eigen: []float64{0, 0, 0}},
	} {
		// Random orthogonal V from a QR decomposition.
		var qr mat.QR
		qr.Factorize(mat.NewDense(test.d, test.d, randVec(rng, test.d*test.d, 1)))
		var v mat.Dense
		qr.QTo(&v)
		var a mat.Dense
		a.Mul(&v, mat.NewDiagDense(test.d, test.eigen))
		a.Mul(&a, v.T())
		b := mat.NewVecDense(test.d, randVec(rng, test.d, 1))
		inv := make([]float64, test.d)
		for k, l := range test.eigen {
			if l != 0 {
				inv[k] = 1 / l
			}
		}
		var pinv mat.Dense
		pinv.Mul(&v, mat.NewDiagDense(test.d, inv))
		pinv.Mul(&pinv, v.T())
		var want mat.VecDense
		want.MulVec(&pinv, b)
		sym := make([]float64, test.d*test.d)
		for r := 0; r < test.d; r++ {
			for c := 0; c < test.d; c++ {
				sym[r*test.d+c] = (a.At(r, c) + a.At(c, r)) / 2
			}
		}
		got := model.MinNormSolve(sym, b.RawVector().Data, test.d)
		if !floats.EqualApprox(got, want.RawVector().Data, 1e-9) {
			t.Errorf("case %d: MinNormSolve = %v, want %v", i, got, want.RawVector().Data)
		}
	}
}

// BenchmarkNewProblem prepares the paradox preset (E000-1, docs/papers.md §1.9):
// M = 25, d = 100, n_i = 500.
func BenchmarkNewProblem(b *testing.B) {
	fed, err := datasets.Linear{Clients: 25, Dim: 100, Samples: 500, Noise: 0.5}.Generate(1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		model.NewProblem(fed)
	}
}
