package bound

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/fedscope/fedscope/experiment"
)

// Story implements experiment.Presentation.
func (present) Story(experiment.Scenario, Config) string {
	return "FedAvg on the notes' toy classifier, with single-sample or full-gradient (\"full\") local steps. Top: F(x̄) − F* averaged, " +
		"far under Thm 2.1's bound (dashed), which at a constant η has a floor: not O(1/(τT)), about T^(−1/2) at the best η. " +
		"Bottom: the client drift under its lemma. h/H move the class skew Dir(c): the full-gradient drift follows it; " +
		"the single-sample drift is mostly sampling noise (paper 002, Thm 2.1)."
}

// Caption implements experiment.Presentation.
func (present) Caption(experiment.Scenario, Config) string {
	return "Solid: F(x̄) − F* and the client drift; dashed: Thm 2.1's bound and the drift lemma, far above. At a constant η the bound has a floor."
}

// Annotations implements experiment.Presentation.
func (present) Annotations(experiment.Scenario, Config) []experiment.Annotation {
	return []experiment.Annotation{
		{Metric: "subopt_avg", Kind: experiment.Diverges, Text: "%s diverged"},
	}
}

// Summarize implements experiment.Presentation: per racer, the size of
// each of the bound's four terms at its last round, which one dominates,
// and how many times the bound and the drift lemma lie above what was
// measured. The terms need the run's constants, so the (deterministic) run
// is prepared again when it is small enough (helpRuns); otherwise only the
// ratios, read off the table, are given.
func (present) Summarize(sc experiment.Scenario, c Config, t *experiment.Table) []experiment.RacerSummary {
	sets := settings(c, nil)
	if t == nil || len(sets) != len(t.Rounds) {
		return nil
	}
	var d *Data
	if helpRuns(sc, c) {
		d, _ = compute{}.Prepare(context.Background(), sc, c, nil)
	}
	out := make([]experiment.RacerSummary, len(sets))
	for i, s := range sets {
		if d != nil {
			s = d.Traces[i].Setting // η resolved
		}
		out[i] = summary(d, s, t.Rounds[i])
	}
	return out
}

// summary is one racer's end-of-run summary: from its rows, the bound and
// the measured running average at its last round and the largest drift;
// with the run's data d (nil: unknown), the four terms.
func summary(d *Data, s Setting, rows []experiment.Round) experiment.RacerSummary {
	out := experiment.RacerSummary{Label: s.Label}
	if len(rows) < 2 {
		out.Text = s.Label + ": no round to summarise"
		return out
	}
	last := rows[len(rows)-1]
	bound, avg := last.Value(boundIdx), last.Value(avgIdx)
	var drift float64
	for _, r := range rows {
		if v := r.Value(driftIdx); v > drift {
			drift = v
		}
	}
	ratio, dratio := bound/avg, last.Value(driftBoundIdx)/drift
	out.Values = []experiment.SummaryValue{{Name: "bound", Value: bound}, {Name: "measured", Value: avg},
		{Name: "bound_over_measured", Value: ratio}, {Name: "drift_bound_over_drift", Value: dratio}}
	var b strings.Builder
	fmt.Fprintf(&b, "%s, T=%d: bound %.3g, %.0f× the measured running average %.3g; drift bound %.0f× the largest drift %.3g",
		s.Label, last.Index, bound, ratio, avg, dratio, drift)
	out.Brief = []string{fmt.Sprintf("bound %.0f× measured", ratio), fmt.Sprintf("%.0f×", ratio)}
	if d != nil {
		terms := Terms(d, s.Eta, s.Tau, last.Index, len(d.Clients), s.Full)
		top := 0
		b.WriteString(" · terms ")
		for k, v := range terms {
			if v > terms[top] {
				top = k
			}
			if k > 0 {
				b.WriteString(" + ")
			}
			fmt.Fprintf(&b, "%s %.2g", termNames[k], v)
			out.Values = append(out.Values, experiment.SummaryValue{Name: termKeys[k], Value: v})
		}
		fmt.Fprintf(&b, ": %s dominates", termNames[top])
		out.Brief = append([]string{fmt.Sprintf("bound %.0f× measured · %s dominates", ratio, termNames[top])}, out.Brief...)
	}
	out.Text = b.String()
	return out
}

// termKeys name the four terms in the summary records.
var termKeys = [4]string{"term_distance", "term_variance", "term_local_variance", "term_heterogeneity"}

// Positions of the metrics in a round's values.
var (
	avgIdx        = experiment.MetricIndex(metrics, "subopt_avg")
	boundIdx      = experiment.MetricIndex(metrics, "bound")
	driftIdx      = experiment.MetricIndex(metrics, "drift")
	driftBoundIdx = experiment.MetricIndex(metrics, "drift_bound")
)

// Menu implements experiment.Presentation: the racers of the preset.
func (present) Menu(experiment.Scenario, Config) []experiment.RacerSpec { return nil }

// Looks implements experiment.Presentation.
func (present) Looks() map[string]int {
	return map[string]int{KindFedAvg: 2, "fedavg:batch=full": 3}
}

