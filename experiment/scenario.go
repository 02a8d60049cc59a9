// Package experiment describes complete, reproducible runs: scenarios (data,
// racers, rounds, seed), the named presets, the knobs a person may set, racing
// several algorithms side by side on the same data, and CSV / JSON-lines
// export. It validates all user input, so the layers below may assume sane
// parameters.
package experiment

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
)

// Family is the kind of experiment a scenario runs: it decides the data, the
// racers and the metric columns. The zero value is the linear-regression
// family of paper 000.
type Family string

// Families.
const (
	FamilyLinear  Family = ""        // Gaussian linear regression, FedAvg/FedProx (paper 000)
	FamilyMixture Family = "mixture" // federated mixed regression, two-phase clustered FL (paper 004)
	// FamilyFedGain sweeps the federation gain of a data-scarce and a
	// data-rich client on linear federations (paper 000, E000-3/4).
	FamilyFedGain Family = "fedgain"
	// FamilyPolynomial sweeps the integrated MSE of fitting U5 with monomial
	// features on disjoint per-client intervals (paper 000, E000-5).
	FamilyPolynomial Family = "polynomial"
)

// Scenario is everything that determines a run: same scenario, same output.
type Scenario struct {
	Family     Family          // the kind of experiment
	Preset     string          // name of the preset it started from
	Data       datasets.Linear // the federation to generate
	Eta        float64         // step size η shared by the racers
	LocalSteps int             // s of FedAvg racers that do not pin their own
	Batch      int             // minibatch size B, 0 = full batch
	Racers     []RacerSpec     // the algorithms raced side by side
	Rounds     int             // communication rounds T
	Seed       uint64          // master seed of every random draw
	Newton     NewtonConfig    // FamilyNewton: data and ridge model (families.go)
	LowRank    LowRankConfig   // FamilyLowRank: FedLRGD problem (families.go)
	Mixture    MixtureSpec     // data and Phase-1 parameters of the mixture family

	// Sweeps (see sweep.go); zero values for a plain run.
	Sweep    SweepSpec      // the swept knob and its grid; Knob "" for a run
	Trials   int            // trials per swept value, seeds Seed, Seed+1, …
	FedError model.FedError // how the federated error is measured (fedgain family)
	Squared  bool           // federation gain as the ratio of squared errors
}

// Kinds of racer.
const (
	KindFedAvg  = "fedavg"
	KindFedProx = "fedprox"
)

// RacerSpec is one racer as written in `--set algorithms=…`, e.g. "fedavg:s=5".
// Zero fields follow the scenario (η, local steps, batch size).
type RacerSpec struct {
	Kind       string  // KindFedAvg or KindFedProx
	LocalSteps int     // pinned s (FedAvg); 0 follows Scenario.LocalSteps
	Batch      int     // pinned B; -1 follows Scenario.Batch, 0 forces full batch
	Eta        float64 // pinned η; 0 follows Scenario.Eta
	Rank       int     // pinned FedLRGD rank r; 0 follows Scenario.LowRank.Rank
	Mu         float64 // pinned FedProx λ_prox (newton family); 0 follows Scenario.Newton.LambdaProx
}

// String returns the spec in the syntax ParseRacers reads.
func (r RacerSpec) String() string {
	var b strings.Builder
	b.WriteString(r.Kind)
	if r.LocalSteps > 0 {
		fmt.Fprintf(&b, ":s=%d", r.LocalSteps)
	}
	if r.Batch >= 0 {
		fmt.Fprintf(&b, ":b=%d", r.Batch)
	}
	if r.Eta > 0 {
		fmt.Fprintf(&b, ":eta=%s", formatFloat(r.Eta))
	}
	if r.Rank > 0 {
		fmt.Fprintf(&b, ":r=%d", r.Rank)
	}
	if r.Mu > 0 {
		fmt.Fprintf(&b, ":mu=%s", formatFloat(r.Mu))
	}
	return b.String()
}

// Racer is a resolved racer: its legend label and the algorithm to run.
type Racer struct {
	Label     string
	Spec      RacerSpec // with every field resolved against the scenario
	Algorithm algorithms.Algorithm
	Ridge     algorithms.RidgeAlgorithm     // FamilyNewton racers
	Federated algorithms.FederatedAlgorithm // FamilyLowRank racers
	Clustered algorithms.MixtureAlgorithm   // the racer of the mixture family (Algorithm is nil)
}

