package model

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/fedscope/fedscope/datasets"
	"gonum.org/v1/gonum/mat"
)

// denseContraction builds FedNewton's error map explicitly,
// E = Σ_j p_j (C_Dj + λI)⁻¹(C_Dj − C_D) with C_Dj = Φ_jᵀΦ_j/|D_j| (docs/papers.md
// §4.2), from the features of fm, and returns its spectral radius from
// gonum's general (non-symmetric) eigen-solver: an independent truth for
// Ridge.Contraction.
func denseContraction(sets []*datasets.Set, fm FeatureMap, lambda float64) float64 {
	_, m := fm.Dims()
	n := 0
	for _, s := range sets {
		n += s.N
	}
	covs := make([]*mat.Dense, len(sets))
	cd := mat.NewDense(m, m, nil)
	for j, s := range sets {
		phi := make([]float64, s.N*m)
		fm.MapTo(phi, s.X, s.N)
		f := mat.NewDense(s.N, m, phi)
		covs[j] = mat.NewDense(m, m, nil)
		covs[j].Mul(f.T(), f)
		covs[j].Scale(1/float64(s.N), covs[j])
		var part mat.Dense
		part.Scale(float64(s.N)/float64(n), covs[j])
		cd.Add(cd, &part)
	}
	e := mat.NewDense(m, m, nil)
	for j, s := range sets {
		h := mat.DenseCopyOf(covs[j])
		for k := 0; k < m; k++ {
			h.Set(k, k, h.At(k, k)+lambda)
		}
		var diff, term mat.Dense
		diff.Sub(covs[j], cd)
		if err := term.Solve(h, &diff); err != nil {
			panic(err)
		}
		term.Scale(float64(s.N)/float64(n), &term)
		e.Add(e, &term)
	}
	var eig mat.Eigen
	if !eig.Factorize(e, mat.EigenNone) {
		panic("eigen failed")
	}
	rho := 0.0
	for _, v := range eig.Values(nil) {
		rho = math.Max(rho, cmplx.Abs(v))
	}
	return rho
}

// shiftedSet draws n Gaussian rows centred at shift·(1, …, 1) with an
// extra scale on the first coordinate: clients that differ in covariance.
func shiftedSet(rng *rand.Rand, n, d int, shift, scale float64) *datasets.Set {
	s := randomSet(rng, n, d, 0)
	for i := 0; i < n; i++ {
		row := s.Row(i)
		for k := range row {
			row[k] += shift
		}
		row[0] *= scale
	}
	return s
}

// ridgeCase is a small federation for the ridge tests that compare with a
// dense eigen-solve: clients of the given sizes, shifted covariates, m
// random features of bandwidth bw, and λ.
type ridgeCase struct {
	name    string
	sizes   []int
	shifts  []float64
	m       int
	bw, lam float64
}

// ridgeCases are primal and dual clients, contracting and not.
var ridgeCases = []ridgeCase{
	{"primal, contracting", []int{80, 120, 60}, []float64{0, 0.2, -0.1}, 12, 4, 1e-2},
	{"primal, heterogeneous", []int{60, 60, 60, 60}, []float64{-1, 0, 1, 2}, 16, 2, 1e-4},
	{"dual clients", []int{9, 14, 30}, []float64{0, 0.5, 0}, 20, 3, 1e-3},
	{"dual, tiny λ", []int{6, 8, 7, 9}, []float64{0, 0, 0, 0}, 24, 1, 1e-6},
}

// build draws the case's clients (seeded) and their ridge statistics.
func (test ridgeCase) build(t *testing.T) ([]*datasets.Set, *RFF, *Ridge) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	var sets []*datasets.Set
	for j, n := range test.sizes {
		sets = append(sets, shiftedSet(rng, n, 4, test.shifts[j], 1+float64(j)))
	}
	fm := NewRFF(4, test.m, test.bw, 3)
	r, err := NewRidge(sets, nil, fm, test.lam)
	if err != nil {
		t.Fatal(err)
	}
	return sets, fm, r
}

