package newton

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fedscope/fedscope/experiment"
)

// Story implements experiment.Presentation.
func (present) Story(sc experiment.Scenario, c Config) string {
	switch sc.Sweep.Knob {
	case "clients":
		return "The same |D| = 10000 samples split over more and more clients, so each holds fewer. DKRR, one average of local KRR fits, degrades as the local fits get noisy; " +
			"FedNewton corrects it with the global gradient and each client's local Hessian and recovers KRR in a few rounds — as long as the local Hessians are good enough " +
			"for its contraction factor Υ to stay below 1 (paper 003, Thm 1 and Fig. 3)."
	case "alpha", "beta":
		return "Clients drift apart in their inputs (α) or their models (β). DKRR suffers from the drift; FedNewton's rounds pull it back to centralised KRR " +
			"while its contraction factor Υ stays below 1 (paper 003, Thm 1 and Fig. 4). x relabels the axis with the measured heterogeneity."
	}
	if c.Data.DataPath != "" {
		return "Your data, dealt to the clients, in random Fourier features. KRR is the centralised target, DKRR averages the clients' local fits once, " +
			"FedNewton improves on DKRR with a Newton step per round (global gradient, local Hessians); FedAvg and FedProx start from DKRR too (paper 003, Table 3)."
	}
	return "KRR on all data is the target; DKRR averages the clients' local KRR fits once. FedNewton combines the global gradient with each client's local Hessian: " +
		"when its contraction factor Υ (in the title) is below 1 it reaches KRR in a few rounds, while FedAvg and FedProx barely move from their DKRR start " +
		"(paper 003, Fig. 5)."
}

// Caption implements experiment.Presentation.
func (present) Caption(sc experiment.Scenario, c Config) string {
	switch sc.Sweep.Knob {
	case "clients":
		return "Fewer samples per client: DKRR degrades, FedNewton recovers KRR in a few rounds while its contraction factor Υ stays below 1."
	case "alpha", "beta":
		return "As clients drift apart, DKRR suffers; FedNewton's rounds pull it back to KRR while its contraction factor Υ stays below 1."
	}
	if c.Data.DataPath != "" {
		return "Your data: KRR is the target, DKRR one average of local fits; FedNewton improves on DKRR each round while Υ (title) is below 1."
	}
	return "FedNewton reaches KRR in a few rounds when Υ (in the title) is below 1; FedAvg and FedProx barely leave their DKRR start."
}

// Annotations implements experiment.Presentation.
func (present) Annotations(sc experiment.Scenario, _ Config) []experiment.Annotation {
	if sc.IsSweep() {
		return nil
	}
	return []experiment.Annotation{
		{Metric: "krr_dist", Kind: experiment.Diverges, Text: "%s diverged"},
		{Metric: "test_mse", Kind: experiment.Diverges, Text: "%s diverged"},
		{Metric: "test_acc", Kind: experiment.Diverges, Text: "%s diverged"},
	}
}

// Summarize implements experiment.Presentation: no end-of-run summary.
func (present) Summarize(experiment.Scenario, Config, *experiment.Table) []experiment.RacerSummary {
	return nil
}

// Menu implements experiment.Presentation: the racers of the presets.
func (present) Menu(experiment.Scenario, Config) []experiment.RacerSpec { return nil }

// Looks implements experiment.Presentation: KRR, DKRR and FedNewton first,
// FedAvg and FedProx with the looks they have in paper 000's race.
func (present) Looks() map[string]int {
	return map[string]int{KindKRR: 0, KindDKRR: 1, KindFedNewton: 2, "fednewton:damped": 7,
		"fedavg:s=1": 0, "fedavg:s=5": 1, "fedavg": 2, "fedprox": 3, "fedavg:s=10": 4, "fedavg:s=2": 5, "fedavg:s=20": 6}
}

