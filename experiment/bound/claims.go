package bound

import (
	"fmt"
	"math"

	"github.com/fedscope/fedscope/experiment"
)

// expBound is paper 002's experiment (docs/papers.md §3).
const expBound = "002-bound"

// reproduction declares paper 002's claims for `fedscope reproduce`: Thm
// 2.1's bound and the drift lemma on the toy classifier of docs/papers.md
// §8, with the constants measured along the run, and the notes' closing
// rate, which does not follow from the bound (§7).
func reproduction() *experiment.Reproduction {
	const sgd, full = "FedAvg τ=5", "FedAvg τ=5 full"
	return &experiment.Reproduction{
		Paper: "002",
		Title: "notes on federated optimization, FedAvg's convergence (002_180ceb86164b5329.txt)",
		Experiments: []experiment.Experiment{
			{Name: expBound, Preset: "fedavg-bound"},
		},
		Claims: []experiment.Claim{
			{ID: "002-thm21", Where: "Thm 2.1", Experiments: []string{expBound},
				States: "with η ≤ 1/(4L), the running average of F(x̄) − F(x*) over the shadow sequence stays below " +
					"D²/(2ητT) + ησ²/M + 4τη²Lσ² + 18τ²η²Lζ²",
				Criterion: "the smallest ratio, over rounds and both racers (single-sample and full local gradients), of the bound to the measured " +
					"running average; σ² and ζ are suprema over a ball that holds every local iterate of the run, its radius measured " +
					"along the run (an a-posteriori check, not a proof)",
				Rule: experiment.Rule{Kind: experiment.AtLeast, Want: 1},
				Measure: func(ms []*experiment.Measured) (float64, string, error) {
					return minOver(ms[0], []string{sgd, full}, "bound", "subopt_avg")
				}},
			{ID: "002-drift", Where: "drift lemma", Experiments: []string{expBound},
				States:    "the client drift E‖x_i − x̄‖² stays below 18τ²η²ζ² + 4τη²σ²",
				Criterion: "the smallest ratio, over rounds and both racers, of the lemma's bound to the measured largest drift",
				Rule:      experiment.Rule{Kind: experiment.AtLeast, Want: 1},
				Measure: func(ms []*experiment.Measured) (float64, string, error) {
					return minOver(ms[0], []string{sgd, full}, "drift_bound", "drift")
				}},
			{ID: "002-rate", Where: "Thm 2.1, last line", Experiments: []string{expBound},
				States: "the bound is O(1/(τT)): doubling the rounds halves it", Paper: "ratio 0.5",
				Criterion: "the bound at the last round T over the bound at T/2 (single-sample racer)",
				Rule:      experiment.Rule{Kind: experiment.Near, Want: 0.5, Tol: 0.2},
				Differs: "with a constant η the terms ησ²/M + 4τη²Lσ² + 18τ²η²Lζ² do not shrink with T: the bound has a floor; " +
					"the best constant η gives about T^(−1/2), not 1/(τT) (docs/papers.md §7)",
				Measure: func(ms []*experiment.Measured) (float64, string, error) {
					m := ms[0]
					b, err := m.Final(sgd, "bound")
					if err != nil {
						return 0, "", err
					}
					half, err := m.At(sgd, float64(m.Rounds/2), "bound")
					return b / half, fmt.Sprintf("%s at T = %d, %s at T = %d", experiment.Short(b), m.Rounds, experiment.Short(half), m.Rounds/2), err
				}},
		},
		Figures: []experiment.Figure{
			{Name: "002-bound", Title: "Paper 002, Thm 2.1: FedAvg with τ = 5 local steps under its bound, and the client drift",
				Panels: []experiment.Panel{{Experiment: expBound, Metric: "subopt_avg", Title: "(a) running average of F(x̄) − F*, bound dashed"},
					{Experiment: expBound, Metric: "drift", Title: "(b) client drift, the lemma's bound dashed"}}},
		},
	}
}

// minOver is the smallest ratio of column num to column den over the
// racers' rounds where both are positive.
func minOver(m *experiment.Measured, racers []string, num, den string) (float64, string, error) {
	best, text := math.Inf(1), ""
	for _, r := range racers {
		rounds, n, err := m.Series(r, "round", num)
		if err != nil {
			return 0, "", err
		}
		_, d, err := m.Series(r, "round", den)
		if err != nil {
			return 0, "", err
		}
		for i := range n {
			if d[i] > 0 && n[i] > 0 && n[i]/d[i] < best {
				best = n[i] / d[i]
				text = fmt.Sprintf("%s, round %s: %s against %s", r, experiment.Short(rounds[i]), experiment.Short(n[i]), experiment.Short(d[i]))
			}
		}
	}
	if math.IsInf(best, 1) {
		return math.NaN(), "", fmt.Errorf("no round with both %s and %s", num, den)
	}
	return best, text, nil
}
