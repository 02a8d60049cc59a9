package linear

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fedscope/fedscope/experiment"
)

// Racer labels of the paper-000 presets.
const (
	s1, s5, s10, prox = "FedAvg s=1", "FedAvg s=5", "FedAvg s=10", "FedProx"
)

// Experiments of paper 000 (docs/papers.md §1.9).
const (
	expFig1   = "000-fig1"
	expB20    = "000-fig2-b20"
	expB50    = "000-fig2-b50"
	expB100   = "000-fig2-b100"
	expFig4   = "000-fig4"
	expFig5   = "000-fig5"
	expFig6   = "000-fig6"
	radiusWhy = "fedscope sweeps the perturbation radius of θ_i* = θ* + Γu_i (docs/papers.md §8); the realised max-pairwise Γ, " +
		"the paper's, is 1.60× larger, and no common rescaling of Γ moves both crossings onto the paper's (docs/papers.md §1.9, §7)"
)

// reproduction declares paper 000's claims for `fedscope reproduce`:
// Fig. 1 and the communication saving, Figs. 2–3 with minibatches, the
// federation-gain sweeps of Figs. 4–5 and the polynomial fit of Fig. 6.
func reproduction() *experiment.Reproduction {
	// --quick keeps B = 50 (the preset's) for the figures and leaves the
	// others out, so Figs. 2–3's claims wait for the full report.
	minibatch := func(name string, b int) experiment.Experiment {
		return experiment.Experiment{Name: name, Preset: "minibatch", Set: []string{fmt.Sprintf("batch=%d", b)},
			Quick: experiment.Quick{Skip: b != 50}}
	}
	return &experiment.Reproduction{
		Paper: "000",
		Title: "non-parametric view of FedAvg and FedProx (000_8dadcc9301cefdf4.txt)",
		Experiments: []experiment.Experiment{
			{Name: expFig1, Preset: "paradox"},
			minibatch(expB20, 20), minibatch(expB50, 50), minibatch(expB100, 100),
			{Name: expFig4, Preset: "fedgain-model", Quick: experiment.Quick{Trials: 2}},
			{Name: expFig5, Preset: "fedgain-covariate", Quick: experiment.Quick{Trials: 3}},
			{Name: expFig6, Preset: "polynomial", Quick: experiment.Quick{Trials: 100}},
		},
		Claims:  claims000(),
		Figures: figures000(),
	}
}

// claims000 is paper 000's claims in report order, figure by figure.
func claims000() []experiment.Claim {
	return slices.Concat(claimsFig1Gradient(), claimsFig1Error(), claimsFigs2and3(), claimsFig4(), claimsFig5(), claimsFig6())
}

// claimsFig1Gradient is Fig. 1(a): one local step reaches a stationary point,
// more local steps and FedProx stall at a level above it.
func claimsFig1Gradient() []experiment.Claim {
	return []experiment.Claim{
		{ID: "000-fig1-gd", Where: "Fig. 1(a)", Experiments: []string{expFig1},
			States:    "FedAvg with one local step is centralised gradient descent: its gradient norm falls towards 0",
			Criterion: "FedAvg s=1's gradient norm at round 150 over its value at round 0",
			Rule:      experiment.Rule{Kind: experiment.AtMost, Want: 1e-4},
			Measure: func(ms []*experiment.Measured) (float64, string, error) {
				g0, err := ms[0].At(s1, 0, "grad_norm")
				if err != nil {
					return 0, "", err
				}
				g, err := ms[0].Final(s1, "grad_norm")
				return g / g0, fmt.Sprintf("from %s to %s", experiment.Short(g0), experiment.Short(g)), err
			}},
		{ID: "000-fig1-stall", Where: "Fig. 1(a)", Experiments: []string{expFig1},
			States:    "FedAvg with s ≥ 2 local steps, and FedProx, do not reach a stationary point of the global loss",
			Criterion: "the smallest final gradient norm of FedAvg s=5, s=10 and FedProx over FedAvg s=1's",
			Rule:      experiment.Rule{Kind: experiment.AtLeast, Want: 100},
			Measure: func(ms []*experiment.Measured) (float64, string, error) {
				gd, err := ms[0].Final(s1, "grad_norm")
				if err != nil {
					return 0, "", err
				}
				return minRatio(ms[0], []string{s5, s10, prox}, "grad_norm", gd)
			}},
		{ID: "000-fig1-plateau", Where: "Fig. 1(a)", Experiments: []string{expFig1},
			States: "their gradient norms settle at a level above 0 (a fixed point that is not stationary), they do not creep down",
			Criterion: "the larger relative change of the gradient norm of FedAvg s=5 and s=10 over the last 50 rounds " +
				"(FedProx at η = 0.1 approaches its level about as slowly as s = 1 does 0, so it is still moving at round 150)",
			Rule: experiment.Rule{Kind: experiment.AtMost, Want: 0.01},
			Measure: func(ms []*experiment.Measured) (float64, string, error) {
				worst := 0.0
				for _, r := range []string{s5, s10} {
					g, err := ms[0].Final(r, "grad_norm")
					if err != nil {
						return 0, "", err
					}
					before, err := ms[0].At(r, float64(ms[0].Rounds-50), "grad_norm")
					if err != nil {
						return 0, "", err
					}
					worst = math.Max(worst, math.Abs(g-before)/g)
				}
				return worst, "", nil
			}},
	}
}

