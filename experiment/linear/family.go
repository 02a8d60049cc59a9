// Package linear is the family of paper 000 (`000_8dadcc9301cefdf4.txt`,
// docs/papers.md §1): FedAvg and FedProx on Gaussian linear federations — the
// stationary-point paradox (Figs 1–3), the federation gain against model and
// covariate heterogeneity (Figs 4–5) and the polynomial fit (Fig 6).
package linear

import (
	"fmt"
	"math"
	"strings"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// Family is paper 000's family; its zero value is ready to use.
type Family struct{}

// Name implements experiment.Family.
func (Family) Name() string { return "linear" }

// Paper implements experiment.Family.
func (Family) Paper() string { return "000_8dadcc9301cefdf4.txt (docs/papers.md §1)" }

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

func cfg(sc experiment.Scenario) Config { return experiment.Config[Config](sc) }

// Kinds of racer.
const (
	KindFedAvg  = "fedavg"
	KindFedProx = "fedprox"
)

// Limits of the knobs.
const (
	maxClients = 10_000
	maxDim     = 2_000
	maxSamples = 1_000_000
	maxSteps   = 1_000
)

// racerKinds is the racer syntax of the family.
var racerKinds = []experiment.RacerKind{
	{Name: KindFedAvg, Options: []experiment.RacerOption{{Key: "s", Min: 1, Max: maxSteps}, {Key: "b", Min: 0, Max: maxSamples}, {Key: "eta", Max: experiment.MaxFloat, Real: true}}},
	{Name: KindFedProx, Options: []experiment.RacerOption{{Key: "b", Min: 0, Max: maxSamples}, {Key: "eta", Max: experiment.MaxFloat, Real: true}}},
}

// Validate implements experiment.Family.
func (Family) Validate(sc experiment.Scenario) error {
	c := cfg(sc)
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
	return validateSweep(sc)
}

// Help implements experiment.Family.
func (Family) Help(sc experiment.Scenario) string {
	switch cfg(sc).Kind {
	case fedGainKind:
		return "FG = local error / federated error of one client, per trial (FG > 1: joining helps; dashed: FG = 1). " +
			"The curve is the mean of the per-trial FG (fg_stat=ratio_of_means: the ratio of trial-averaged errors); " +
			"the second line is its median, the band its 10–90 % spread over the trials. " +
			"At r = n_j the data-scarce client's local design is square: its min-norm error has infinite expected square, " +
			"so single trials spike (FG up to thousands) and the mean jumps there — the point is marked; read the median. " +
			"On the Γ sweep, x labels the x axis with the realised max-pairwise Γ, the paper's Γ (about 1.6 × the swept radius)."
	case polynomialKind:
		return "MSE = ∫(f̂ − U5)² dx, mean over trials; 1/MSE = 1/(mean MSE), as the paper plots it (the mean of the per-trial 1/MSE is written as inv_mse_trial). " +
			"x labels the x axis with the total sample size N = M·n_i, the paper's x axis."
	}
	return "The ┄ line is the error of pooled least squares, the centralised optimum; ╌ lines (t) are the papers' predictions. " +
		"grad_norm is the gradient of ℓ = (1/N)Σ‖y − Xθ‖², twice that of the 1/(2N) objective FedAvg s=1 minimises. " +
		"Minibatch steps weigh each batch by 1/n_i (one epoch = one full-batch step, incremental gradient); batch_norm=batch uses 1/B."
}

// summary is the line under the title of a run; realised is the realised
// max-pairwise Γ once the data are drawn (docs/papers.md §8: show it), NaN before.
func summary(c Config, realised float64) string {
	d := c.Data
	var b strings.Builder
	fmt.Fprintf(&b, "M=%d, d=%d, N=%d", d.Clients, d.Dim, d.TotalSamples())
	if d.ScarceClients > 0 {
		fmt.Fprintf(&b, " (%d×%d + %d×%d)", d.ScarceClients, d.ScarceSamples, d.Clients-d.ScarceClients, d.Samples)
	}
	fmt.Fprintf(&b, ", σ=%s, Γ=%s", experiment.FormatFloat(d.Noise), experiment.FormatFloat(d.Gamma))
	if d.Gamma > 0 && !math.IsNaN(realised) {
		fmt.Fprintf(&b, " (realised %.3g)", realised)
	}
	if d.SubspaceDim > 0 && d.SubspaceDim < d.Dim {
		fmt.Fprintf(&b, ", r=%d", d.SubspaceDim)
	}
	fmt.Fprintf(&b, ", η=%s", experiment.FormatFloat(c.Eta))
	if c.Batch > 0 {
		fmt.Fprintf(&b, ", B=%d", c.Batch)
		if c.BatchNorm == model.NormBatch {
			b.WriteString(" (1/B steps)")
		}
	}
	return b.String()
}
