package newton

import "github.com/fedscope/fedscope/experiment"

// Presets implements experiment.Computation.
func (compute) Presets() []experiment.Preset {
	return []experiment.Preset{
		{Name: "newton-rounds", Summary: "KRR, DKRR, FedNewton, FedAvg, FedProx: test MSE per round on heterogeneous synthetic data, σ² = 10 (Table 2's 0.1 read as 1/σ²), λ = 1e-4 so that Υ < 1 (paper 003, Fig. 5)", Build: newtonRounds},
		{Name: "newton-local-size", Summary: "sweep: test MSE of KRR, DKRR, FedNewton t=1,2,4,8, FedAvg, FedProx against the number of clients at |D| = 10000 (paper 003, Fig. 3)", Build: newtonLocalSize},
		{Name: "newton-heterogeneity", Summary: "sweep: the same racers against data heterogeneity α, or model heterogeneity β with sweep=beta (paper 003, Fig. 4)", Build: newtonHeterogeneity},
	}
}

// newtonRounds is E003-5 (docs/papers.md §4.7, §8): synthetic data with α = 0.01
// and β = 0.001, m = 20 clients with |D_j| = 500, d = 10, noise variance
// 0.2, 2500 test points, M = 200 random features, FedAvg learning rate
// 0.001 with s = 2 (Table 2), 20 rounds; bandwidth σ² = 10, Table 2's 0.1
// read as 1/σ² (see newtonBandwidth).
//
// λ = 1e-4 and λ_prox = 7e-5 instead of Table 2's 1e-6 and 7e-7 (the same
// ratio λ_prox/λ = 0.7). Measured over seeds 1–5 (20 rounds): at λ = 1e-6
// FedNewton's contraction factor is Υ = 2.6 and it diverges, at 1e-5
// Υ = 1.6 and it still does; 1e-4 is the largest decade below which it
// diverges (Υ = 0.67), and there both shapes of Fig. 5 hold on every seed:
// the ordering FedNewton ≤ FedProx ≤ FedAvg ≤ DKRR of the final test MSE
// (0.980 ≤ 1.036 ≤ 1.047 ≤ 1.047: FedAvg with η = 0.001 barely leaves
// DKRR), and FedProx gaining after round 1 only 25 % (at most 30 %) of its
// first-round gain. With λ_prox = λ that share rises to 35 %, with
// λ_prox = 10λ FedProx keeps improving for all 20 rounds. Set lambda=1e-6
// lambda_prox=7e-7 to see Table 2's λ: FedNewton diverges, and the warning
// and its divergence message say why.
func newtonRounds() experiment.Scenario {
	return experiment.Scenario{Family: Family, Rounds: 20, Seed: 1, Config: newtonRoundsConfig()}
}

// newtonRoundsConfig is the configuration of newtonRounds.
func newtonRoundsConfig() Config {
	return Config{
		Data: Data{Clients: 20, Samples: 500, Dim: 10, Alpha: 0.01, Beta: 0.001, NoiseVar: 0.2, TestSize: 2500,
			RFFDim: 200, Bandwidth: newtonBandwidth, Lambda: 1e-4, Holdout: 0.2, MinSize: 10, Scale: true, Task: "auto"},
		Eta:        0.001,
		LocalSteps: 2,
		LambdaProx: 7e-5,
		Racers: []experiment.RacerSpec{{Kind: KindKRR}, {Kind: KindDKRR}, {Kind: KindFedNewton},
			{Kind: KindFedAvg}, {Kind: KindFedProx}},
	}
}

// newtonBandwidth is σ² of the synthetic presets, Table 2's σ² column read
// as the variance of the random frequencies, i.e. as 1/σ² in the kernel
// e^{−‖x−x'‖²/(2σ²)} of §4.4. Read literally (Ω ~ N(0, 1/σ²) with σ² = 0.1)
// the kernel between typical inputs x ~ N(u_j, I_10) is e^{−‖x−x'‖²/0.2} ≈
// e^{−100}: the features carry no signal and every method predicts noise
// (test MSE 10.9; dna 40 %, pendigits 34 % accuracy). Read as 1/σ², Table 2
// gives σ² = 10 for the synthetic rows and 1000 for dna, which is what
// tuning picks for dna; the tuning grid {0.01, …, 1000} is the same under
// either reading. Set bandwidth=0.1 to see the literal value.
const newtonBandwidth = 10

// dataScenario is the base of a run on a user's file: the E003-6 racers and
// the damped FedNewton, with the real-data defaults (2000 random features, bandwidth from the median
// pairwise distance, λ = 1e-4, λ_prox = 1e-4, FedAvg learning rate 0.001
// with s = 2), 10 clients, IID split, 20 rounds.
func dataScenario(seed uint64) experiment.Scenario {
	sc := newtonRounds()
	sc.Preset = "data"
	sc.Seed = seed
	sc.Config = dataConfig()
	return sc
}

// dataConfig is the configuration of dataScenario.
func dataConfig() Config {
	c := newtonRoundsConfig()
	c.Data = Data{Clients: 10, Samples: c.Data.Samples, Dim: c.Data.Dim, RFFDim: 2000, Lambda: 1e-4,
		Holdout: 0.2, MinSize: 10, Scale: true, Task: "auto"}
	c.LambdaProx = 1e-4
	c.Racers = append(c.Racers, dampedNewton)
	return c
}

// dampedNewton is the damped FedNewton racer, `fednewton:damped`: step
// η = 2/(1 + μ_max), which converges for every λ (model.NewtonSpectrum).
// Table 3's settings sit at the edge of FedNewton's stability (pendigits at
// σ² = 1, λ = 1e-4: Υ ≈ 1.2), so the file runs race it beside the paper's
// undamped step.
var dampedNewton = experiment.RacerSpec{Kind: KindFedNewton, Opts: []experiment.RacerOpt{{Key: "damped", Flag: true, Value: 1}}}
