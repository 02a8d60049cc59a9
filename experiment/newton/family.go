// Package newton is the family of paper 003 (`003_e9274c8da9a67e14.txt`,
// docs/papers.md §4): ridge regression in random-feature space with KRR, DKRR,
// FedNewton, FedAvg and FedProx racers, on the synthetic FedNewton data
// (Figs 3–5) or on a user's data file (Table 3).
package newton

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/experiment"
)

// Family is paper 003's family; its zero value is ready to use.
type Family struct{}

// Name implements experiment.Family.
func (Family) Name() string { return "newton" }

// Paper implements experiment.Family.
func (Family) Paper() string { return "003_e9274c8da9a67e14.txt (docs/papers.md §4)" }

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

func cfg(sc experiment.Scenario) Config { return experiment.Config[Config](sc) }

// Kinds of racer.
const (
	KindKRR       = "krr"
	KindDKRR      = "dkrr"
	KindFedNewton = "fednewton"
	KindFedAvg    = "fedavg"
	KindFedProx   = "fedprox"
)

const (
	maxClients = 10_000
	maxDim     = 2_000
	maxSamples = 1_000_000
	maxSteps   = 1_000
)

var racerKinds = []experiment.RacerKind{
	{Name: KindKRR}, {Name: KindDKRR}, {Name: KindFedNewton},
	{Name: KindFedAvg, Options: []experiment.RacerOption{{Key: "s", Min: 1, Max: maxSteps}, {Key: "eta", Max: experiment.MaxFloat, Real: true}}},
	{Name: KindFedProx, Options: []experiment.RacerOption{{Key: "mu", Max: experiment.MaxFloat, Real: true}}},
}

// synthetic is the generator of the scenario's synthetic data.
func (d Data) synthetic() datasets.Newton {
	return datasets.Newton{Clients: d.Clients, Samples: d.Samples, Dim: d.Dim,
		Alpha: d.Alpha, Beta: d.Beta, NoiseVar: d.NoiseVar, Test: d.TestSize, DirichletC: d.DirichletC}
}

// Validate implements experiment.Family.
func (Family) Validate(sc experiment.Scenario) error {
	c := cfg(sc)
	n := c.Data
	bad := experiment.Errorf
	if err := experiment.CheckRacers(c.Racers, racerKinds); err != nil {
		return err
	}
	switch {
	case n.Clients < 1 || n.Clients > maxClients:
		return bad("clients=%d: must lie in 1..%d", n.Clients, maxClients)
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

// Help implements experiment.Family.
func (Family) Help(sc experiment.Scenario) string {
	return "Test MSE (accuracy for classes) per round, and the distance to centralised KRR on a log axis: " +
		"FedNewton contracts towards KRR by its contraction factor Υ (in the title) per round when Υ < 1, and diverges when Υ > 1; " +
		"DKRR is its round-0 start. The title also says the bandwidth σ² and λ used (tune=true: the best validation score with Υ < 1)."
}

// summary is the line under the title; with the prepared data p it shows
// the bandwidth and λ actually used and FedNewton's contraction factor Υ.
func summary(c Config, p *Prepared) string {
	var b strings.Builder
	n := c.Data
	// Υ first: it decides whether FedNewton converges, and a narrow title
	// is cut at its end.
	if p != nil {
		ups := p.Ridge.Contraction()
		fmt.Fprintf(&b, "Υ=%.3g", ups)
		if ups >= 1 {
			b.WriteString(" ≥ 1: FedNewton diverges")
		}
		b.WriteString(" · ")
	}
	if n.DataPath != "" {
		fmt.Fprintf(&b, "file %s, M=%d clients", shortPath(n.DataPath), n.Clients)
		if n.DirichletC > 0 {
			fmt.Fprintf(&b, ", Dir(%s)", experiment.FormatFloat(n.DirichletC))
		}
	} else {
		fmt.Fprintf(&b, "m=%d clients × %d, d=%d, α=%s, β=%s", n.Clients, n.Samples, n.Dim,
			experiment.FormatFloat(n.Alpha), experiment.FormatFloat(n.Beta))
	}
	fmt.Fprintf(&b, ", RFF %d", n.RFFDim)
	switch {
	case p != nil:
		fmt.Fprintf(&b, ", σ²=%.4g, λ=%s", p.Bandwidth, experiment.FormatFloat(p.Lambda))
		if n.Tune {
			b.WriteString(" (tuned)")
		}
	case n.Tune:
		b.WriteString(", σ² and λ tuned on a validation split")
	case n.Bandwidth > 0:
		fmt.Fprintf(&b, ", σ²=%s, λ=%s", experiment.FormatFloat(n.Bandwidth), experiment.FormatFloat(n.Lambda))
	default:
		fmt.Fprintf(&b, ", σ² from the median distance, λ=%s", experiment.FormatFloat(n.Lambda))
	}
	return b.String()
}

func shortPath(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
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