// claimsFig1Error is Fig. 1(b): every racer's estimation error still
// reaches least squares', and local steps save rounds.
func claimsFig1Error() []experiment.Claim {
	return []experiment.Claim{
		{ID: "000-fig1-error", Where: "Fig. 1(b)", Experiments: []string{expFig1},
			States:    "yet their estimation error ‖θ_t − θ*‖ falls to the near-optimal level of centralised least squares",
			Criterion: "the largest final estimation error of the four racers over the pooled least-squares error, minus 1",
			Rule:      experiment.Rule{Kind: experiment.AtMost, Want: 0.05},
			Measure: func(ms []*experiment.Measured) (float64, string, error) {
				ls, err := ms[0].Final(s1, "ls_error")
				if err != nil {
					return 0, "", err
				}
				worst := 0.0
				var parts []string
				for _, r := range []string{s1, s5, s10, prox} {
					e, err := ms[0].Final(r, "est_error")
					if err != nil {
						return 0, "", err
					}
					worst = math.Max(worst, e/ls-1)
					parts = append(parts, fmt.Sprintf("%s %s", r, experiment.Short(e)))
				}
				return worst, fmt.Sprintf("%s against least squares %s", strings.Join(parts, ", "), experiment.Short(ls)), nil
			}},
		saving("000-saving-s5", s5, 5), saving("000-saving-s10", s10, 10),
	}
}

// claimsFigs2and3 is Figs. 2–3: minibatches change none of Fig. 1's findings.
func claimsFigs2and3() []experiment.Claim {
	return []experiment.Claim{
		{ID: "000-fig2-plateau", Where: "Figs. 2–3", Experiments: []string{expFig1, expB20, expB50, expB100},
			States:    "with minibatches of B = 20, 50, 100 the gradient norms of s = 5 and 10 stall where the full-batch ones do",
			Criterion: "the final gradient norm of FedAvg s=5 and s=10 with minibatches over the full-batch one: the ratio farthest from 1 over B",
			Rule:      experiment.Rule{Kind: experiment.Between, Lo: 0.8, Hi: 1.25},
			Measure: func(ms []*experiment.Measured) (float64, string, error) {
				return worstRatio(ms, []string{s5, s10}, "grad_norm")
			}},
		{ID: "000-fig3-error", Where: "Figs. 2–3", Experiments: []string{expFig1, expB20, expB50, expB100},
			States:    "with minibatches every racer still reaches the full-batch estimation error",
			Criterion: "the final estimation error of each racer with minibatches over its full-batch one: the ratio farthest from 1 over B",
			Rule:      experiment.Rule{Kind: experiment.Between, Lo: 0.99, Hi: 1.01},
			Measure: func(ms []*experiment.Measured) (float64, string, error) {
				return worstRatio(ms, []string{s1, s5, s10, prox}, "est_error")
			}},
		{ID: "000-fig3-s1", Where: "Figs. 2–3", Experiments: []string{expFig1, expB20, expB50, expB100},
			States:    "with minibatches FedAvg s=1 converges in about as many rounds as with full batches",
			Criterion: "FedAvg s=1's rounds to come within 5 % of its final error with minibatches over the full-batch rounds: the ratio farthest from 1",
			Rule:      experiment.Rule{Kind: experiment.Between, Lo: 0.8, Hi: 1.25},
			Measure: func(ms []*experiment.Measured) (float64, string, error) {
				full, err := roundsTo5(ms[0], s1)
				if err != nil {
					return 0, "", err
				}
				worst, parts := 1.0, []string{fmt.Sprintf("full batch %s", experiment.Short(full))}
				for _, m := range ms[1:] {
					r, err := roundsTo5(m, s1)
					if err != nil {
						return 0, "", err
					}
					parts = append(parts, fmt.Sprintf("%s %s", m.Name, experiment.Short(r)))
					if math.Abs(math.Log(r/full)) > math.Abs(math.Log(worst)) {
						worst = r / full
					}
				}
				return worst, "rounds: " + strings.Join(parts, ", "), nil
			}},
	}
}

