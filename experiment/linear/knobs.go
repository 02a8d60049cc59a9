package linear

import (
	"strconv"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// Ladders: the values the live keys move through. Nice round values read
// better on a projector than multiplicative steps.
var (
	etaLadder   = experiment.Decades([]float64{1, 1.5, 2, 3, 5, 7}, -4, 2)
	stepsLadder = []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200}
	gammaLadder = []float64{0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30}
	batchLadder = []float64{1, 2, 5, 10, 20, 25, 50, 100, 250, 500, 1000}
	rLadder     = []float64{1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700, 1000, 1500, 2000}
)

// Knobs implements experiment.Computation: the data and racer keys of every
// kind, the heterogeneity keys where the data have them, and the sweep keys
// of the sweeps.
func (compute) Knobs(_ experiment.Scenario, c Config) []experiment.Knob {
	out := append(stepKnobs(), dataKnobs(c.Kind != polynomialKind)...)
	if c.Kind != runKind {
		out = append(out, sweepKnobs(c.Kind)...)
	}
	return append(out, experiment.RacersKnob(racerKinds, func(c *Config) *[]experiment.RacerSpec { return &c.Racers }))
}

// stepKnobs are the racers' local updates: η, s and the minibatches.
func stepKnobs() []experiment.Knob {
	return []experiment.Knob{
		experiment.FloatKnob("eta", "step size η of every racer", false, func(c *Config) *float64 { return &c.Eta }).
			WithLive(experiment.Live{Down: []string{"["}, Up: []string{"]"}, Name: "η", Desc: "step size η",
				Step: experiment.LadderStep(etaLadder, func(c *Config) *float64 { return &c.Eta })}).
			WithInert(experiment.Typed(func(_ experiment.Scenario, c Config) string { return everyRacerPins(c, "eta") })),
		experiment.IntKnob("local_steps", "local steps s of FedAvg racers that do not pin s", 1, experiment.MaxSteps,
			func(c *Config) *int { return &c.LocalSteps }).
			WithLive(experiment.Live{Down: []string{"-", "_"}, Up: []string{"+", "="}, Name: "steps", Desc: "local steps s", Step: stepLocalSteps}).
			WithInert(experiment.Typed(func(_ experiment.Scenario, c Config) string {
				if followsLocalSteps(c) {
					return ""
				}
				return "no FedAvg racer follows it (each pins its own s, or none is FedAvg)"
			})),
		experiment.IntKnob("batch", "minibatch size B (0 = full batch)", 0, experiment.MaxSamples, func(c *Config) *int { return &c.Batch }).
			WithLive(experiment.Live{Down: []string{"b"}, Up: []string{"B"}, Name: "batch", Desc: "minibatch size B", Step: stepBatch}).
			WithInert(experiment.Typed(func(_ experiment.Scenario, c Config) string { return everyRacerPins(c, "b") })),
		experiment.TextKnob("batch_norm", "minibatch step weight: local (1/n_i, the batch's share of the local loss: one epoch sums to one full-batch step, "+
			"the paper's reading, docs/papers.md §1.5) or batch (1/B, the per-batch mean: one epoch ≈ n_i/B full steps)",
			func(c *Config) string { return c.BatchNorm.String() },
			func(c *Config, v string) error {
				n, err := model.ParseBatchNorm(v)
				c.BatchNorm = n
				return err
			}).
			WithInert(experiment.Typed(func(sc experiment.Scenario, c Config) string {
				if sc.Sweep.Knob == "batch" || takesMinibatches(c) {
					return ""
				}
				return "no racer takes minibatch steps (batch=0 and no racer pins b)"
			})),
	}
}

// everyRacerPins says that every racer pins its own value of option key,
// so that the knob of the same name reaches none ("" when one follows it).
func everyRacerPins(c Config, key string) string {
	for _, r := range c.Racers {
		if _, pinned := r.Opt(key); !pinned {
			return ""
		}
	}
	return "every racer pins its own " + key
}

