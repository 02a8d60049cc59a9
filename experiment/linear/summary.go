package linear

import (
	"fmt"
	"math"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// SavingTol is the relative band around a racer's final error within which
// it counts as converged: 5 %.
const SavingTol = 0.05

// RoundsToReach returns the round from which an error curve stays within
// tol of its final value, |e_t − e_T| ≤ tol·e_T for every later t, reading
// rounds[k], errs[k] in order (the curve may start at round 0). It measures
// the third claim of paper 000's Fig 1: s local steps cut the rounds to
// converge about s-fold (docs/papers.md §1.9, E000-1). −1 when the curve is empty,
// the slices differ in length, or its final value is not a finite number
// > 0.
func RoundsToReach(rounds []int, errs []float64, tol float64) int {
	n := len(errs)
	if n == 0 || len(rounds) != n {
		return -1
	}
	final := errs[n-1]
	if !(final > 0) || math.IsInf(final, 0) {
		return -1
	}
	k := n - 1
	for k > 0 && math.Abs(errs[k-1]-final) <= tol*final {
		k--
	}
	return rounds[k]
}

// Summarize implements experiment.Presentation for runs: per racer, the
// rounds it took to come within 5 % of its final estimation error ‖θ_t − θ*‖
// (RoundsToReach) and how many times fewer that is than FedAvg s=1 with the
// same step size and batch (the communication saving of Fig 1). A racer
// that stopped before the last round is summarised as such.
func (present) Summarize(sc experiment.Scenario, c Config, t *experiment.Table) []experiment.RacerSummary {
	if c.Kind != runKind || t == nil || (c.Batch > 0 && c.BatchNorm == model.NormBatch) {
		// With 1/B minibatch steps the error keeps jumping about its
		// floor: rounds to come within 5 % of the final value would
		// measure where the noise happened to end, not convergence.
		return nil
	}
	m := experiment.MetricIndex(t.Metrics, "est_error")
	racers := resolve(c)
	if m < 0 || len(racers) != len(t.Rounds) {
		return nil
	}
	reach := make([]int, len(racers))
	finals := make([]float64, len(racers))
	base := -1
	for i, r := range racers {
		rs := t.Rounds[i]
		reach[i], finals[i] = -1, math.NaN()
		if len(rs) == 0 || rs[len(rs)-1].Index != sc.Rounds {
			continue
		}
		rounds, errs := make([]int, len(rs)), make([]float64, len(rs))
		for k := range rs {
			rounds[k], errs[k] = rs[k].Index, rs[k].Value(m)
		}
		reach[i], finals[i] = RoundsToReach(rounds, errs, SavingTol), errs[len(errs)-1]
		if base < 0 && r.kind == KindFedAvg && r.steps == 1 && r.batch == c.Batch && r.eta == c.Eta && reach[i] >= 0 {
			base = i
		}
	}
	out := make([]experiment.RacerSummary, len(racers))
	for i, r := range racers {
		out[i] = racerSummary(r.label, sc.Rounds, t.Rounds[i], reach, finals, i, base)
	}
	return out
}

// racerSummary is racer i's summary: its rounds to come within 5 % of its
// final error (reach[i]) and, against the base racer (FedAvg s=1, −1 for
// none), the saving, as a sentence, named values and legend forms.
func racerSummary(label string, rounds int, rs []experiment.Round, reach []int, finals []float64, i, base int) experiment.RacerSummary {
	s := experiment.RacerSummary{Label: label}
	switch {
	case len(rs) == 0 || rs[len(rs)-1].Index != rounds:
		s.Text = fmt.Sprintf("%s stopped before round %d: no rounds to converge", label, rounds)
		return s
	case reach[i] < 0:
		s.Text = fmt.Sprintf("%s: its final estimation error is not a number > 0", label)
		return s
	}
	saving := math.NaN()
	if base >= 0 && reach[i] > 0 {
		saving = float64(reach[base]) / float64(reach[i])
	}
	s.Values = []experiment.SummaryValue{{Name: "rounds_to_5pct", Value: float64(reach[i])},
		{Name: "final_est_error", Value: finals[i]}, {Name: "saving_vs_fedavg_s1", Value: saving}}
	s.Text = fmt.Sprintf("%s: within 5 %% of its final error %.3g from round %d", label, finals[i], reach[i])
	within := fmt.Sprintf("within 5 %% from round %d", reach[i])
	s.Brief = []string{within}
	switch {
	case base < 0:
		s.Text += " (no FedAvg s=1 racer with the same η and batch to compare with)"
	case i != base && saving >= 1:
		s.Text += fmt.Sprintf(", %.2f× fewer rounds than FedAvg s=1 (%d)", saving, reach[base])
		s.Brief = []string{within + fmt.Sprintf(" · %.2f× fewer rounds", saving), fmt.Sprintf("5 %%: round %d · %.2f× fewer", reach[i], saving)}
	case i != base && saving > 0:
		s.Text += fmt.Sprintf(", %.2f× more rounds than FedAvg s=1 (%d)", 1/saving, reach[base])
		s.Brief = []string{within + fmt.Sprintf(" · %.2f× more rounds", 1/saving), fmt.Sprintf("5 %%: round %d · %.2f× more", reach[i], 1/saving)}
	}
	s.Brief = append(s.Brief, fmt.Sprintf("5 %%: round %d", reach[i]))
	return s
}
