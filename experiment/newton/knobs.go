package newton

import (
	"fmt"

	"github.com/fedscope/fedscope/experiment"
)

// Ladders of the live keys.
var (
	etaLadder   = experiment.Decades([]float64{1, 1.5, 2, 3, 5, 7}, -4, 2)
	stepsLadder = []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200}
	alphaLadder = []float64{0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1} // docs/papers.md §8, 003
)

// Knobs implements experiment.Computation: the racers' and the data's
// keys, those of a data file, and the sweeps'.
func (compute) Knobs(sc experiment.Scenario, c Config) []experiment.Knob {
	out := append(dataKnobs(sc, c), fileKnobs(sc)...)
	if sc.IsSweep() {
		out = append(out, experiment.TrialsKnob())
		if sc.Sweep.Knob == "alpha" || sc.Sweep.Knob == "beta" {
			out = append(out, sweepKnob)
		}
		if sc.Sweep.Knob == "clients" {
			out = append(out, experiment.IntKnob("total_samples", "|D|, training samples in all of the local-size sweep (samples = total_samples/clients)",
				1, experiment.MaxSamples, func(c *Config) *int { return &c.Total }))
		}
	}
	return out
}

// floatField and intField reach a field of the data configuration.
func floatField(f func(*Data) *float64) func(*Config) *float64 {
	return func(c *Config) *float64 { return f(&c.Data) }
}

func intField(f func(*Data) *int) func(*Config) *int {
	return func(c *Config) *int { return f(&c.Data) }
}

// dataKnobs are the racers' parameters and the synthetic data's and the
// ridge model's keys; h/H move α on a synthetic run.
func dataKnobs(sc experiment.Scenario, c Config) []experiment.Knob {
	alpha := experiment.FloatKnob("alpha", "data heterogeneity α (variance of the clients' mean shifts)", true, floatField(func(d *Data) *float64 { return &d.Alpha }))
	if c.Data.DataPath == "" && !sc.IsSweep() {
		alpha = alpha.WithLive(experiment.Live{Down: []string{"h"}, Up: []string{"H"}, Name: "α", Desc: "data heterogeneity α",
			Step: experiment.LadderStep(alphaLadder, func(c *Config) *float64 { return &c.Data.Alpha })})
	}
	return []experiment.Knob{
		experiment.FloatKnob("eta", "FedAvg learning rate η", false, func(c *Config) *float64 { return &c.Eta }).
			WithLive(experiment.Live{Down: []string{"["}, Up: []string{"]"}, Name: "η", Desc: "FedAvg learning rate η",
				Step: experiment.LadderStep(etaLadder, func(c *Config) *float64 { return &c.Eta })}),
		experiment.IntKnob("local_steps", "local steps s of FedAvg racers that do not pin s", 1, experiment.MaxSteps, func(c *Config) *int { return &c.LocalSteps }).
			WithLive(experiment.Live{Down: []string{"-", "_"}, Up: []string{"+", "="}, Name: "steps", Desc: "FedAvg local steps s", Step: stepLocalSteps}),
		experiment.IntKnob("clients", "number of clients m", 1, experiment.MaxClients, intField(func(d *Data) *int { return &d.Clients })),
		experiment.IntKnob("dim", "input dimension d of the synthetic data", 1, experiment.MaxDim, intField(func(d *Data) *int { return &d.Dim })),
		samplesKnob(),
		alpha,
		experiment.FloatKnob("beta", "model heterogeneity β (variance of the clients' model vectors)", true, floatField(func(d *Data) *float64 { return &d.Beta })),
		experiment.FloatKnob("noise_var", "label-noise variance", true, floatField(func(d *Data) *float64 { return &d.NoiseVar })),
		experiment.IntKnob("test_size", "synthetic test points", 1, experiment.MaxSamples, intField(func(d *Data) *int { return &d.TestSize })),
		experiment.IntKnob("rff_dim", "random Fourier features M", 1, 5000, intField(func(d *Data) *int { return &d.RFFDim })),
		experiment.FloatKnob("bandwidth", "kernel bandwidth σ² (0 = from the median pairwise distance)", true, floatField(func(d *Data) *float64 { return &d.Bandwidth })),
		experiment.FloatKnob("lambda", "ridge regularisation λ", false, floatField(func(d *Data) *float64 { return &d.Lambda })),
		experiment.FloatKnob("lambda_prox", "FedProx proximal weight λ_prox", false, func(c *Config) *float64 { return &c.LambdaProx }).
			WithInert(experiment.Typed(func(_ experiment.Scenario, c Config) string {
				for _, r := range c.Racers {
					if _, pinned := r.Opt("mu"); r.Kind == KindFedProx && !pinned {
						return ""
					}
				}
				return "no FedProx racer follows it (none races, or each pins its own mu)"
			})),
	}
}

