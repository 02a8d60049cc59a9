package newton

import "github.com/fedscope/fedscope/experiment"

// Presets implements experiment.Family.
func (Family) Presets() []experiment.Preset {
	return []experiment.Preset{
		{Name: "newton-rounds", Summary: "KRR, DKRR, FedNewton, FedAvg, FedProx: test MSE per round on heterogeneous synthetic data (paper 003, Fig. 5)", Build: newtonRounds},
		{Name: "newton-local-size", Summary: "sweep: test MSE of KRR, DKRR, FedNewton t=1,2,4,8, FedAvg, FedProx against the number of clients at |D| = 10000 (paper 003, Fig. 3)", Build: newtonLocalSize},
		{Name: "newton-heterogeneity", Summary: "sweep: the same racers against data heterogeneity α, or model heterogeneity β with sweep=beta (paper 003, Fig. 4)", Build: newtonHeterogeneity},
	}
}

// newtonRounds is E003-5 (PAPERS.md §4.7, §8): synthetic data with α = 0.01
// and β = 0.001, m = 20 clients with |D_j| = 500, d = 10, noise variance
// 0.2, 2500 test points, M = 200 random features, FedAvg learning rate
// 0.001 with s = 2 (Table 2), 20 rounds. Two departures from Table 2's
// synthetic row: the bandwidth (see newtonBandwidth) and λ = λ_prox = 1e-4
// instead of 1e-6 / 7e-7: with this RFF scaling λ = 1e-6 leaves 500 samples
// per client too few for 200 features, the contraction factor exceeds 1 and
// FedNewton diverges — set lambda=1e-6 bandwidth=10 to see that regime.
func newtonRounds() experiment.Scenario {
	return experiment.Scenario{
		Family: Family{},
		Rounds: 20,
		Seed:   1,
		Config: Config{
			Data: Data{Clients: 20, Samples: 500, Dim: 10, Alpha: 0.01, Beta: 0.001, NoiseVar: 0.2, TestSize: 2500,
				RFFDim: 200, Bandwidth: newtonBandwidth, Lambda: 1e-4, Holdout: 0.2, MinSize: 10, Scale: true, Task: "auto"},
			Eta:        0.001,
			LocalSteps: 2,
			LambdaProx: 1e-4,
			Racers: []experiment.RacerSpec{{Kind: KindKRR}, {Kind: KindDKRR}, {Kind: KindFedNewton},
				{Kind: KindFedAvg}, {Kind: KindFedProx}},
		},
	}
}

// newtonBandwidth is σ² of the synthetic presets. Table 2 lists σ² = 0.1,
// but with Ω ~ N(0, 1/σ²) (§4.4) and inputs x ~ N(u_j, I_10) that kernel is
// e^{−‖x−x'‖²/0.2} ≈ e^{−100} between typical points: the features carry no
// signal and every method predicts noise. The paper's code evidently reads
// the bandwidth differently; 10 (about the median squared distance / 2)
// gives a working kernel; 20 gave the lowest KRR test MSE at λ = 1e-4.
// Set bandwidth=0.1 to see Table 2's literal value.
const newtonBandwidth = 20

// dataScenario is the base of a run on a user's file: the E003-6 racers with
// the real-data defaults (2000 random features, bandwidth from the median
// pairwise distance, λ = 1e-4, λ_prox = 1e-4, FedAvg learning rate 0.001
// with s = 2), 10 clients, IID split, 20 rounds.
func dataScenario(seed uint64) experiment.Scenario {
	sc := newtonRounds()
	sc.Preset = "data"
	sc.Seed = seed
	experiment.Update(&sc, func(c *Config) {
		c.Data = Data{Clients: 10, Samples: c.Data.Samples, Dim: c.Data.Dim, RFFDim: 2000, Lambda: 1e-4,
			Holdout: 0.2, MinSize: 10, Scale: true, Task: "auto"}
		c.LambdaProx = 1e-4
	})
	return sc
}
