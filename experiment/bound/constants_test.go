package bound

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// The truths of these tests are computed here from the clients' raw rows
// and labels, never from the statistics Data keeps (H_i, B_i, C_i, Star).

// raw holds what a test knows about the toy federation: the rows and labels.
type raw struct {
	x [][]float64 // per client, n_i×3 row-major
	y [][]float64
}

func rawOf(d *Data) raw {
	var r raw
	for _, c := range d.Clients {
		r.x = append(r.x, append([]float64(nil), c.X...))
		r.y = append(r.y, append([]float64(nil), c.Y...))
	}
	return r
}

// row returns x_j of client i.
func (r raw) row(i, j int) []float64 { return r.x[i][j*dim : (j+1)*dim] }

// sampleGrad is the gradient of the one-sample loss (wᵀx_j − y_j)² of the
// toy example (docs/papers.md §3.3: mean squared error, no ½).
func (r raw) sampleGrad(i, j int, w []float64) []float64 {
	x := r.row(i, j)
	g := make([]float64, dim)
	floats.AddScaled(g, 2*(floats.Dot(w, x)-r.y[i][j]), x)
	return g
}

// grad is ∇F_i(w) = (2/n_i) Σ_j (wᵀx_j − y_j) x_j.
func (r raw) grad(i int, w []float64) []float64 {
	g := make([]float64, dim)
	n := len(r.y[i])
	for j := 0; j < n; j++ {
		floats.AddScaled(g, 1/float64(n), r.sampleGrad(i, j, w))
	}
	return g
}

// fullGrad is ∇F(w) = (1/M) Σ_i ∇F_i(w) (uniform weights, docs/papers.md §3.1).
func (r raw) fullGrad(w []float64) []float64 {
	g := make([]float64, dim)
	for i := range r.x {
		floats.AddScaled(g, 1/float64(len(r.x)), r.grad(i, w))
	}
	return g
}

// f is F(w) = (1/M) Σ_i (1/n_i) Σ_j (wᵀx_j − y_j)².
func (r raw) f(w []float64) float64 {
	var s float64
	for i := range r.x {
		n := len(r.y[i])
		var fi float64
		for j := 0; j < n; j++ {
			e := floats.Dot(w, r.row(i, j)) - r.y[i][j]
			fi += e * e / float64(n)
		}
		s += fi / float64(len(r.x))
	}
	return s
}

// gram is X_iᵀX_i/n_i as a symmetric matrix.
func (r raw) gram(i int) *mat.SymDense {
	n := len(r.y[i])
	x := mat.NewDense(n, dim, r.x[i])
	var g mat.SymDense
	g.SymOuterK(1/float64(n), x.T())
	return &g
}

// star solves the normal equations of F: Σ_i X_iᵀX_i/n_i · x = Σ_i X_iᵀy_i/n_i.
func (r raw) star(t *testing.T) []float64 {
	t.Helper()
	a := mat.NewSymDense(dim, nil)
	b := mat.NewVecDense(dim, nil)
	for i := range r.x {
		a.AddSym(a, r.gram(i))
		var xty mat.VecDense
		xty.MulVec(mat.NewDense(len(r.y[i]), dim, r.x[i]).T(), mat.NewVecDense(len(r.y[i]), r.y[i]))
		b.AddScaledVec(b, 1/float64(len(r.y[i])), &xty)
	}
	var chol mat.Cholesky
	if !chol.Factorize(a) {
		t.Fatal("normal equations not positive definite")
	}
	var x mat.VecDense
	if err := chol.SolveVecTo(&x, b); err != nil {
		t.Fatal(err)
	}
	return x.RawVector().Data
}

// ballPoint draws a point of the ball ‖x − c‖ ≤ rad, on its surface when
// onSphere (where a convex function of x peaks).
func ballPoint(rng *rand.Rand, c []float64, rad float64, onSphere bool) []float64 {
	v := make([]float64, dim)
	for k := range v {
		v[k] = rng.NormFloat64()
	}
	s := rad / floats.Norm(v, 2)
	if !onSphere {
		s *= math.Cbrt(rng.Float64())
	}
	floats.Scale(s, v)
	floats.Add(v, c)
	return v
}

// near reports whether a and b agree to the relative tolerance rel.
func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b)) }