// claimsFig4 is Fig. 4: how far model heterogeneity Γ can grow before
// each client stops gaining from federation.
func claimsFig4() []experiment.Claim {
	return []experiment.Claim{
		crossing("000-fig4-scarce", "fg_scarce", "the data-scarce client (n_j = 50)", "≈ 7.5", 7.5),
		crossing("000-fig4-rich", "fg_rich", "the data-rich client (n_j = 500)", "≈ 0.3", 0.3),
		{ID: "000-fig4-ratio", Where: "Fig. 4", Experiments: []string{expFig4},
			States:    "the scarce client keeps gaining up to a far larger Γ than the rich client: 7.5 against 0.3 as read off the figure",
			Paper:     "≈ 25",
			Criterion: "the ratio of the two crossings of FG = 1 (FedAvg s=1, mean over trials, log-interpolated between grid values)",
			Rule:      experiment.Rule{Kind: experiment.Near, Want: 25, Tol: 0.15},
			Differs:   "both crossings move, by different factors (" + radiusWhy + ")",
			Measure: func(ms []*experiment.Measured) (float64, string, error) {
				a, err := fgCrossing(ms[0], "fg_scarce")
				if err != nil {
					return 0, "", err
				}
				b, err := fgCrossing(ms[0], "fg_rich")
				return a / b, fmt.Sprintf("%s / %s", experiment.Short(a), experiment.Short(b)), err
			}},
		{ID: "000-fig4-gain", Where: "Fig. 4", Experiments: []string{expFig4},
			States:    "at small model heterogeneity both clients gain from federation (FG > 1)",
			Criterion: "the smaller of the two clients' FG (FedAvg s=1, mean over trials) at the smallest Γ of the grid",
			Rule:      experiment.Rule{Kind: experiment.AtLeast, Want: 1},
			Measure: func(ms []*experiment.Measured) (float64, string, error) {
				xs, sc, err := ms[0].Series(s1, "gamma", "fg_scarce_mean")
				if err != nil {
					return 0, "", err
				}
				_, rich, err := ms[0].Series(s1, "gamma", "fg_rich_mean")
				if err != nil {
					return 0, "", err
				}
				return math.Min(sc[0], rich[0]), fmt.Sprintf("at Γ = %s: scarce %s, rich %s", experiment.Short(xs[0]),
					experiment.Short(sc[0]), experiment.Short(rich[0])), nil
			}},
	}
}

// claimsFig5 is Fig. 5: where covariate heterogeneity makes the scarce
// client's gain rise.
func claimsFig5() []experiment.Claim {
	return []experiment.Claim{
		{ID: "000-fig5-rise", Where: "Fig. 5", Experiments: []string{expFig5},
			States: "the data-scarce client's FG rises steeply once the clients' subspaces cover the coordinates, steepest at r ≈ 16–19 in the figure",
			Paper:  "r ≈ 16–19",
			Criterion: "the middle of the three-step window of r where log FG of the scarce client (FedAvg s=1, mean over trials) rises most, " +
				"r < 45 (near r = n_j = 50 the local design is square and single trials spike, docs/papers.md §8)",
			Rule: experiment.Rule{Kind: experiment.Between, Lo: 16, Hi: 19},
			Measure: func(ms []*experiment.Measured) (float64, string, error) {
				rs, fg, err := ms[0].Series(s1, "subspace_dim", "fg_scarce_mean")
				if err != nil {
					return 0, "", err
				}
				best, at := math.Inf(-1), math.NaN()
				for i := 0; i+3 < len(fg) && rs[i+3] < 45; i++ {
					if d := math.Log(fg[i+3] / fg[i]); d > best {
						best, at = d, (rs[i]+rs[i+3])/2
					}
				}
				return at, fmt.Sprintf("FG × %s over r = %s … %s", experiment.Short(math.Exp(best)), experiment.Short(at-1.5), experiment.Short(at+1.5)), nil
			}},
	}
}