// takesMinibatches reports whether some racer takes minibatch steps.
func takesMinibatches(c Config) bool {
	for _, r := range c.Racers {
		b, pinned := r.Opt("b")
		if pinned && b > 0 || !pinned && c.Batch > 0 {
			return true
		}
	}
	return false
}

// dataField reaches a whole-number field of the federation.
func dataField(f func(*datasets.Linear) *int) func(*Config) *int {
	return func(c *Config) *int { return f(&c.Data) }
}

// dataKnobs are the federation's sizes and noise and, with heterogeneity
// (all but the polynomial fit), its data-scarce clients, Γ and the
// covariate subspace.
func dataKnobs(heterogeneity bool) []experiment.Knob {
	out := []experiment.Knob{
		experiment.IntKnob("clients", "number of clients M", 1, experiment.MaxClients, dataField(func(d *datasets.Linear) *int { return &d.Clients })),
		experiment.IntKnob("dim", "feature dimension d", 1, experiment.MaxDim, dataField(func(d *datasets.Linear) *int { return &d.Dim })),
		experiment.IntKnob("samples", "samples n_i per (data-rich) client", 1, experiment.MaxSamples, dataField(func(d *datasets.Linear) *int { return &d.Samples })),
	}
	if heterogeneity {
		out = append(out,
			experiment.IntKnob("scarce_clients", "how many clients are data-scarce", 0, experiment.MaxClients, dataField(func(d *datasets.Linear) *int { return &d.ScarceClients })),
			experiment.IntKnob("scarce_samples", "samples n_i per data-scarce client (0 with no data-scarce clients)", 0, experiment.MaxSamples, dataField(func(d *datasets.Linear) *int { return &d.ScarceSamples })))
	}
	out = append(out, experiment.FloatKnob("noise", "label noise σ", true, func(c *Config) *float64 { return &c.Data.Noise }))
	if !heterogeneity {
		return out
	}
	return append(out,
		experiment.FloatKnob("gamma", "model heterogeneity Γ", true, func(c *Config) *float64 { return &c.Data.Gamma }).
			WithLive(experiment.Live{Down: []string{"h"}, Up: []string{"H"}, Name: "Γ", Desc: "heterogeneity Γ",
				Step: experiment.LadderStep(gammaLadder, func(c *Config) *float64 { return &c.Data.Gamma })}),
		experiment.ChoiceKnob("gamma_scheme", "how Γ is realised: radius or exact", []string{"radius", "exact"},
			func(c *Config) string { return c.Data.Scheme.String() },
			func(c *Config, v string) {
				c.Data.Scheme = datasets.GammaRadius
				if v == "exact" {
					c.Data.Scheme = datasets.GammaExact
				}
			}).
			WithInert(experiment.Typed(func(sc experiment.Scenario, c Config) string {
				if c.Data.Gamma != 0 || sc.Sweep.Knob == "gamma" {
					return ""
				}
				return "gamma=0: every client has the same model"
			})),
		experiment.IntKnob("subspace_dim", "covariate subspace dimension r (0 = dim, no covariate shift)", 0, experiment.MaxDim,
			dataField(func(d *datasets.Linear) *int { return &d.SubspaceDim })).
			WithLive(experiment.Live{Down: []string{"o"}, Up: []string{"O"}, Name: "subspace", Desc: "covariate subspace r", Step: stepSubspace}))
}

