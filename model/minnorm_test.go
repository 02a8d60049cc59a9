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

// pinvOf builds the d×n matrix X⁺ column by column as the estimator applied
// to the unit responses e_1, …, e_n (the estimator is linear in y).
func pinvOf(x []float64, n, d int, support []int) *mat.Dense {
	p := mat.NewDense(d, n, nil)
	for j := 0; j < n; j++ {
		e := make([]float64, n)
		e[j] = 1
		p.SetCol(j, model.MinNormLeastSquaresOn(x, e, n, d, support))
	}
	return p
}

// lowRank returns an n×d matrix of rank at most k (a product of Gaussian
// n×k and k×d factors).
func lowRank(rng *rand.Rand, n, d, k int) []float64 {
	a, b := mat.NewDense(n, k, randVec(rng, n*k, 1)), mat.NewDense(k, d, randVec(rng, k*d, 1))
	var x mat.Dense
	x.Mul(a, b)
	return x.RawMatrix().Data
}

// TestMinNormLeastSquaresPenrose checks that the estimator is the
// Moore–Penrose pseudo-inverse (docs/papers.md §1.8: the local benchmark): the
// matrix P it applies satisfies the four Penrose identities XPX = X,
// PXP = P, (XP)ᵀ = XP, (PX)ᵀ = PX, which characterise X⁺ uniquely. Cases
// cover n > d, n = d, n < d (the X_jᵀ(X_jX_jᵀ)⁻¹ branch), rank-deficient
// designs on both sides (the SVD branch) and a covariate-subspace design
// with zero columns.
func TestMinNormLeastSquaresPenrose(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sub, err := datasets.Linear{Clients: 1, Dim: 9, Samples: 6, SubspaceDim: 4, Noise: 1}.Generate(5)
	if err != nil {
		t.Fatal(err)
	}
	for _, test := range []struct {
		name    string
		n, d    int
		x       []float64
		support []int
	}{
		{name: "n>d", n: 12, d: 5, x: randVec(rng, 60, 1)},
		{name: "n=d", n: 6, d: 6, x: randVec(rng, 36, 1)},
		{name: "n<d", n: 4, d: 10, x: randVec(rng, 40, 1)},
		{name: "n>d rank 3", n: 10, d: 6, x: lowRank(rng, 10, 6, 3)},
		{name: "n<d rank 2", n: 5, d: 8, x: lowRank(rng, 5, 8, 2)},
		{name: "subspace full", n: 6, d: 9, x: sub.Clients[0].X},
		{name: "subspace on support", n: 6, d: 9, x: sub.Clients[0].X, support: sub.Clients[0].Support},
	} {
		x := mat.NewDense(test.n, test.d, test.x)
		p := pinvOf(test.x, test.n, test.d, test.support)
		var xp, px, xpx, pxp mat.Dense
		xp.Mul(x, p)
		px.Mul(p, x)
		xpx.Mul(&xp, x)
		pxp.Mul(&px, p)
		const tol = 1e-9
		for _, c := range []struct {
			name      string
			got, want mat.Matrix
		}{
			{"XPX = X", &xpx, x}, {"PXP = P", &pxp, p}, {"(XP)ᵀ = XP", xp.T(), &xp}, {"(PX)ᵀ = PX", px.T(), &px},
		} {
			if !mat.EqualApprox(c.got, c.want, tol) {
				t.Errorf("%s: %s fails", test.name, c.name)
			}
		}
	}
}