// dataPrompt is what the views say when they ask for a data file: the
// formats read, and what a file run does with the file (dataScenario's
// settings).
func dataPrompt() *experiment.Prompt {
	c := dataConfig()
	d := c.Data
	var b strings.Builder
	b.WriteString("A LIBSVM file (label index:value …) or a .csv file (label first; a header line of names is skipped). ")
	if d.Scale {
		b.WriteString("Features are scaled to [0,1] on the training part, ")
	}
	fmt.Fprintf(&b, "%.0f %% is held out for testing, %d random Fourier features, ", 100*d.Holdout, d.RFFDim)
	if d.Bandwidth == 0 {
		b.WriteString("bandwidth from the median distance, ")
	}
	fmt.Fprintf(&b, "λ = %s. Racers: ", experiment.FormatFloat(d.Lambda))
	for i, r := range (compute{}).Racers(experiment.Scenario{}, c) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.Label)
	}
	b.WriteString(".")
	return &experiment.Prompt{Title: "Race on your own data", Label: "data file: ", Placeholder: "path to a LIBSVM or .csv file",
		Text: b.String()}
}

// Help implements experiment.Presentation.
func (present) Help(experiment.Scenario, Config) string {
	return "Test MSE (accuracy for classes) per round, and the distance to centralised KRR on a log axis: " +
		"FedNewton contracts towards KRR by its contraction factor Υ (in the title) per round when Υ < 1, and diverges when Υ > 1; " +
		"DKRR is its round-0 start. Its step always overshoots (Υ = μ_max − 1, μ_max the largest eigenvalue of Σ_j p_j H_j⁻¹ H ≥ 1); " +
		"fednewton:damped takes the step 2/(1 + μ_max) and contracts by (μ_max − 1)/(μ_max + 1) < 1 at any λ (\"damped\" in the title). " +
		"Table 3's settings sit at the edge of stability: pendigits at σ² = 1, λ = 1e-4 has Υ ≈ 1.2, so FedNewton holds KRR's accuracy for " +
		"about 20 rounds, falls to 82 % by round 30 and diverges at round 32, while the damped step stays at KRR. The title also says the " +
		"bandwidth σ² and λ used (tune=true: the best validation score; the undamped FedNewton, when it races, at the best score with Υ ≤ 0.85)."
}

// summary is the line under the title; with the prepared data p it shows
// the bandwidth and λ actually used and FedNewton's contraction factor Υ.
func summary(c Config, p *Prepared) string {
	var b strings.Builder
	n := c.Data
	// Υ first: it decides whether FedNewton converges, and a narrow title
	// is cut at its end.
	if p != nil {
		ups := p.Ridge.Contraction()
		if p.Undamped != nil {
			ups = p.Undamped.Ridge.Contraction()
		}
		fmt.Fprintf(&b, "Υ=%.3g", ups)
		if ups >= 1 {
			b.WriteString(" ≥ 1: FedNewton diverges")
		}
		if p.Undamped != nil {
			fmt.Fprintf(&b, " (its σ²=%.4g, λ=%s)", p.Undamped.Bandwidth, experiment.FormatFloat(p.Undamped.Lambda))
		}
		if hasDamped(c.Racers) {
			_, rate := p.Damped()
			fmt.Fprintf(&b, ", damped %.3g", rate)
		}
		b.WriteString(" · ")
	}
	if n.DataPath != "" {
		fmt.Fprintf(&b, "file %s, M=%d clients", shortPath(n.DataPath), n.Clients)
		if n.DirichletC > 0 {
			fmt.Fprintf(&b, ", Dir(%s)", experiment.FormatFloat(n.DirichletC))
		}
	} else {
		fmt.Fprintf(&b, "m=%d clients × %d, d=%d, α=%s, β=%s", n.Clients, n.Samples, n.Dim,
			experiment.FormatFloat(n.Alpha), experiment.FormatFloat(n.Beta))
	}
	fmt.Fprintf(&b, ", RFF %d", n.RFFDim)
	switch {
	case p != nil:
		fmt.Fprintf(&b, ", σ²=%.4g, λ=%s", p.Bandwidth, experiment.FormatFloat(p.Lambda))
		if n.Tune {
			b.WriteString(" (tuned)")
		}
	case n.Tune:
		b.WriteString(", σ² and λ tuned on a validation split")
	case n.Bandwidth > 0:
		fmt.Fprintf(&b, ", σ²=%s, λ=%s", experiment.FormatFloat(n.Bandwidth), experiment.FormatFloat(n.Lambda))
	default:
		fmt.Fprintf(&b, ", σ² from the median distance, λ=%s", experiment.FormatFloat(n.Lambda))
	}
	return b.String()
}

