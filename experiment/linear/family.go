// Package linear is the family of paper 000 (`000_8dadcc9301cefdf4.txt`,
// docs/papers.md §1): FedAvg and FedProx on Gaussian linear federations — the
// stationary-point paradox (Figs 1–3), the federation gain against model and
// covariate heterogeneity (Figs 4–5) and the polynomial fit (Fig 6).
package linear

import (
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// Family is paper 000's family.
var Family = experiment.Define(experiment.Definition[Config, *model.Problem]{
	Name:      "linear",
	Paper:     "000_8dadcc9301cefdf4.txt (docs/papers.md §1)",
	Compute:   compute{},
	Present:   present{},
	Sweeps:    sweeps{},
	Lessons:   lessons,
	Reproduce: reproduction(),
})

// compute is what the engine runs (experiment.Computation), present what
// the front ends say (experiment.Presentation), sweeps how the sweep
// presets are evaluated (experiment.Sweeps).
type (
	compute struct{}
	present struct{}
	sweeps  struct{}
)

// kind is what a scenario of the family does.
type kind int

const (
	runKind        kind = iota // a race over rounds (paradox, minibatch)
	fedGainKind                // sweep: federation gain (E000-3/4)
	polynomialKind             // sweep: integrated MSE of the U5 fit (E000-5)
)

// Config is the family's part of a scenario.
type Config struct {
	Kind       kind
	Data       datasets.Linear        // the federation (clients, samples, noise and dim = degree+1 for the polynomial)
	Eta        float64                // step size η shared by the racers
	LocalSteps int                    // s of FedAvg racers that do not pin their own
	Batch      int                    // minibatch size B, 0 = full batch
	BatchNorm  model.BatchNorm        // minibatch step weight: 1/n_i (default) or 1/B
	Racers     []experiment.RacerSpec // the algorithms raced side by side
	FedError   model.FedError         // sweeps: how the federated error is measured
	Squared    bool                   // sweeps: federation gain as the ratio of squared errors
	// RatioOfMeans averages FG over the trials as the trial-averaged local
	// error over the trial-averaged federated error (fg_stat=ratio_of_means)
	// instead of the mean of the per-trial FG (docs/papers.md §8 CORRECTED).
	RatioOfMeans bool
}

// Kinds of racer.
const (
	KindFedAvg  = "fedavg"
	KindFedProx = "fedprox"
)

// racerKinds is the racer syntax of the family.
var racerKinds = []experiment.RacerKind{
	{Name: KindFedAvg, Options: []experiment.RacerOption{{Key: "s", Min: 1, Max: experiment.MaxSteps}, {Key: "b", Min: 0, Max: experiment.MaxSamples}, {Key: "eta", Max: experiment.MaxFloat, Real: true}}},
	{Name: KindFedProx, Options: []experiment.RacerOption{{Key: "b", Min: 0, Max: experiment.MaxSamples}, {Key: "eta", Max: experiment.MaxFloat, Real: true}}},
}

// Validate implements experiment.Computation.
func (compute) Validate(sc experiment.Scenario, c Config) error {
	if err := c.Data.Validate(); err != nil {
		return &experiment.InputError{Msg: err.Error()}
	}
	if err := experiment.CheckRacers(c.Racers, racerKinds); err != nil {
		return err
	}
	if err := validateScarce(c); err != nil {
		return err
	}
	switch {
	case !(c.Eta > 0):
		return experiment.Errorf("eta=%v: must be > 0", c.Eta)
	case c.LocalSteps < 1:
		return experiment.Errorf("local_steps=%d: must be ≥ 1", c.LocalSteps)
	}
	if c.Kind == runKind {
		return validateBatches(c)
	}
	if !sc.IsSweep() {
		return experiment.Errorf("preset %q is a sweep; run it with: fedscope sweep --preset %s", sc.Preset, sc.Preset)
	}
	return validateSweep(c)
}