// Help implements experiment.Presentation: what is drawn, and the
// constants of the bound beside the largest values measured at the run's
// iterates (computed on the scenario when it is small enough to run here).
func (present) Help(sc experiment.Scenario, c Config) string {
	h := "Top: the running average over every local step so far of F(x̄) − F*, the left side of Thm 2.1, " +
		"under the theorem's right side D²/(2ητT) + ησ²/M + 4τη²Lσ² + 18τ²η²Lζ² (dashed, same colour; σ² = 0 for the full-gradient racer). " +
		"With a constant η only the first term falls with T: the bound has a floor, and the notes' closing \"= O(1/(τT))\" does not follow; " +
		"choosing the constant η to minimise the bound gives about Dσ√(2/(MτT)), i.e. T^(−1/2). Bottom: the client drift ‖x_i − x̄‖² " +
		"under 18τ²η²ζ² + 4τη²σ². σ² (the variance of a single-sample gradient) and ζ are suprema over the ball ‖x − x*‖ ≤ R that holds every " +
		"local iterate of this run: R is measured along the run, so the dashed curves are an a-posteriori check, not a proof."
	if !helpRuns(sc, c) {
		return h + " The constants and the largest values measured at the visited iterates are in the run's notes."
	}
	d, err := compute{}.Prepare(context.Background(), sc, c, nil)
	if err != nil {
		return h
	}
	return h + " On this scenario: " + constantsSentence(d) + "."
}

// helpRuns reports whether the scenario is small enough for the help to
// run it (a few milliseconds at the preset's sizes).
func helpRuns(sc experiment.Scenario, c Config) bool {
	work := float64(c.Clients) * (float64(c.Samples) + float64(c.Tau)*float64(sc.Rounds)*float64(max(len(c.Racers), 1)))
	return work <= 5e6
}

// constantsSentence gives each constant beside the largest value measured
// at the visited iterates.
func constantsSentence(d *Data) string {
	return fmt.Sprintf("L = %.3g, D = %.3g, every local iterate within R = %.3g of x* (%.2g D); σ² = %.3g over that ball (largest at the visited iterates %.3g), "+
		"ζ = %.3g (largest at the visited iterates %.3g)", d.L, d.D, d.Radius, d.Radius/d.D, d.Sigma2, d.Seen.Sigma2, d.Zeta, d.Seen.Zeta)
}

// Facts implements experiment.Presentation: the constants of the bound
// beside what the run measured, the size of each of the bound's terms,
// and a warning when η exceeds the step Thm 2.1 assumes or a measured value
// exceeds its constant.
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
	f.Summary += fmt.Sprintf(" · L=%.3g, D=%.3g, R=%.3g, σ²=%.3g, ζ=%.3g", d.L, d.D, d.Radius, d.Sigma2, d.Zeta)
	f.Params = []experiment.Param{
		{Name: "L", Value: d.L, How: "computed: max_i 2λ_max(X_iᵀX_i/n_i)"},
		{Name: "D", Value: d.D, How: "computed: ‖x⁽⁰⁾ − x*‖"},
		{Name: "radius", Value: d.Radius, How: "measured: the largest ‖x_i^(t,k) − x*‖ over every local iterate of this run"},
		{Name: "sigma2", Value: d.Sigma2, How: "computed: sup of the single-sample gradient variance over ‖x − x*‖ ≤ radius"},
		{Name: "sigma2_seen", Value: d.Seen.Sigma2, How: "measured: the largest variance at the visited iterates"},
		{Name: "zeta", Value: d.Zeta, How: "computed: sup of ‖∇F_i − ∇F‖ over ‖x − x*‖ ≤ radius"},
		{Name: "zeta_seen", Value: d.Seen.Zeta, How: "measured: the largest ‖∇F_i − ∇F‖ at the visited iterates"},
	}
	f.Notes = append(f.Notes, fmt.Sprintf("σ² = %.3g and ζ = %.3g are suprema over ‖x − x*‖ ≤ R = %.3g (%.2g D), which holds every local iterate of this run "+
		"(at the iterates: %.3g and %.3g); R is measured along the run: an a-posteriori check, not a proof", d.Sigma2, d.Zeta, d.Radius, d.Radius/d.D,
		d.Seen.Sigma2, d.Seen.Zeta))
	f.Warnings = append(f.Warnings, d.Exceeded()...)
	for _, tr := range d.Traces {
		if tr.Eta > d.stepLimit() {
			f.Warnings = append(f.Warnings, fmt.Sprintf("%s: η=%.3g exceeds 1/(4L)=%.3g, so Thm 2.1 does not apply and its bound is drawn outside its regime",
				tr.Label, tr.Eta, d.stepLimit()))
		}
		if tr.Err != nil {
			f.Notes = append(f.Notes, fmt.Sprintf("%s diverged: its iterates are left out of the region of the constants", tr.Label))
		}
	}
	f.Notes = append(f.Notes, floorNote(d, c, sc.Rounds))
	return f
}

// floorNote says what a constant step gives: the bound's floor, and the
// smallest bound over constant steps η ≤ 1/(4L) at this T, which falls like
// T^(−1/2) (docs/papers.md §8, 002, corrected).
func floorNote(d *Data, c Config, rounds int) string {
	m, tau := len(d.Clients), c.Tau
	best := math.Inf(1)
	var bestEta float64
	for k := 0; k <= 400; k++ { // η on a log grid up to 1/(4L)
		eta := d.stepLimit() * math.Pow(10, -4+4*float64(k)/400)
		if v := Bound(d, eta, tau, max(rounds, 1), m, false); v < best {
			best, bestEta = v, eta
		}
	}
	return fmt.Sprintf("a constant η leaves the bound a floor, so not O(1/(τT)); the best constant η (%.3g) gives %.3g at T=%d, falling ∝ T^(−1/2)",
		bestEta, best, max(rounds, 1))
}