func shortPath(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// Facts implements experiment.Presentation: test MSE (or accuracy, for
// classes) and the distance to KRR are charted. Once the data are ready the
// summary and Params carry the bandwidth σ² and λ (and how each was chosen)
// and FedNewton's contraction factor Υ (docs/papers.md §4.2–4.3), and a
// Υ ≥ 1 is a warning that names its cause (model.Ridge.Diagnose).
func (present) Facts(_ experiment.Scenario, c Config, p *Prepared) experiment.Facts {
	f := experiment.Facts{Summary: summary(c, p), Charts: []string{"test_mse", "krr_dist"}}
	if p == nil {
		return f
	}
	if p.Ridge.Classes > 0 {
		f.Charts[0] = "test_acc"
	}
	ups := p.Ridge.Contraction()
	f.Params = []experiment.Param{
		{Name: "bandwidth", Value: p.Bandwidth, How: p.HowBandwidth},
		{Name: "lambda", Value: p.Lambda, How: p.HowLambda},
		{Name: "contraction", Value: roundSig(ups, 6), How: "computed"}, // accurate to 1e-6 (model.Ridge.Contraction)
	}
	newton := p.Ridge
	if p.Undamped != nil {
		newton = p.Undamped.Ridge
		f.Params = append(f.Params,
			experiment.Param{Name: "bandwidth_fednewton", Value: p.Undamped.Bandwidth, How: "tuned: the best validation score with Υ ≤ 0.85"},
			experiment.Param{Name: "lambda_fednewton", Value: p.Undamped.Lambda, How: "tuned: the best validation score with Υ ≤ 0.85"},
			experiment.Param{Name: "contraction_fednewton", Value: roundSig(newton.Contraction(), 6), How: "computed"})
	}
	if hasDamped(c.Racers) {
		eta, rate := p.Damped()
		_, muMax := p.Spectrum()
		f.Params = append(f.Params,
			experiment.Param{Name: "damped_step", Value: roundSig(eta, 6), How: "computed: 2/(1 + μ_max), μ_max the largest eigenvalue of Σ_j p_j H_j⁻¹ H"},
			experiment.Param{Name: "contraction_damped", Value: roundSig(rate, 6), How: "computed: (μ_max − 1)/(μ_max + 1)"})
		f.Notes = append(f.Notes, fmt.Sprintf("here FedNewton's step overshoots (μ_max = %.4g, Υ = μ_max − 1 = %.3g); the damped FedNewton takes η = 2/(1 + μ_max) = %.3g and contracts by %.3g per round",
			muMax, ups, eta, rate))
	}
	f.Notes = append(f.Notes, p.Notes...)
	if u := newton.Contraction(); u >= 1 && undamped(c.Racers) {
		f.Warnings = append(f.Warnings, "FedNewton will diverge: "+newton.Diagnose().Sentence())
	}
	return f
}

// hasDamped reports whether the damped FedNewton races.
func hasDamped(racers []experiment.RacerSpec) bool {
	for _, r := range racers {
		if _, damped := r.Opt("damped"); r.Kind == KindFedNewton && damped {
			return true
		}
	}
	return false
}

// roundSig rounds x to n significant digits.
func roundSig(x float64, n int) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', n, 64), 64)
	return v
}

// hasKind reports whether a racer of the kind is in the list.
func hasKind(racers []experiment.RacerSpec, kind string) bool {
	for _, r := range racers {
		if r.Kind == kind {
			return true
		}
	}
	return false
}
