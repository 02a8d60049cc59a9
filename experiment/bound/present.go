package bound

import (
	"fmt"

	"github.com/fedscope/fedscope/experiment"
)

// Story implements experiment.Presentation.
func (present) Story(experiment.Scenario, Config) string {
	return "FedAvg with τ single-sample SGD steps per round on the notes' toy classifier. Top: the running average of F(x̄) − F*, Thm 2.1's left side, " +
		"under its right side (dashed). Only the bound's first term falls with the rounds: with a constant η it has a floor, so the notes' " +
		"\"O(1/(τT))\" needs a shrinking step. Bottom: the clients' drift under the drift lemma; H raises the heterogeneity ζ (paper 002, Thm 2.1)."
}

// Caption implements experiment.Presentation.
func (present) Caption(experiment.Scenario, Config) string {
	return "Solid: F(x̄) − F* and the client drift; dashed: Thm 2.1's bound and the drift lemma. At a constant η the bound has a floor."
}

// Annotations implements experiment.Presentation.
func (present) Annotations(experiment.Scenario, Config) []experiment.Annotation {
	return []experiment.Annotation{
		{Metric: "subopt_avg", Kind: experiment.Diverges, Text: "%s diverged"},
	}
}

// Summarize implements experiment.Presentation: no end-of-run summary.
func (present) Summarize(experiment.Scenario, Config, *experiment.Table) []experiment.RacerSummary {
	return nil
}

// Menu implements experiment.Presentation: the racers of the preset.
func (present) Menu(experiment.Scenario, Config) []experiment.RacerSpec { return nil }

// Looks implements experiment.Presentation.
func (present) Looks() map[string]int { return map[string]int{KindFedAvg: 2} }

// Help implements experiment.Presentation.
func (present) Help(experiment.Scenario, Config) string {
	return "Top: the running average over every local step so far of F(x̄) − F*, the left side of Thm 2.1, " +
		"under the theorem's right side D²/(2ητT) + ησ²/M + 4τη²Lσ² + 18τ²η²Lζ² (dashed, same colour). " +
		"Only the first term falls with T: with a constant η the bound has a floor, so the notes' closing " +
		"\"= O(1/(τT))\" does not hold for a constant step. Bottom: the client drift ‖x_i − x̄‖² under 18τ²η²ζ² + 4τη²σ². " +
		"σ², ζ are bounded over the ball ‖x − x*‖ ≤ D, where the iterates stay."
}

// Facts implements experiment.Presentation: the constants of the bound,
// and a warning when η exceeds the step Thm 2.1 assumes.
func (present) Facts(sc experiment.Scenario, c Config, d *Data) experiment.Facts {
	f := experiment.Facts{Charts: []string{"subopt_avg", "drift"}}
	eta := "1/(4L)"
	if c.Eta > 0 {
		eta = experiment.FormatFloat(c.Eta)
	}
	f.Summary = fmt.Sprintf("M=%d × %d points, d=3, Dir(%s) classes, η=%s, τ=%d", c.Clients, c.Samples,
		experiment.FormatFloat(c.DirichletC), eta, c.Tau)
	if d == nil {
		return f
	}
	f.Summary += fmt.Sprintf(" · L=%.3g, ζ=%.3g, σ²=%.3g, D=%.3g", d.L, d.Zeta, d.Sigma2, d.D)
	f.Notes = append(f.Notes, fmt.Sprintf("bound constants: L = max_i 2λ_max(X_iᵀX_i/n_i) = %.3g; σ² = %.3g and ζ = %.3g bounded over ‖x − x*‖ ≤ D = %.3g; 1/(4L) = %.3g",
		d.L, d.Sigma2, d.Zeta, d.D, d.stepLimit()))
	for _, r := range (compute{}).Racers(sc, c) {
		eta, pinned := r.Spec.Opt("eta")
		if !pinned {
			eta = c.Eta
		}
		if eta > d.stepLimit() {
			f.Warnings = append(f.Warnings, fmt.Sprintf("%s: η=%.3g exceeds 1/(4L)=%.3g, so Thm 2.1 does not apply and its bound is drawn outside its regime",
				r.Label, eta, d.stepLimit()))
		}
	}
	return f
}
