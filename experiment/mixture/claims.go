package mixture

import (
	"fmt"
	"math"

	"github.com/fedscope/fedscope/experiment"
)

// expMixture is paper 004's experiment (docs/papers.md §5).
const expMixture = "004-mixture"

// fedmdRacer is the racer the claims measure: FedMD, then FedAvg with s = 5.
const fedmdRacer = "FedMD + FedAvg s=5"

// reproduction declares paper 004's claims for `fedscope reproduce`: the
// guarantees of its two phases (Thms 1–3) on the preset of docs/papers.md
// §8. The paper has no experiments; the claims are its theorems, with the
// constants it leaves open measured on the drawn instance.
func reproduction() *experiment.Reproduction {
	return &experiment.Reproduction{
		Paper: "004",
		Title: "global convergence of federated learning for mixed regression (004_af561a7097fa151a.txt)",
		Experiments: []experiment.Experiment{
			{Name: expMixture, Preset: "mixture"},
		},
		Claims: append(claimsThm1(), claimsThm2()...),
		Figures: []experiment.Figure{
			{Name: "004-mixture", Title: "Paper 004: FedMD (Phase 1) then FedAvg s = 5 with clustering (Phase 2), against Phase 2 from a random start",
				Panels: []experiment.Panel{{Experiment: expMixture, Metric: "cluster_dist", Title: "(a) d(θ_t, θ*)"},
					{Experiment: expMixture, Metric: "misclustered", Title: "(b) misclustered clients"}}},
		},
	}
}

// phase1End is d(θ̂, θ*) at the last round of Phase 1, where Thm 1's
// guarantee holds and Phase 2 starts from.
func phase1End(m *experiment.Measured) (float64, error) {
	rounds, phase, err := m.Series(fedmdRacer, "round", "phase")
	if err != nil {
		return 0, err
	}
	_, dist, err := m.Series(fedmdRacer, "round", "cluster_dist")
	if err != nil {
		return 0, err
	}
	for i := range rounds {
		if phase[i] == 2 && i > 0 {
			return dist[i-1], nil
		}
	}
	return math.NaN(), fmt.Errorf("no Phase-2 round")
}

// claimsThm1 is Phase 1's guarantee (Thm 1): the centres and every anchor
// within εΔ of the truth.
func claimsThm1() []experiment.Claim {
	return []experiment.Claim{
		{ID: "004-thm1-centres", Where: "Thm 1", Experiments: []string{expMixture},
			States:    "after Phase 1 (federated moment descent) the cluster centres are within εΔ of the truth: d(θ̂, θ*) ≤ εΔ",
			Criterion: "d(θ̂, θ*) at the last Phase-1 round over εΔ (ε = 0.1, Δ the drawn separation)",
			Rule:      experiment.Rule{Kind: experiment.AtMost, Want: 1},
			Measure: func(ms []*experiment.Measured) (float64, string, error) {
				d, err := phase1End(ms[0])
				if err != nil {
					return 0, "", err
				}
				target, err := ms[0].Level("cluster_dist", "target εΔ")
				return d / target, fmt.Sprintf("d = %s, εΔ = %s", experiment.Short(d), experiment.Short(target)), err
			}},
		{ID: "004-thm1-anchors", Where: "Thm 1, eq. (4)", Experiments: []string{expMixture},
			States:    "every anchor client ends Phase 1 within εΔ of its cluster's truth, up to the constant 2/α (α = 1 here)",
			Paper:     "≤ 2 εΔ",
			Criterion: "the worst anchor's distance to its cluster's truth after Phase 1, in units of εΔ",
			Rule:      experiment.Rule{Kind: experiment.AtMost, Want: 2},
			Measure: func(ms []*experiment.Measured) (float64, string, error) {
				v, err := ms[0].Param("worst_anchor_eps")
				a, _ := ms[0].Param("anchors")
				return v, fmt.Sprintf("over %s anchors (above 1: outside εΔ without the constant)", experiment.Short(a)), err
			}},
	}
}

// claimsThm2 is Phase 2's (Thms 2–3): linear contraction to a floor, and
// only the clients the true models misjudge left misclustered.
func claimsThm2() []experiment.Claim {
	return []experiment.Claim{
		{ID: "004-thm2-floor", Where: "Thms 2–3", Experiments: []string{expMixture},
			States: "from a start within εΔ, Phase 2 (FedAvg with s = 5 plus clustering) contracts linearly to a floor of order " +
				"(σκ/ρ)·ν·log(e/ν)",
			Criterion: "d(θ_T, θ*) at the last round over the fixed point of Phase 2 with the labels held at the truth (the floor on the drawn instance)",
			Rule:      experiment.Rule{Kind: experiment.AtMost, Want: 1.1},
			Measure: func(ms []*experiment.Measured) (float64, string, error) {
				d, err := ms[0].Final(fedmdRacer, "cluster_dist")
				if err != nil {
					return 0, "", err
				}
				floor, err := ms[0].Param("phase2_floor")
				rate, _ := ms[0].Param("phase2_rate")
				return d / floor, fmt.Sprintf("d = %s, floor %s, contraction %s per round", experiment.Short(d), experiment.Short(floor), experiment.Short(rate)), err
			}},
		{ID: "004-thm2-misclustered", Where: "Thm 2", Experiments: []string{expMixture},
			States:    "the clients still misclustered at the end are those whose data pick a wrong cluster even at the true models (p_e(n_i))",
			Criterion: "the misclustered fraction at the last round minus the fraction misclustered at the true models",
			Rule:      experiment.Rule{Kind: experiment.AtMost, Want: 0.005},
			Measure: func(ms []*experiment.Measured) (float64, string, error) {
				f, err := ms[0].Final(fedmdRacer, "misclustered")
				if err != nil {
					return 0, "", err
				}
				at, err := ms[0].Param("misclustered_at_truth")
				return f - at, fmt.Sprintf("%s against %s at the true models", experiment.Short(f), experiment.Short(at)), err
			}},
	}
}