// Resolve turns the racer specs into algorithms, filling unpinned fields from
// the scenario. Racers that resolve to the same algorithm are kept once.
func (sc Scenario) Resolve() []Racer {
	if sc.Family == FamilyNewton || sc.Family == FamilyLowRank {
		return sc.resolveFamily()
	}
	if sc.Family == FamilyMixture {
		return sc.resolveMixture()
	}
	var out []Racer
	seen := map[RacerSpec]bool{}
	for _, spec := range sc.Racers {
		pinnedB, pinnedEta := spec.Batch >= 0, spec.Eta > 0
		r := spec
		if r.Kind == KindFedAvg && r.LocalSteps == 0 {
			r.LocalSteps = sc.LocalSteps
		}
		if !pinnedB {
			r.Batch = sc.Batch
		}
		if !pinnedEta {
			r.Eta = sc.Eta
		}
		if seen[r] {
			continue
		}
		seen[r] = true
		label := "FedProx"
		var alg algorithms.Algorithm = algorithms.FedProx{Eta: r.Eta, Batch: r.Batch, Seed: sc.Seed}
		if r.Kind == KindFedAvg {
			label = fmt.Sprintf("FedAvg s=%d", r.LocalSteps)
			alg = algorithms.FedAvg{Eta: r.Eta, LocalSteps: r.LocalSteps, Batch: r.Batch, Seed: sc.Seed}
		}
		if pinnedB && r.Batch != sc.Batch {
			if r.Batch == 0 {
				label += " full"
			} else {
				label += fmt.Sprintf(" B=%d", r.Batch)
			}
		}
		if pinnedEta && r.Eta != sc.Eta {
			label += " eta=" + formatFloat(r.Eta)
		}
		out = append(out, Racer{Label: label, Spec: r, Algorithm: alg})
	}
	return out
}

// Validate reports the first problem of the scenario as an *InputError.
func (sc Scenario) Validate() error {
	if sc.Family == FamilyNewton || sc.Family == FamilyLowRank {
		return sc.validateFamily()
	}
	if sc.Family == FamilyMixture {
		return sc.validateMixture()
	}
	if err := sc.Data.Validate(); err != nil {
		return &InputError{Msg: err.Error()}
	}
	switch {
	case len(sc.Racers) == 0:
		return &InputError{Msg: "algorithms: no racer selected; allowed: " + racerSyntax}
	case sc.Rounds < 1 || sc.Rounds > maxRounds:
		return &InputError{Msg: fmt.Sprintf("rounds=%d: must lie in 1..%d", sc.Rounds, maxRounds)}
	case !(sc.Eta > 0):
		return &InputError{Msg: fmt.Sprintf("eta=%v: must be > 0", sc.Eta)}
	case sc.LocalSteps < 1:
		return &InputError{Msg: fmt.Sprintf("local_steps=%d: must be ≥ 1", sc.LocalSteps)}
	}
	return sc.validateSweep()
}

// Summary is the one-line description of the data shown under the title.
func (sc Scenario) Summary() string { return sc.SummaryWith(NoFacts()) }

// SummaryWith is Summary with what is known once the data are prepared: the
// realised Γ beside the prescribed one (PAPERS.md §8: show it in the UI).
func (sc Scenario) SummaryWith(f Facts) string {
	if sc.Family == FamilyPolynomial {
		return sc.polynomialSummary()
	}
	if sc.Family == FamilyNewton || sc.Family == FamilyLowRank {
		return sc.familySummary()
	}
	if sc.Family == FamilyMixture {
		return sc.mixtureSummary()
	}
	d := sc.Data
	var b strings.Builder
	fmt.Fprintf(&b, "M=%d, d=%d, N=%d", d.Clients, d.Dim, d.TotalSamples())
	if d.ScarceClients > 0 {
		fmt.Fprintf(&b, " (%d×%d + %d×%d)", d.ScarceClients, d.ScarceSamples, d.Clients-d.ScarceClients, d.Samples)
	}
	fmt.Fprintf(&b, ", σ=%s, Γ=%s", formatFloat(d.Noise), formatFloat(d.Gamma))
	if d.Gamma > 0 && !math.IsNaN(f.RealisedGamma) {
		fmt.Fprintf(&b, " (realised %.3g)", f.RealisedGamma)
	}
	if d.SubspaceDim > 0 && d.SubspaceDim < d.Dim {
		fmt.Fprintf(&b, ", r=%d", d.SubspaceDim)
	}
	fmt.Fprintf(&b, ", η=%s", formatFloat(sc.Eta))
	if sc.Batch > 0 {
		fmt.Fprintf(&b, ", B=%d", sc.Batch)
	}
	return b.String()
}

// InputError is bad user input: a one-line message naming the key, the value
// and what is allowed. The command line exits with status 2 on it.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
