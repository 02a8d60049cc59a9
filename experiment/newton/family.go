// Package newton is the family of paper 003 (`003_e9274c8da9a67e14.txt`,
// docs/papers.md §4): ridge regression in random-feature space with KRR, DKRR,
// FedNewton, FedAvg and FedProx racers, on the synthetic FedNewton data
// (Figs 3–5) or on a user's data file (Table 3).
package newton

import (
	"errors"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/experiment"
)

// Family is paper 003's family.
var Family = experiment.Define(experiment.Definition[Config, *Prepared]{
	Name:      "newton",
	Paper:     "003_e9274c8da9a67e14.txt (docs/papers.md §4)",
	Compute:   compute{},
	Present:   present{},
	Lessons:   lessons,
	Reproduce: reproduction(),
	Sweeps:    sweeps{},
})

// compute is what the engine runs (experiment.Computation), present what
// the front ends say (experiment.Presentation), sweeps how the sweep
// presets are evaluated (experiment.Sweeps).
type (
	compute struct{}
	present struct{}
	sweeps  struct{}
)

// Data is everything Prepare reads: the synthetic data or the data file, the
// split, and the ridge model in feature space.
type Data struct {
	Clients, Samples, Dim int     // m, |D_j| and the input dimension d (synthetic)
	Alpha, Beta           float64 // data and model heterogeneity (synthetic)
	NoiseVar              float64 // label-noise variance (synthetic)
	TestSize              int     // synthetic test points
	DirichletC            float64 // Dirichlet c: label skew (files, classes), sizes only (regression); 0 = IID

	DataPath, TestPath string  // a user's data file; "" = synthetic
	LabelLast          bool    // CSV: the label is the last column
	Task               string  // auto, classification or regression (files)
	Scale              bool    // scale features to [0,1] on the training set (files)
	Holdout            float64 // hold-out fraction without a test file
	MinSize            int     // smallest client of a Dirichlet label split
	Tune               bool    // grid-search bandwidth and λ on a validation split (§4.5)

	RFFDim    int     // M, random features
	Bandwidth float64 // σ² of the Gaussian kernel; 0 = median heuristic (σ = median distance)
	Lambda    float64 // λ
}

// Config is the family's part of a scenario.
type Config struct {
	Data       Data
	Eta        float64 // FedAvg learning rate (Table 2)
	LocalSteps int     // s of FedAvg racers that do not pin s
	LambdaProx float64 // λ_prox of FedProx racers that do not pin mu=
	Racers     []experiment.RacerSpec
	Total      int // |D| of the local-size sweep: Samples = Total/Clients; 0 otherwise
}

// Kinds of racer.
const (
	KindKRR       = "krr"
	KindDKRR      = "dkrr"
	KindFedNewton = "fednewton"
	KindFedAvg    = "fedavg"
	KindFedProx   = "fedprox"
)

var racerKinds = []experiment.RacerKind{
	{Name: KindKRR}, {Name: KindDKRR}, {Name: KindFedNewton, Options: []experiment.RacerOption{{Key: "damped", Flag: true}}},
	{Name: KindFedAvg, Options: []experiment.RacerOption{{Key: "s", Min: 1, Max: experiment.MaxSteps}, {Key: "eta", Max: experiment.MaxFloat, Real: true}}},
	{Name: KindFedProx, Options: []experiment.RacerOption{{Key: "mu", Max: experiment.MaxFloat, Real: true}}},
}

// synthetic is the generator of the scenario's synthetic data.
func (d Data) synthetic() datasets.Newton {
	return datasets.Newton{Clients: d.Clients, Samples: d.Samples, Dim: d.Dim,
		Alpha: d.Alpha, Beta: d.Beta, NoiseVar: d.NoiseVar, Test: d.TestSize, DirichletC: d.DirichletC}
}

// Validate implements experiment.Computation.
func (compute) Validate(sc experiment.Scenario, c Config) error {
	n := c.Data
	bad := experiment.Errorf
	if err := experiment.CheckRacers(c.Racers, racerKinds); err != nil {
		return err
	}
	switch {
	case n.Clients < 1 || n.Clients > experiment.MaxClients:
		return bad("clients=%d: must lie in 1..%d", n.Clients, experiment.MaxClients)
	case c.LocalSteps < 1:
		return bad("local_steps=%d: must be ≥ 1", c.LocalSteps)
	case !(c.Eta > 0):
		return bad("eta=%v: must be > 0", c.Eta)
	case !(n.Lambda > 0):
		return bad("lambda=%v: must be > 0", n.Lambda)
	case !(c.LambdaProx > 0):
		return bad("lambda_prox=%v: must be > 0", c.LambdaProx)
	case n.RFFDim < 1:
		return bad("rff_dim=%d: must be ≥ 1", n.RFFDim)
	case n.DataPath == "" && n.Bandwidth == 0:
		return bad("bandwidth=0: the median heuristic needs a data file; set bandwidth > 0")
	case n.TestPath != "" && n.DataPath == "":
		return bad("test=%q: needs a training file too (--set data=PATH)", n.TestPath)
	case !(n.Holdout > 0 && n.Holdout < 1):
		return bad("holdout=%v: must lie strictly between 0 and 1", n.Holdout)
	}
	if n.DataPath == "" {
		if err := n.synthetic().Validate(); err != nil {
			return bad("%v", err)
		}
	}
	if !sc.IsSweep() {
		if sc.Trials != 0 {
			return bad("trials=%d: %s is not a sweep; sweep presets: newton-local-size, newton-heterogeneity", sc.Trials, sc.Preset)
		}
		return nil
	}
	if n.DataPath != "" {
		return bad("data=%q: the %s sweep runs on the synthetic data of paper 003; race a data file with fedscope run", n.DataPath, sc.Preset)
	}
	if c.Total != 0 && sc.Sweep.Knob != "clients" {
		return bad("total_samples=%d: applies only to the local-size sweep (newton-local-size); set samples instead", c.Total)
	}
	return nil
}

// readable checks that a data file is a regular file that can be opened,
// so that a typo is caught when the knob is set (and a FIFO or a device is
// refused before anything waits on it). The message leaves out the path,
// which the knob's error already names.
func readable(path string) error {
	err := datasets.CheckReadable(path)
	var fe *datasets.FileError
	if errors.As(err, &fe) {
		return errors.New(fe.Msg)
	}
	return err
}
