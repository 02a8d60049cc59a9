package linear

import (
	"fmt"
	"math"

	"github.com/fedscope/fedscope/experiment"
)

// The papers' predictions drawn as dashed overlays (toggled with t).

// lsTheory is the typical error of pooled least squares on a Gaussian
// design: E‖θ_LS − θ*‖² = σ² tr((XᵀX)⁻¹) = σ² d/(N − d − 1) for rows
// N(0, I_d) (the mean of an inverse Wishart matrix), so the error is about
// σ√(d/(N − d − 1)) — the floor the paradox's racers reach (paper 000, §1.7
// Thm 3's σ²d/N term). It applies to one common truth and full-rank
// Gaussian rows; nil otherwise.
func lsTheory(c Config) []experiment.Level {
	d := c.Data
	n := float64(d.TotalSamples())
	if d.Gamma != 0 || (d.SubspaceDim != 0 && d.SubspaceDim != d.Dim) || n <= float64(d.Dim)+1 {
		return nil
	}
	v := d.Noise * math.Sqrt(float64(d.Dim)/(n-float64(d.Dim)-1))
	return []experiment.Level{{Metric: "est_error", Value: v, Label: "σ√(d/(N−d−1))", Theory: true}}
}

// fedGainTheory is Thm 5's thresholds on the model-heterogeneity sweep (paper
// 000, §1.8): a data-scarce client (n_j < d) gains while
// Γ ≲ √(1 − n_j/d)·‖θ_j*‖, a data-rich one while Γ ≲ σ√(d/n_j), with
// ‖θ_j*‖ ≈ ‖θ*‖ ≈ √d (θ* ~ N(0, I_d), docs/papers.md §8). Γ there is the
// realised max pairwise distance; the sweep's knob is the perturbation
// radius, so the marks sit at the radius whose realised Γ is the threshold,
// using the ratio realised/radius measured on the first trial's draw (1.60
// at the preset's M = 20, d = 100; not √2, the typical pairwise distance),
// and the label gives both values.
func fedGainTheory(sc experiment.Scenario, c Config, gainer int) []experiment.Theory {
	if sc.Sweep.Knob != "gamma" {
		if sc.Sweep.Knob == "subspace_dim" && gainer == 0 {
			return coverageTheory(c)
		}
		return nil
	}
	d := c.Data
	ratio := realisedRatio(c, sc.Seed)
	if math.IsNaN(ratio) {
		return nil
	}
	dim := float64(d.Dim)
	if gainer == 0 {
		n := float64(d.ScarceSamples)
		if d.ScarceClients == 0 || n >= dim {
			return nil
		}
		g := math.Sqrt(1-n/dim) * math.Sqrt(dim)
		return []experiment.Theory{{Label: fmt.Sprintf("Thm 5: the scarce client gains while Γ ≲ √(1−n/d)‖θ*‖ = %.3g (realised Γ; radius ≈ %.3g on this axis)",
			g, g/ratio), At: g / ratio}}
	}
	n := float64(d.Samples)
	g := d.Noise * math.Sqrt(dim/n)
	return []experiment.Theory{{Label: fmt.Sprintf("Thm 5: the rich client gains while Γ ≲ σ√(d/n) = %.3g (realised Γ; radius ≈ %.3g on this axis)",
		g, g/ratio), At: g / ratio}}
}

// realisedRatio is the realised max pairwise Γ over the perturbation radius
// of the sweep's first trial (the radius scheme draws θ_i* = θ* + Γ·u_i, so
// the ratio does not depend on Γ).
func realisedRatio(c Config, seed uint64) float64 {
	d := c.Data
	d.Gamma = 1
	d.Samples, d.ScarceSamples = 1, min(d.ScarceSamples, 1) // the truths only
	fed, err := d.Generate(seed)
	if err != nil {
		return math.NaN()
	}
	return fed.RealisedGamma
}

// coverageTheory is Thm 6's jump (paper 000, §1.8): the federation gain
// jumps once the clients' random subspaces cover all d coordinates, a
// coupon collector at r ≈ d·ln d / M.
func coverageTheory(c Config) []experiment.Theory {
	d := c.Data
	r := float64(d.Dim) * math.Log(float64(d.Dim)) / float64(d.Clients)
	return []experiment.Theory{{Label: fmt.Sprintf("Thm 6: the subspaces cover all d coordinates at r ≈ d·ln d/M = %.3g", r), At: r}}
}

// polynomialTheory is the O(1/N) rate of the polynomial fit (paper 000,
// Fig. 6): least squares on the pooled data with a uniform design has
// E∫(f̂ − f)² dx = σ² tr(M G⁻¹)/N with M = ∫φφᵀ dx = 2G, i.e. 2σ²d/N — the
// minimax rate of a d-dimensional class.
func polynomialTheory(sc experiment.Scenario, c Config, inverse bool) []experiment.Theory {
	d := c.Data
	curve := make([]float64, len(sc.Sweep.Grid))
	for i, n := range sc.Sweep.Grid {
		mse := 2 * d.Noise * d.Noise * float64(d.Dim) / (float64(d.Clients) * n)
		curve[i] = mse
		if inverse {
			curve[i] = 1 / mse
		}
	}
	label := "O(1/N): 2σ²d/N of pooled least squares"
	if inverse {
		label = "N/(2σ²d)"
	}
	return []experiment.Theory{{Label: label, Curve: curve}}
}