// fileKnobs are the keys of a data file (data= only where it is accepted:
// the sweeps run on synthetic data), then the racers.
func fileKnobs(sc experiment.Scenario) []experiment.Knob {
	var out []experiment.Knob
	if !sc.IsSweep() {
		out = append(out, dataKnob())
	}
	return append(out,
		testKnob(),
		experiment.ChoiceKnob("partition", "how a data file is dealt to clients: iid or dirichlet", []string{"iid", "dirichlet"},
			func(c *Config) string {
				if c.Data.DirichletC > 0 {
					return "dirichlet"
				}
				return "iid"
			},
			func(c *Config, v string) {
				switch {
				case v == "iid":
					c.Data.DirichletC = 0
				case c.Data.DirichletC == 0:
					c.Data.DirichletC = 0.5
				}
			}),
		experiment.FloatKnob("dirichlet_c", "Dirichlet concentration c (label skew; sizes only for regression; 0 = iid)", true, floatField(func(d *Data) *float64 { return &d.DirichletC })),
		experiment.IntKnob("min_size", "smallest client of a Dirichlet split", 1, experiment.MaxSamples, intField(func(d *Data) *int { return &d.MinSize })),
		experiment.FloatKnob("holdout", "hold-out fraction for testing when there is no test file", false, floatField(func(d *Data) *float64 { return &d.Holdout })),
		experiment.ChoiceKnob("task", "auto, classification or regression (auto: whole-number labels with at most 100 values are classes)",
			[]string{"auto", "classification", "regression"},
			func(c *Config) string { return c.Data.Task }, func(c *Config, v string) { c.Data.Task = v }),
		experiment.ChoiceKnob("label_column", "where a CSV file keeps the label: first or last", []string{"first", "last"},
			func(c *Config) string {
				if c.Data.LabelLast {
					return "last"
				}
				return "first"
			},
			func(c *Config, v string) { c.Data.LabelLast = v == "last" }),
		experiment.BoolKnob("scale", "scale features to [0,1] on the training set", func(c *Config) *bool { return &c.Data.Scale }),
		experiment.BoolKnob("tune", "grid-search bandwidth and λ on a validation split (§4.5)", func(c *Config) *bool { return &c.Data.Tune }),
		experiment.RacersKnob(racerKinds, func(c *Config) *[]experiment.RacerSpec { return &c.Racers }),
	)
}

// samplesKnob is |D_j|; the local-size sweep derives it from total_samples.
func samplesKnob() experiment.Knob {
	k := experiment.IntKnob("samples", "samples |D_j| per client (synthetic)", 1, experiment.MaxSamples, func(c *Config) *int { return &c.Data.Samples })
	k.Refuse = func(sc experiment.Scenario) string {
		if sc.Sweep.Knob == "clients" {
			return "the local-size sweep sets samples = total_samples/clients; set total_samples"
		}
		return ""
	}
	return k
}

// testKnob is test=, a test file beside the data file.
func testKnob() experiment.Knob {
	k := experiment.TextKnob("test", "a test file in the data file's format (default: a seeded hold-out split)",
		func(c *Config) string { return c.Data.TestPath },
		func(c *Config, v string) error {
			if v != "" {
				if err := readable(v); err != nil {
					return err
				}
			}
			c.Data.TestPath = v
			return nil
		})
	k.Refuse = experiment.Typed(func(_ experiment.Scenario, c Config) string {
		if c.Data.DataPath == "" {
			return "applies only once data= is set (set data=… first)"
		}
		return ""
	})
	return k
}

// dataKnob switches any scenario to a run on a user's data file: the first
// data= on a scenario without one opens the data scenario (keeping the
// seed), so that a preset's synthetic hyper-parameters do not leak into a
// file run.
func dataKnob() experiment.Knob {
	path := experiment.Typed(func(_ experiment.Scenario, c Config) string { return c.Data.DataPath })
	k := experiment.NewKnob("data", "a LIBSVM or CSV data file (by extension: .csv is CSV) to race on instead of synthetic data",
		func(s *experiment.Scenario) string { return path(*s) },
		func(s *experiment.Scenario, v string) error {
			if v == "" {
				// No file: back to the synthetic data of newton-rounds
				// (keeping the seed), whose bandwidth the file run had
				// left to the median heuristic.
				if path(*s) != "" {
					seed := s.Seed
					*s = newtonRounds()
					s.Preset, s.Seed = "newton-rounds", seed
				}
				return nil
			}
			if err := readable(v); err != nil {
				return err
			}
			if path(*s) == "" {
				*s = dataScenario(s.Seed)
			}
			experiment.Update(s, func(c *Config) { c.Data.DataPath = v })
			return nil
		})
	k.Open = dataScenario
	k.Prompt = dataPrompt()
	return k
}

// sweepKnob is `sweep`, which picks the knob newton-heterogeneity varies.
// Switching resets the other heterogeneity to 0, as E003-3/4 keep it off;
// set it after sweep= to combine both.
var sweepKnob = func() experiment.Knob {
	k := experiment.NewKnob("sweep", "what newton-heterogeneity varies: alpha (E003-3) or beta (E003-4)",
		func(s *experiment.Scenario) string { return s.Sweep.Knob },
		func(s *experiment.Scenario, v string) error {
			if v != "alpha" && v != "beta" {
				return fmt.Errorf("must be alpha or beta")
			}
			if v != s.Sweep.Knob {
				experiment.Update(s, func(c *Config) { c.Data.Alpha, c.Data.Beta = 0, 0 })
			}
			s.Sweep = heterogeneitySpec(v)
			return nil
		})
	k.Early = true
	return k
}()

// stepLocalSteps moves s along its ladder; it says so when no racer follows
// it.
var stepLocalSteps = experiment.StepOf(func(_ experiment.Scenario, c *Config, up bool) error {
	c.LocalSteps = int(experiment.StepLadder(stepsLadder, float64(c.LocalSteps), up))
	for _, r := range c.Racers {
		if _, pinned := r.Opt("s"); r.Kind == KindFedAvg && !pinned {
			return nil
		}
	}
	return experiment.Errorf("local_steps=%d, but no racer follows it: add “FedAvg s=N” with a", c.LocalSteps)
})