// TestContractionDense checks Υ (Lanczos in the H inner product) against a
// dense eigen-solve of the explicit M×M error map, on primal and dual
// clients, below and above 1.
func TestContractionDense(t *testing.T) {
	for _, test := range ridgeCases {
		t.Run(test.name, func(t *testing.T) {
			sets, fm, r := test.build(t)
			want := denseContraction(sets, fm, test.lam)
			got, steps := r.ContractionTol(1e-12)
			if math.Abs(got-want) > 1e-8*math.Max(1, want) {
				t.Errorf("Υ = %.12g after %d Lanczos steps, dense eigen-solve %.12g", got, steps, want)
			}
			if c := r.Contraction(); math.Abs(c-want) > 1e-5*math.Max(1, want) {
				t.Errorf("Contraction() = %.8g, want %.8g to 1e-6", c, want)
			}
			// From the λ-free statistics, applying H from its Gram matrix.
			stats, err := NewRidgeStats(sets, nil, fm)
			if err != nil {
				t.Fatal(err)
			}
			if c, err := stats.ContractionAt(test.lam, 1e-12, 0); err != nil || math.Abs(c-want) > 1e-8*math.Max(1, want) {
				t.Errorf("ContractionAt = %.12g (%v), want %.12g", c, err, want)
			}
			// Stopped at the limit 1, the estimate is a lower bound that
			// tells the side of 1 correctly.
			if c, _ := stats.ContractionAt(test.lam, 1e-12, 1); (c >= 1) != (want >= 1) || c > want*(1+1e-9) {
				t.Errorf("ContractionAt(limit 1) = %.6g, Υ = %.6g", c, want)
			}
			t.Logf("Υ = %.6g (%d steps)", want, steps)
		})
	}
}

// TestContraction checks the FedNewton contraction factor: 0 when every
// client has the pooled Hessian (identical designs).
func TestContraction(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	base := randomSet(rng, 30, 5, 0)
	same := []*datasets.Set{base, {N: 30, Dim: 5, X: base.X, Y: randomSet(rng, 30, 5, 0).Y}}
	r, _ := NewRidge(same, nil, Identity(5), 0.1)
	if c := r.Contraction(); c > 1e-8 {
		t.Errorf("identical Hessians: contraction %v, want 0", c)
	}
	avg, _ := r.DataHeterogeneity()
	if avg > 1e-10 {
		t.Errorf("identical designs: Δ_D = %v, want 0", avg)
	}
}

// TestDiagnose checks the counterfactuals behind a divergence: clients
// whose inputs sit in different regions diverge where the same samples
// dealt IID contract (heterogeneity); IID clients with a few samples each
// and a tiny λ diverge however they are dealt, and 10λ helps or not.
func TestDiagnose(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var het []*datasets.Set
	for j := 0; j < 4; j++ {
		het = append(het, shiftedSet(rng, 150, 3, 1.5*float64(j), 1))
	}
	fm := NewRFF(3, 30, 2, 5)
	r, err := NewRidge(het, nil, fm, 1e-3)
	if err != nil {
		t.Fatal(err)
	}
	d := r.Diagnose()
	t.Logf("heterogeneous: %s", d.Sentence())
	if d.Upsilon < 1 || d.Cause != CauseHeterogeneity || !(d.IID < 1) {
		t.Errorf("heterogeneous clients: %+v, want Υ ≥ 1 caused by heterogeneity (IID < 1)", d)
	}
	if want := denseContraction(het, fm, 1e-2); math.Abs(d.TenLambda-want) > 1e-2*math.Max(1, want) {
		t.Errorf("Υ at 10λ = %v, dense %v", d.TenLambda, want)
	}
	var iid []*datasets.Set
	for j := 0; j < 6; j++ {
		iid = append(iid, shiftedSet(rng, 12, 3, 0, 1))
	}
	for _, test := range []struct {
		lambda float64
		cause  string
	}{{1e-7, CauseFewSamples}, {2e-3, CauseSmallLambda}} {
		r, err := NewRidge(iid, nil, NewRFF(3, 40, 1, 5), test.lambda)
		if err != nil {
			t.Fatal(err)
		}
		d := r.Diagnose()
		t.Logf("IID, λ=%g: %s", test.lambda, d.Sentence())
		if d.Upsilon < 1 || d.Cause != test.cause {
			t.Errorf("IID clients, λ=%g: %+v, want Υ ≥ 1 caused by %s", test.lambda, d, test.cause)
		}
	}
	// Below 1 there is nothing to explain, and no counterfactual is built.
	r, _ = NewRidge(het, nil, fm, 1)
	if d := r.Diagnose(); d.Cause != "" || !math.IsNaN(d.IID) {
		t.Errorf("λ = 1: %+v, want Υ < 1 and no diagnosis", d)
	}
}