// sweepKnobs are the trials and how the federated error is measured and,
// for the federation gain, how FG is formed and averaged.
func sweepKnobs(k kind) []experiment.Knob {
	fedErr := experiment.TextKnob("fed_error", "federated error of a sweep's gain: min (over rounds), final (round) or limit (closed form)",
		func(c *Config) string { return c.FedError.String() },
		func(c *Config, v string) error {
			e, err := model.ParseFedError(v)
			c.FedError = e
			return err
		})
	if k != fedGainKind {
		// The polynomial sweep keeps the limit: iterating would take ~1e5 rounds per fit (docs/papers.md §8).
		return []experiment.Knob{experiment.TrialsKnob(), fedErr}
	}
	return []experiment.Knob{experiment.TrialsKnob(),
		fedErr.WithLive(experiment.Cycle("fed_error", "f", "fed error", "federated error", "min", "final", "limit")),
		experiment.ChoiceKnob("fg_ratio", "federation gain as the ratio of errors (norm) or of squared errors (squared)", []string{"norm", "squared"},
			func(c *Config) string {
				if c.Squared {
					return "squared"
				}
				return "norm"
			},
			func(c *Config, v string) { c.Squared = v == "squared" }).
			WithLive(experiment.Cycle("fg_ratio", "g", "FG²", "FG as a ratio of errors or of squared errors", "norm", "squared")),
		experiment.ChoiceKnob("fg_stat", "how FG is averaged over the trials: mean_of_ratios (the mean of the per-trial FG, "+
			"what the paper's figures average) or ratio_of_means (the trial-averaged local error over the trial-averaged federated error); "+
			"the median and the 10–90 % spread are written beside it either way", []string{"mean_of_ratios", "ratio_of_means"},
			func(c *Config) string {
				if c.RatioOfMeans {
					return "ratio_of_means"
				}
				return "mean_of_ratios"
			},
			func(c *Config, v string) { c.RatioOfMeans = v == "ratio_of_means" }).
			WithLive(experiment.Cycle("fg_stat", "m", "FG stat", "FG over the trials", "mean_of_ratios", "ratio_of_means")),
	}
}

// followsLocalSteps reports whether some FedAvg racer follows local_steps.
func followsLocalSteps(c Config) bool {
	for _, r := range c.Racers {
		if _, pinned := r.Opt("s"); r.Kind == KindFedAvg && !pinned {
			return true
		}
	}
	return false
}

// stepLocalSteps moves s along its ladder; it says so when no racer follows
// it (the change would show nothing).
var stepLocalSteps = experiment.StepOf(func(_ experiment.Scenario, c *Config, up bool) error {
	c.LocalSteps = int(experiment.StepLadder(stepsLadder, float64(c.LocalSteps), up))
	if !followsLocalSteps(*c) {
		return experiment.Errorf("local_steps=%d, but no racer follows it: add “FedAvg s=N” with a", c.LocalSteps)
	}
	return nil
})

// stepBatch moves the minibatch size along its ladder; 0 (full batch) sits
// above every batch size smaller than n.
var stepBatch = experiment.StepOf(func(_ experiment.Scenario, c *Config, up bool) error {
	cur, n := c.Batch, c.Data.Samples
	switch {
	case up && cur == 0:
	case up:
		next := int(experiment.StepLadder(batchLadder, float64(cur), true))
		if next >= n || next == cur {
			next = 0
		}
		c.Batch = next
	default:
		if cur == 0 {
			cur = n
		}
		c.Batch = int(experiment.StepLadder(batchLadder, float64(cur), false))
	}
	return nil
})

// stepSubspace moves the covariate subspace dimension r along its ladder,
// with r = d (stored as 0, no covariate shift) at the top, and rescales η in
// proportion to r as E000-4 does (docs/papers.md §1.9: η = 0.1·r/d keeps the
// local steps stable as rows scaled by √(d/r) stiffen the local Hessians).
var stepSubspace = experiment.StepOf(func(_ experiment.Scenario, c *Config, up bool) error {
	d := c.Data.Dim
	cur := c.Data.SubspaceDim
	if cur == 0 {
		cur = d
	}
	next := min(int(experiment.StepLadder(rLadder, float64(cur), up)), d)
	if next == cur {
		return nil
	}
	// Round to 12 significant digits so that a round trip 100 → 30 → 100
	// gives back η = 0.1 rather than 0.09999999999999999.
	c.Eta, _ = strconv.ParseFloat(strconv.FormatFloat(c.Eta*float64(next)/float64(cur), 'g', 12, 64), 64)
	c.Data.SubspaceDim = next
	if next == d {
		c.Data.SubspaceDim = 0
	}
	return nil
})
