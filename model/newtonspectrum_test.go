package model

import (
	"math"
	"math/cmplx"
	"sort"
	"testing"

	"github.com/fedscope/fedscope/datasets"
	"gonum.org/v1/gonum/mat"
)

// denseNewtonMap builds AH = Σ_j p_j H_j⁻¹ H explicitly (H_j = C_Dj + λI,
// H = C_D + λI) from the features of fm: an independent truth for
// NewtonSpectrum.
func denseNewtonMap(sets []*datasets.Set, fm FeatureMap, lambda float64) *mat.Dense {
	_, m := fm.Dims()
	n := 0
	for _, s := range sets {
		n += s.N
	}
	h := mat.NewDense(m, m, nil)
	hs := make([]*mat.Dense, len(sets))
	for j, s := range sets {
		phi := make([]float64, s.N*m)
		fm.MapTo(phi, s.X, s.N)
		f := mat.NewDense(s.N, m, phi)
		hs[j] = mat.NewDense(m, m, nil)
		hs[j].Mul(f.T(), f)
		hs[j].Scale(1/float64(s.N), hs[j])
		for k := 0; k < m; k++ {
			hs[j].Set(k, k, hs[j].At(k, k)+lambda)
		}
		var part mat.Dense
		part.Scale(float64(s.N)/float64(n), hs[j])
		h.Add(h, &part)
	}
	ah := mat.NewDense(m, m, nil)
	for j, s := range sets {
		var term mat.Dense
		if err := term.Solve(hs[j], h); err != nil {
			panic(err)
		}
		term.Scale(float64(s.N)/float64(n), &term)
		ah.Add(ah, &term)
	}
	return ah
}

func eigenvalues(a *mat.Dense) []float64 {
	var eig mat.Eigen
	if !eig.Factorize(a, mat.EigenNone) {
		panic("eigen failed")
	}
	var out []float64
	for _, v := range eig.Values(nil) {
		out = append(out, real(v))
		if math.Abs(imag(v)) > 1e-9*cmplx.Abs(v) {
			panic("complex eigenvalue of AH")
		}
	}
	sort.Float64s(out)
	return out
}

// TestNewtonSpectrum checks μ_min and μ_max of AH (Lanczos in the H inner
// product) against a dense eigen-solve of the explicit matrix, that
// μ_min ≥ 1 (A ⪰ H⁻¹: every undamped step overshoots, so Υ = μ_max − 1),
// and that the damped step η = 2/(1 + μ_max) contracts at exactly
// (μ_max − 1)/(μ_max + 1), the spectral radius of the dense I − ηAH, also
// where the undamped Υ exceeds 1.
func TestNewtonSpectrum(t *testing.T) {
	for _, test := range ridgeCases {
		t.Run(test.name, func(t *testing.T) {
			sets, fm, r := test.build(t)
			ah := denseNewtonMap(sets, fm, test.lam)
			ev := eigenvalues(ah)
			lo, hi := ev[0], ev[len(ev)-1]
			muMin, muMax, steps := r.NewtonSpectrum(1e-12)
			if math.Abs(muMin-lo) > 1e-8*math.Max(1, hi) || math.Abs(muMax-hi) > 1e-8*math.Max(1, hi) {
				t.Errorf("μ = [%.10g, %.10g] after %d steps, dense [%.10g, %.10g]", muMin, muMax, steps, lo, hi)
			}
			if lo < 1-1e-9 {
				t.Errorf("μ_min = %v < 1: A ⪰ H⁻¹ fails", lo)
			}
			if ups := r.Contraction(); math.Abs(ups-(hi-1)) > 1e-5*math.Max(1, hi) {
				t.Errorf("Υ = %v, μ_max − 1 = %v", ups, hi-1)
			}
			eta := DampedStep(muMax)
			damped := mat.NewDense(len(ev), len(ev), nil)
			damped.Scale(-eta, ah)
			for k := range ev {
				damped.Set(k, k, damped.At(k, k)+1)
			}
			var radius float64
			for _, v := range eigenvalues(damped) {
				radius = math.Max(radius, math.Abs(v))
			}
			want := (hi - 1) / (hi + 1)
			if got := DampedRate(eta, muMin, muMax); math.Abs(got-want) > 1e-8 || math.Abs(radius-want) > 1e-8 {
				t.Errorf("damped rate %v, dense spectral radius of I − ηAH %v, (μ_max − 1)/(μ_max + 1) = %v", got, radius, want)
			}
			t.Logf("μ ∈ [%.4g, %.4g]: Υ = %.4g, damped %.4g", lo, hi, hi-1, want)
		})
	}
}