// claimsFig6 is Fig. 6: the federated polynomial fit's minimax rate.
func claimsFig6() []experiment.Claim {
	return []experiment.Claim{
		{ID: "000-fig6-rate", Where: "Fig. 6(a)", Experiments: []string{expFig6},
			States:    "the integrated MSE of the federated polynomial fit falls at the minimax rate O(1/N)",
			Paper:     "slope −1",
			Criterion: "the least-squares slope of log MSE against log N, the racer farthest from −1",
			Rule:      experiment.Rule{Kind: experiment.Near, Want: -1, Tol: 0.1},
			Measure: func(ms []*experiment.Measured) (float64, string, error) {
				worst, text := math.NaN(), ""
				for _, r := range []string{s1, s5, s10, prox} {
					n, mse, err := ms[0].Series(r, "samples", "mse_mean")
					if err != nil {
						return 0, "", err
					}
					_, total, err := ms[0].Series(r, "samples", "total_samples_mean")
					if err != nil {
						return 0, "", err
					}
					var lx, ly []float64
					for i := range n {
						lx, ly = append(lx, math.Log(total[i])), append(ly, math.Log(mse[i]))
					}
					if b := experiment.Slope(lx, ly); math.IsNaN(worst) || math.Abs(b+1) > math.Abs(worst+1) {
						worst, text = b, r
					}
				}
				return worst, text, nil
			}},
		{ID: "000-fig6-linear", Where: "Fig. 6(b)", Experiments: []string{expFig6},
			States:    "1/MSE grows linearly in N",
			Criterion: "R² of the straight line through 1/MSE against N, the smallest over the racers",
			Rule:      experiment.Rule{Kind: experiment.AtLeast, Want: 0.99},
			Measure: func(ms []*experiment.Measured) (float64, string, error) {
				worst := math.Inf(1)
				for _, r := range []string{s1, s5, s10, prox} {
					_, inv, err := ms[0].Series(r, "samples", "inv_mse_mean")
					if err != nil {
						return 0, "", err
					}
					_, total, err := ms[0].Series(r, "samples", "total_samples_mean")
					if err != nil {
						return 0, "", err
					}
					worst = math.Min(worst, experiment.RSquared(total, inv))
				}
				return worst, "", nil
			}},
	}
}

// saving is the communication saving of FedAvg with s local steps: the
// rounds FedAvg s=1 needs to come within 5 % of its final error over the
// rounds the racer needs ("about s times fewer", docs/papers.md §1.9).
func saving(id, racer string, s int) experiment.Claim {
	return experiment.Claim{ID: id, Where: "Fig. 1(b)", Experiments: []string{expFig1},
		States:    fmt.Sprintf("local steps save communication: FedAvg with s = %d reaches the estimation error of s = 1 in about %d times fewer rounds", s, s),
		Paper:     fmt.Sprintf("≈ %d×", s),
		Criterion: "FedAvg s=1's rounds to come within 5 % of its final estimation error over the racer's",
		Rule:      experiment.Rule{Kind: experiment.Near, Want: float64(s), Tol: 0.2},
		Measure: func(ms []*experiment.Measured) (float64, string, error) {
			a, err := roundsTo5(ms[0], s1)
			if err != nil {
				return 0, "", err
			}
			b, err := roundsTo5(ms[0], racer)
			return a / b, fmt.Sprintf("%s rounds against %s", experiment.Short(b), experiment.Short(a)), err
		}}
}

// crossing is where a client's FG falls through 1 on the Γ sweep.
func crossing(id, metric, who, paper string, want float64) experiment.Claim {
	return experiment.Claim{ID: id, Where: "Fig. 4", Experiments: []string{expFig4},
		States:    "federation stops helping " + who + " (FG falls through 1) where the figure puts it",
		Paper:     paper,
		Criterion: "where FG (FedAvg s=1, mean over trials) falls through 1 on the swept radius, log-interpolated between grid values",
		Rule:      experiment.Rule{Kind: experiment.Near, Want: want, Tol: 0.15},
		Differs:   radiusWhy,
		Measure: func(ms []*experiment.Measured) (float64, string, error) {
			v, err := fgCrossing(ms[0], metric)
			return v, "", err
		}}
}

// fgCrossing is where FedAvg s=1's mean FG of the metric falls through 1.
func fgCrossing(m *experiment.Measured, metric string) (float64, error) {
	xs, fg, err := m.Series(s1, "gamma", metric+"_mean")
	if err != nil {
		return 0, err
	}
	v := experiment.Crossing(xs, fg, 1)
	if math.IsNaN(v) {
		return v, fmt.Errorf("%s never falls through 1 on the grid", metric)
	}
	return v, nil
}