// TestBoundConstants checks the constants of Thm 2.1 (docs/papers.md §3.2) on a
// small instance against quantities computed here from the raw data:
// x* from the normal equations, F* = F(x*), D = ‖x⁽⁰⁾ − x*‖ with x⁽⁰⁾ = 0,
// L = max_i 2 λ_max(X_iᵀX_i/n_i) (every F_i is L-smooth: its Hessian is
// 2X_iᵀX_i/n_i, §3.3); and that the estimated σ² and ζ bound the true
// stochastic-gradient variance max_i E_j‖g_j(x) − ∇F_i(x)‖² and dissimilarity
// max_i ‖∇F_i(x) − ∇F(x)‖ at many points of the ball ‖x − x*‖ ≤ D the
// iterates stay in.
func TestBoundConstants(t *testing.T) {
	for _, test := range []struct {
		clients, samples int
		c                float64
		seed             uint64
	}{
		{4, 30, 1, 7},
		{3, 12, 0.1, 2},  // highly skewed classes: large ζ
		{5, 40, 100, 11}, // about IID
	} {
		d := generate(test.clients, test.samples, test.c, test.seed)
		r := rawOf(d)
		star := r.star(t)
		if dist := floats.Distance(star, d.Star, 2); dist > 1e-9*floats.Norm(star, 2) {
			t.Errorf("seed %d: x* = %v, normal equations give %v", test.seed, d.Star, star)
		}
		if g := r.fullGrad(star); floats.Norm(g, 2) > 1e-9 {
			t.Errorf("seed %d: ‖∇F(x*)‖ = %g at the solved x*", test.seed, floats.Norm(g, 2))
		}
		if fs := r.f(star); !near(d.FStar, fs, 1e-12) {
			t.Errorf("seed %d: F* = %v, F(x*) = %v", test.seed, d.FStar, fs)
		}
		if D := floats.Norm(star, 2); !near(d.D, D, 1e-9) {
			t.Errorf("seed %d: D = %v, ‖x*‖ = %v", test.seed, d.D, D)
		}
		var L float64
		for i := range r.x {
			var es mat.EigenSym
			if !es.Factorize(r.gram(i), false) {
				t.Fatal("EigenSym failed")
			}
			L = math.Max(L, 2*floats.Max(es.Values(nil)))
		}
		if !near(d.L, L, 1e-10) {
			t.Errorf("seed %d: L = %v, max_i 2λ_max(X_iᵀX_i/n_i) = %v", test.seed, d.L, L)
		}

		rng := rand.New(rand.NewPCG(test.seed, 99))
		var maxVar, maxDis float64
		for p := 0; p < 2000; p++ {
			x := ballPoint(rng, star, d.D, p%2 == 0)
			full := r.fullGrad(x)
			for i := range r.x {
				gi := r.grad(i, x)
				maxDis = math.Max(maxDis, floats.Distance(gi, full, 2))
				var v float64
				n := len(r.y[i])
				for j := 0; j < n; j++ {
					e := floats.Distance(r.sampleGrad(i, j, x), gi, 2)
					v += e * e / float64(n)
				}
				maxVar = math.Max(maxVar, v)
			}
		}
		if maxVar > d.Sigma2 {
			t.Errorf("seed %d: variance %v in the ball exceeds σ² = %v", test.seed, maxVar, d.Sigma2)
		}
		if maxDis > d.Zeta {
			t.Errorf("seed %d: dissimilarity %v in the ball exceeds ζ = %v", test.seed, maxDis, d.Zeta)
		}
		if !(maxVar > 0 && maxDis > 0) {
			t.Errorf("seed %d: degenerate instance (variance %v, dissimilarity %v)", test.seed, maxVar, maxDis)
		}
	}
}

// TestBoundFormula checks Bound, BoundFloor and DriftBound against Thm 2.1
// and the client-drift lemma of docs/papers.md §3.2 written out by hand:
//
//	D²/(2ητT) + ησ²/M + 4τη²Lσ² + 18τ²η²Lζ²   and   18τ²η²ζ² + 4τη²σ².
func TestBoundFormula(t *testing.T) {
	d := &Data{D: 1.7, L: 3.1, Sigma2: 0.9, Zeta: 0.45}
	for _, c := range []struct {
		eta       float64
		tau, T, m int
	}{
		{0.05, 5, 1, 10}, {0.05, 5, 100, 10}, {0.01, 1, 7, 1}, {0.2, 30, 3, 4},
	} {
		eta, tau, T, m := c.eta, float64(c.tau), float64(c.T), float64(c.m)
		floor := eta*0.9/m + 4*tau*eta*eta*3.1*0.9 + 18*tau*tau*eta*eta*3.1*0.45*0.45
		bound := 1.7*1.7/(2*eta*tau*T) + floor
		drift := 18*tau*tau*eta*eta*0.45*0.45 + 4*tau*eta*eta*0.9
		if got := BoundFloor(d, c.eta, c.tau, c.m); !near(got, floor, 1e-14) {
			t.Errorf("%+v: BoundFloor = %v, by hand %v", c, got, floor)
		}
		if got := Bound(d, c.eta, c.tau, c.T, c.m); !near(got, bound, 1e-14) {
			t.Errorf("%+v: Bound = %v, by hand %v", c, got, bound)
		}
		if got := DriftBound(d, c.eta, c.tau); !near(got, drift, 1e-14) {
			t.Errorf("%+v: DriftBound = %v, by hand %v", c, got, drift)
		}
	}
	// Only the first term falls with T: the bound tends to its floor.
	if got, floor := Bound(d, 0.05, 5, 1e9, 10), BoundFloor(d, 0.05, 5, 10); !near(got, floor, 1e-8) {
		t.Errorf("Bound at T = 1e9 is %v, floor %v", got, floor)
	}
}