// TestMinNormLeastSquaresIsOLS: with n ≥ d and a full-rank design the
// estimator is ordinary least squares, compared with gonum's QR solve of the
// overdetermined system; with n < d it interpolates the data.
func TestMinNormLeastSquaresIsOLS(t *testing.T) {
	for _, n := range []int{30, 100, 500} {
		fed, err := datasets.Linear{Clients: 1, Dim: 30, Samples: n, Noise: 0.5}.Generate(uint64(n))
		if err != nil {
			t.Fatal(err)
		}
		c := fed.Clients[0]
		x, y := design(c, fed.Dim)
		var want mat.VecDense
		if err := want.SolveVec(x, y); err != nil { // QR least squares for n ≥ d
			t.Fatal(err)
		}
		got := model.MinNormLeastSquares(c.X, c.Y, c.N, fed.Dim)
		if !floats.EqualApprox(got, want.RawVector().Data, 1e-9) {
			t.Errorf("n=%d: min-norm LS differs from OLS by %g", n, floats.Distance(got, want.RawVector().Data, 2))
		}
	}
	fed, _ := datasets.Linear{Clients: 1, Dim: 30, Samples: 10, Noise: 0.5}.Generate(1)
	c := fed.Clients[0]
	x, _ := design(c, fed.Dim)
	var fit mat.VecDense
	fit.MulVec(x, mat.NewVecDense(fed.Dim, model.MinNormLeastSquares(c.X, c.Y, c.N, fed.Dim)))
	if !floats.EqualApprox(fit.RawVector().Data, c.Y, 1e-9) {
		t.Error("n < d: the min-norm solution does not interpolate the data")
	}
}

func TestMinNormLeastSquaresPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("mismatched lengths did not panic")
		}
	}()
	model.MinNormLeastSquares(make([]float64, 5), make([]float64, 2), 2, 3)
}

// TestSubspaceSpectrum checks the thin decomposition against the Gram
// matrix computed from the raw design: P Q Λ Qᵀ Pᵀ = X_iᵀX_i/n_i, QᵀQ = I and
// QᵀPᵀ(X_iᵀy_i/n_i) = QtB, for clients with n ≥ r (Gram branch) and n < r
// (kernel branch), with and without a covariate subspace.
func TestSubspaceSpectrum(t *testing.T) {
	for _, cfg := range []datasets.Linear{
		{Clients: 2, Dim: 12, Samples: 30, ScarceClients: 1, ScarceSamples: 5, Noise: 1},
		{Clients: 2, Dim: 12, Samples: 30, ScarceClients: 1, ScarceSamples: 5, SubspaceDim: 8, Noise: 1},
		{Clients: 2, Dim: 12, Samples: 30, ScarceClients: 1, ScarceSamples: 3, SubspaceDim: 2, Noise: 1},
	} {
		fed, err := cfg.Generate(9)
		if err != nil {
			t.Fatal(err)
		}
		for i, sp := range model.SubspaceSpectra(fed) {
			name := fmt.Sprintf("%+v client %d", cfg, i)
			c := fed.Clients[i]
			x, y := design(c, fed.Dim)
			var g mat.Dense
			g.Mul(x.T(), x)
			g.Scale(1/float64(c.N), &g)
			ones := make([]float64, sp.K)
			for j := range ones {
				ones[j] = sp.Lambda[j]
			}
			rebuilt := make([]float64, fed.Dim*fed.Dim)
			sp.AddOuterTo(rebuilt, fed.Dim, 1, ones, nil)
			if !mat.EqualApprox(mat.NewDense(fed.Dim, fed.Dim, rebuilt), &g, 1e-10) {
				t.Errorf("%s: P Q Λ Qᵀ Pᵀ differs from X_iᵀX_i/n_i", name)
			}
			q := mat.NewDense(sp.R, max(sp.K, 1), sp.Q)
			var qtq mat.Dense
			qtq.Mul(q.T(), q)
			for a := 0; a < sp.K; a++ {
				for b := 0; b < sp.K; b++ {
					want := 0.0
					if a == b {
						want = 1
					}
					if !scalar.EqualWithinAbs(qtq.At(a, b), want, 1e-10) {
						t.Fatalf("%s: QᵀQ[%d,%d] = %v", name, a, b, qtq.At(a, b))
					}
				}
			}
			if wantK := min(c.N, sp.R); sp.K != wantK {
				t.Errorf("%s: kept %d eigenpairs, want min(n, r) = %d", name, sp.K, wantK)
			}
			// c = P Q (1 ∘ QtB) is the projection of b onto the row space of X.
			var b mat.VecDense
			b.MulVec(x.T(), y)
			b.ScaleVec(1/float64(c.N), &b)
			proj := make([]float64, fed.Dim)
			one := make([]float64, sp.K)
			for j := range one {
				one[j] = 1
			}
			sp.AddVecTo(proj, 1, one)
			if !floats.EqualApprox(proj, b.RawVector().Data, 1e-10) { // b already lies in the row space
				t.Errorf("%s: P Q QtB differs from X_iᵀy_i/n_i", name)
			}
		}
	}
}