// roundsTo5 is a racer's rounds to come within 5 % of its final
// estimation error (RoundsToReach).
func roundsTo5(m *experiment.Measured, racer string) (float64, error) {
	rounds, errs, err := m.Series(racer, "round", "est_error")
	if err != nil {
		return 0, err
	}
	return experiment.RoundsToWithin(rounds, errs, 0.05), nil
}

// minRatio is the smallest final value of the racers' column over ref.
func minRatio(m *experiment.Measured, racers []string, col string, ref float64) (float64, string, error) {
	best := math.Inf(1)
	var parts []string
	for _, r := range racers {
		v, err := m.Final(r, col)
		if err != nil {
			return 0, "", err
		}
		best = math.Min(best, v/ref)
		parts = append(parts, fmt.Sprintf("%s %s", r, experiment.Short(v)))
	}
	return best, fmt.Sprintf("%s against FedAvg s=1's %s", strings.Join(parts, ", "), experiment.Short(ref)), nil
}

// worstRatio compares the final values of a column in the minibatch runs
// (ms[1:]) with the full-batch run ms[0], returning the ratio farthest
// from 1.
func worstRatio(ms []*experiment.Measured, racers []string, col string) (float64, string, error) {
	worst, text := 1.0, ""
	for _, m := range ms[1:] {
		for _, r := range racers {
			full, err := ms[0].Final(r, col)
			if err != nil {
				return 0, "", err
			}
			v, err := m.Final(r, col)
			if err != nil {
				return 0, "", err
			}
			if ratio := v / full; math.Abs(math.Log(ratio)) > math.Abs(math.Log(worst)) || text == "" {
				worst, text = ratio, fmt.Sprintf("%s in %s: %s against %s", r, m.Name, experiment.Short(v), experiment.Short(full))
			}
		}
	}
	return worst, text, nil
}

// figures000 are Figs. 1–6 in the paper's layout.
func figures000() []experiment.Figure {
	batches := func(metric string) []experiment.Panel {
		return []experiment.Panel{
			{Experiment: expFig1, Metric: metric, Title: "(a) full batch"},
			{Experiment: expB20, Metric: metric, Title: "(b) B = 20"},
			{Experiment: expB50, Metric: metric, Title: "(c) B = 50"},
			{Experiment: expB100, Metric: metric, Title: "(d) B = 100"},
		}
	}
	return []experiment.Figure{
		{Name: "000-fig1", Title: "Paper 000, Fig. 1: FedAvg s = 1, 5, 10 and FedProx (M = 25, d = 100, n_i = 500, η = 0.1)",
			Panels: []experiment.Panel{{Experiment: expFig1, Metric: "grad_norm", Title: "(a) gradient norm"},
				{Experiment: expFig1, Metric: "est_error", Title: "(b) estimation error"}}},
		{Name: "000-fig2", Title: "Paper 000, Fig. 2: gradient norm with minibatch local steps", Panels: batches("grad_norm"), Columns: 2},
		{Name: "000-fig3", Title: "Paper 000, Fig. 3: estimation error with minibatch local steps", Panels: batches("est_error"), Columns: 2},
		{Name: "000-fig4", Title: "Paper 000, Fig. 4: federation gain against model heterogeneity (perturbation radius Γ)",
			Panels: []experiment.Panel{{Experiment: expFig4, Metric: "fg_scarce", Title: "(a) data-scarce client, n_j = 50"},
				{Experiment: expFig4, Metric: "fg_rich", Title: "(b) data-rich client, n_j = 500"}}},
		{Name: "000-fig5", Title: "Paper 000, Fig. 5: federation gain against the covariate subspace dimension r",
			Panels: []experiment.Panel{{Experiment: expFig5, Metric: "fg_scarce", Title: "(a) data-scarce client, n_j = 50"},
				{Experiment: expFig5, Metric: "fg_rich", Title: "(b) data-rich client, n_j = 500"}}},
		{Name: "000-fig6", Title: "Paper 000, Fig. 6: fitting U5 with monomials on disjoint client intervals",
			Panels: []experiment.Panel{{Experiment: expFig6, Metric: "mse", Title: "(a) MSE against N", X: "total_samples_mean"},
				{Experiment: expFig6, Metric: "inv_mse", Title: "(b) 1/MSE against N", X: "total_samples_mean", Linear: true}}},
	}
}