// TestRidgeStatsAt checks that one set of statistics serves many λ: each
// At(λ) gives the dense closed forms of KRR and DKRR at that λ, for primal
// and dual clients.
func TestRidgeStatsAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	sets := []*datasets.Set{randomSet(rng, 40, 8, 3), randomSet(rng, 5, 8, 3), randomSet(rng, 25, 8, 3)}
	s, err := NewRidgeStats(sets, randomSet(rng, 10, 8, 3), Identity(8))
	if err != nil {
		t.Fatal(err)
	}
	for _, lambda := range []float64{1, 1e-2, 1e-4} {
		r, err := s.At(lambda)
		if err != nil {
			t.Fatal(err)
		}
		closeTo(t, "KRR", r.KRR, naiveRidge(sets, lambda, 3), 1e-8)
		want := mat.NewDense(8, 3, nil)
		for _, set := range sets {
			var part mat.Dense
			part.Scale(float64(set.N)/70, naiveRidge([]*datasets.Set{set}, lambda, 3))
			want.Add(want, &part)
		}
		closeTo(t, "DKRR", r.DKRR, want, 1e-8)
	}
	if _, err := s.At(0); err == nil {
		t.Error("At(0): no error")
	}
}

// TestCholesky checks the blocked factorisation against gonum's Dpotrf
// (RᵀR = A, same factor), on sizes around the block size, and that it
// reports a matrix that is not positive definite.
func TestCholesky(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, m := range []int{1, 5, 127, 128, 129, 300} {
		x := make([]float64, (m+3)*m)
		for k := range x {
			x[k] = rng.NormFloat64()
		}
		a := make([]float64, m*m)
		symRankTo(a, transposed(x, m+3, m), m, m+3, 1, 0)
		want := mat.NewSymDense(m, nil)
		for i := 0; i < m; i++ {
			for j := i; j < m; j++ {
				want.SetSym(i, j, a[i*m+j])
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(want) {
			t.Fatalf("m=%d: gonum says not positive definite", m)
		}
		var r mat.TriDense
		ch.UTo(&r)
		if !cholesky(a, m) {
			t.Fatalf("m=%d: not positive definite", m)
		}
		for i := 0; i < m; i++ {
			for j := i; j < m; j++ {
				if got, w := a[i*m+j], r.At(i, j); math.Abs(got-w) > 1e-10*(1+math.Abs(w)) {
					t.Fatalf("m=%d: R[%d,%d] = %v, gonum %v", m, i, j, got, w)
				}
			}
		}
	}
	a := []float64{1, 2, 0, 1} // [[1 2] [2 1]]: eigenvalues 3 and −1
	if cholesky(a, 2) {
		t.Error("indefinite matrix factorised")
	}
}

func transposed(x []float64, rows, cols int) []float64 {
	out := make([]float64, len(x))
	transposeTo(out, x, rows, cols)
	return out
}

// TestCosine checks the feature map's cosine against math.Cos over the
// range of random-feature phases and beyond.
func TestCosine(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	worst := 0.0
	for i := 0; i < 200000; i++ {
		x := (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(8))) // up to ±5e6
		if d := math.Abs(cosine(x) - math.Cos(x)); d > worst {
			worst = d
		}
	}
	for _, x := range []float64{0, math.Pi / 2, math.Pi, -math.Pi, 2 * math.Pi, 1 << 20, -(1 << 21), math.Inf(1), math.NaN()} {
		if got, want := cosine(x), math.Cos(x); math.Abs(got-want) > 2e-15 && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("cosine(%v) = %v, math.Cos %v", x, got, want)
		}
	}
	if worst > 2e-15 {
		t.Errorf("largest difference from math.Cos %.3g", worst)
	}
	t.Logf("largest difference from math.Cos: %.3g", worst)
}