// TestGDCoefficients compares the closed forms with s explicit scalar steps.
func TestGDCoefficients(t *testing.T) {
	for _, eta := range []float64{0.1, 0.7} {
		for _, lam := range []float64{0, 1e-9, 0.5, 2.5} {
			for _, s := range []int{1, 5, 10} {
				pow, geo := 1.0, 0.0
				for tau := 0; tau < s; tau++ {
					geo += pow * eta
					pow *= 1 - eta*lam
				}
				gp, gc, gg := model.GDCoefficients(lam, eta, s)
				if !scalar.EqualWithinAbsOrRel(gp, pow, 1e-14, 1e-12) || !scalar.EqualWithinAbsOrRel(gc, 1-pow, 1e-14, 1e-10) ||
					!scalar.EqualWithinAbsOrRel(gg, geo, 1e-14, 1e-10) {
					t.Errorf("η=%v λ=%v s=%d: got (%v, %v, %v), want (%v, %v, %v)", eta, lam, s, gp, gc, gg, pow, 1-pow, geo)
				}
			}
			m, c, g := model.ProxCoefficients(lam, eta)
			// The proximal step minimises λu²/2 − b̃u + (u − z)²/(2η): u = (z + ηb̃)/(1 + ηλ).
			if want := 1 / (1 + eta*lam); !scalar.EqualWithinRel(m, want, 1e-15) || !scalar.EqualWithinAbs(c, 1-want, 1e-15) ||
				!scalar.EqualWithinRel(g, eta*want, 1e-15) {
				t.Errorf("prox η=%v λ=%v: got (%v, %v, %v)", eta, lam, m, c, g)
			}
		}
	}
}

// TestIntegratedSquare compares the exact integral of docs/papers.md §8 with a
// Monte-Carlo estimate on 10⁶ uniform points of [−1, 1] (2 × the sample mean
// of the squared error): within 1 %, for the U5 target itself, a random
// degree-5 error and a degree-11 one.
func TestIntegratedSquare(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, delta := range [][]float64{datasets.ChebyshevU5, randVec(rng, 6, 1), randVec(rng, 12, 0.3)} {
		const points = 1_000_000
		var s float64
		for range points {
			v := datasets.PolyEval(delta, 2*rng.Float64()-1)
			s += v * v
		}
		mc := 2 * s / points
		if got := model.IntegratedSquare(delta); math.Abs(got-mc) > 0.01*mc {
			t.Errorf("δ=%v: exact %v, Monte Carlo %v", delta, got, mc)
		}
	}
	// A value by hand: ∫_{−1}^{1} x² dx = 2/3.
	if got := model.IntegratedSquare([]float64{0, 1}); !scalar.EqualWithinRel(got, 2.0/3, 1e-15) {
		t.Errorf("∫x² = %v, want 2/3", got)
	}
}

// TestGain checks the federation-gain ratio and the client choice.
func TestGain(t *testing.T) {
	if g := model.Gain(3, 1.5, false); g != 2 {
		t.Errorf("unsquared gain %v, want 2", g)
	}
	if g := model.Gain(3, 1.5, true); g != 4 {
		t.Errorf("squared gain %v, want 4", g)
	}
	fed, _ := datasets.Linear{Clients: 4, Dim: 10, Samples: 20, ScarceClients: 2, ScarceSamples: 5, Noise: 1}.Generate(1)
	if s, r := model.GainClients(fed); s != 0 || r != 2 {
		t.Errorf("GainClients = %d, %d, want 0, 2", s, r)
	}
	fed, _ = datasets.Linear{Clients: 2, Dim: 10, Samples: 20, Noise: 1}.Generate(1)
	if s, r := model.GainClients(fed); s != -1 || r != 0 {
		t.Errorf("GainClients without scarce clients = %d, %d, want -1, 0", s, r)
	}
}
