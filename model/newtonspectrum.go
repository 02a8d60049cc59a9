package model

import "math"

// NewtonSpectrum returns the extreme eigenvalues μ_min ≤ μ_max of AH,
// A = Σ_j p_j H_j⁻¹ (see Ridge.ContractionTol), each to an absolute accuracy
// of tol·max(1, μ_max), with the Lanczos steps taken. FedNewton's error map
// is I − AH, so its contraction factor is Υ = max(1 − μ_min, μ_max − 1);
// since the inverse is operator convex, A ⪰ H⁻¹ and μ_min ≥ 1: every
// undamped step overshoots, and Υ = μ_max − 1.
//
// A damped step w ← w − η A g has the error map I − ηAH, whose spectral
// radius is max(|1 − ημ_min|, |1 − ημ_max|) (DampedRate); at
// η = 2/(1 + μ_max) it is (μ_max − 1)/(μ_max + 1) < 1 whenever μ_min ≥ 1,
// for every λ.
func (r *Ridge) NewtonSpectrum(tol float64) (muMin, muMax float64, steps int) {
	seq := r.lanczosSeq() // the steps of Contraction's process, when it ran first
	maxSteps := min(r.M, 400)
	for k := 1; ; k++ {
		alpha, beta, b := seq.step(k)
		if k >= 2 || b == 0 {
			lo, hi, resLo, resHi := ritz(alpha, beta, b)
			muMin, muMax = 1-lo, 1+hi
			acc := tol * math.Max(1, muMax)
			invariant := b <= 1e-13*math.Max(1, math.Abs(alpha[k-1]))
			if invariant || (resLo <= acc && resHi <= acc) || k >= maxSteps {
				return muMin, muMax, k
			}
		}
	}
}

// DampedStep is the step η = 2/(1 + μ_max) of the damped FedNewton.
func DampedStep(muMax float64) float64 { return 2 / (1 + muMax) }

// DampedRate is the spectral radius of I − ηAH, max(|1 − ημ_min|, |1 − ημ_max|):
// the per-round contraction of the damped FedNewton with step η.
func DampedRate(eta, muMin, muMax float64) float64 {
	return math.Max(math.Abs(1-eta*muMin), math.Abs(1-eta*muMax))
}
