package linear

import (
	"math"
	"strconv"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// Presets implements experiment.Computation.
func (compute) Presets() []experiment.Preset {
	return []experiment.Preset{
		{Name: "paradox", Summary: "FedAvg s=1,5,10 and FedProx: stalled gradient norms, near-optimal estimates (paper 000, Fig. 1)", Build: paradox},
		{Name: "minibatch", Summary: "the paradox with minibatch local updates, B=50 (paper 000, Figs. 2–3)", Build: func() experiment.Scenario {
			sc := paradox()
			experiment.Update(&sc, func(c *Config) { c.Batch = 50 })
			return sc
		}},
		{Name: "fedgain-model", Summary: "sweep: federation gain of a data-scarce and a data-rich client against model heterogeneity Γ (paper 000, Fig. 4)", Build: fedGainModel},
		{Name: "fedgain-covariate", Summary: "sweep: federation gain against the covariate subspace dimension r = 1…100 (paper 000, Fig. 5)", Build: fedGainCovariate},
		{Name: "polynomial", Summary: "sweep: MSE and 1/MSE of fitting U5 on disjoint client intervals against N = 20…200 (paper 000, Fig. 6)", Build: polynomialSweep},
	}
}

// paradox is E000-1 (docs/papers.md §1.9): M = 25, d = 100, n_i = 500, σ = 0.5,
// η = 0.1, one common θ*, racers FedAvg s = 1, 5, 10 and FedProx, T = 150 (§8).
// FedAvg s=10 follows the local_steps knob so that −/+ change it live.
func paradox() experiment.Scenario {
	return experiment.Scenario{
		Family: Family,
		Rounds: 150,
		Seed:   1,
		Config: Config{
			Data:       datasets.Linear{Clients: 25, Dim: 100, Samples: 500, Noise: 0.5},
			Eta:        0.1,
			LocalSteps: 10,
			Racers: []experiment.RacerSpec{
				{Kind: KindFedAvg, Opts: []experiment.RacerOpt{{Key: "s", Value: 1}}},
				{Kind: KindFedAvg, Opts: []experiment.RacerOpt{{Key: "s", Value: 5}}},
				{Kind: KindFedAvg},
				{Kind: KindFedProx},
			},
		},
	}
}

// The sweep presets of paper 000 (docs/papers.md §1.9, defaults of §8).

// checkData validates the federation of a sweep's point scenario.
var checkData = experiment.Typed(func(_ experiment.Scenario, c Config) error { return c.Data.Validate() })

// fedGainBase is E000-3/4's federation: M = 20, d = 100, 10 data-scarce
// clients with n_i = 50 and 10 data-rich ones with n_i = 500, σ = 0.5,
// η = 0.1, racers FedAvg s = 1, 5, 10 and FedProx.
func fedGainBase() experiment.Scenario {
	sc := paradox()
	sc.Trials = 20
	experiment.Update(&sc, func(c *Config) {
		c.Kind = fedGainKind
		c.Data = datasets.Linear{Clients: 20, Dim: 100, Samples: 500, ScarceClients: 10, ScarceSamples: 50, Noise: 0.5}
	})
	return sc
}

// fedGainModel is E000-3: FG against model heterogeneity Γ over 25
// log-spaced values in [0.01, 30] (3 significant digits), radius scheme,
// federated error = minimum over T = 200 rounds (docs/papers.md §8). The swept Γ
// is the perturbation radius; the paper's Γ is the realised max pairwise
// distance (≈ 1.59× the radius at M = 20, d = 100), written as
// gamma_realised and offered as the x axis.
func fedGainModel() experiment.Scenario {
	sc := fedGainBase()
	sc.Rounds = 200
	experiment.Update(&sc, func(c *Config) { c.FedError = model.FedErrorMin })
	sc.Sweep = experiment.SweepSpec{Knob: "gamma", Grid: logGrid(0.01, 30, 25), Label: "model heterogeneity Γ", Check: checkData,
		Axis: "gamma_realised"}
	return sc
}

// fedGainCovariate is E000-4: FG against the covariate subspace dimension
// r = 1, …, 100, one common truth, η = 0.1·r/d, federated error = the
// closed-form limit (docs/papers.md §8: small r makes iterating slow).
func fedGainCovariate() experiment.Scenario {
	sc := fedGainBase()
	sc.Rounds = 2000
	experiment.Update(&sc, func(c *Config) { c.FedError = model.FedErrorLimit })
	grid := make([]float64, 100)
	for i := range grid {
		grid[i] = float64(i + 1)
	}
	sc.Sweep = experiment.SweepSpec{Knob: "subspace_dim", Grid: grid, Label: "covariate subspace dimension r", Check: checkData,
		Adjust: func(p *experiment.Scenario) {
			experiment.Update(p, func(c *Config) {
				if r := c.Data.SubspaceDim; r > 0 {
					c.Eta *= float64(r) / float64(c.Data.Dim)
				}
			})
		}}
	return sc
}

// polynomialSweep is E000-5: the integrated MSE of fitting U5 against the
// samples per client n_i = 1, …, 10 (N = 20, …, 200), 500 trials, federated
// fit = the closed-form fixed point (docs/papers.md §8); the x axis can show N,
// the paper's.
func polynomialSweep() experiment.Scenario {
	sc := paradox()
	sc.Rounds = 100_000
	sc.Trials = 500
	experiment.Update(&sc, func(c *Config) {
		c.Kind = polynomialKind
		c.Data = datasets.Linear{Clients: 20, Dim: 6, Samples: 10, Noise: 0.5}
		c.FedError = model.FedErrorLimit
	})
	grid := make([]float64, 10)
	for i := range grid {
		grid[i] = float64(i + 1)
	}
	sc.Sweep = experiment.SweepSpec{Knob: "samples", Grid: grid, Label: "samples per client n_i (N = M·n_i)", Check: checkData,
		Axis: "total_samples"}
	return sc
}

// logGrid returns n log-spaced values from lo to hi, rounded to three
// significant digits so that they read well in a table.
func logGrid(lo, hi float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		v := lo * math.Pow(hi/lo, float64(i)/float64(n-1))
		out[i], _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	}
	return out
}
