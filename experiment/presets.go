package experiment

import (
	"fmt"
	"strings"

	"github.com/fedscope/fedscope/datasets"
)

// Preset is a named scenario, one per figure of the papers plus the default
// demonstration.
type Preset struct {
	Name    string
	Summary string // one line for `fedscope presets`
	build   func() Scenario
}

// Scenario returns a fresh copy of the preset's scenario.
func (p Preset) Scenario() Scenario {
	sc := p.build()
	sc.Preset = p.Name
	sc.Racers = append([]RacerSpec(nil), sc.Racers...)
	return sc
}

// DefaultPreset opens when fedscope starts without arguments.
const DefaultPreset = "paradox"

// Presets lists the presets in the order `fedscope presets` shows them.
func Presets() []Preset { return presets }

var presets = []Preset{
	{
		Name:    "paradox",
		Summary: "FedAvg s=1,5,10 and FedProx: stalled gradient norms, near-optimal estimates (paper 000, Fig. 1)",
		build:   paradox,
	},
	{
		Name:    "minibatch",
		Summary: "the paradox with minibatch local updates, B=50 (paper 000, Figs. 2–3)",
		build: func() Scenario {
			sc := paradox()
			sc.Batch = 50
			return sc
		},
	},
	{
		Name:    "mixture",
		Summary: "clustered FL for mixed regression: FedMD + FedAvg against a random start, live cluster assignments (paper 004)",
		build:   mixture,
	},
	{
		Name:    "fedgain-model",
		Summary: "sweep: federation gain of a data-scarce and a data-rich client against model heterogeneity Γ (paper 000, Fig. 4)",
		build:   fedGainModel,
	},
	{
		Name:    "fedgain-covariate",
		Summary: "sweep: federation gain against the covariate subspace dimension r = 1…100 (paper 000, Fig. 5)",
		build:   fedGainCovariate,
	},
	{
		Name:    "polynomial",
		Summary: "sweep: MSE and 1/MSE of fitting U5 on disjoint client intervals against N = 20…200 (paper 000, Fig. 6)",
		build:   polynomialSweep,
	},
}

// paradox is E000-1 (PAPERS.md §1.9): M = 25, d = 100, n_i = 500, σ = 0.5,
// η = 0.1, one common θ*, racers FedAvg s = 1, 5, 10 and FedProx, T = 150 (§8).
// FedAvg s=10 follows the local_steps knob so that −/+ change it live.
func paradox() Scenario {
	return Scenario{
		Data:       datasets.Linear{Clients: 25, Dim: 100, Samples: 500, Noise: 0.5},
		Eta:        0.1,
		LocalSteps: 10,
		Batch:      0,
		Racers: []RacerSpec{
			{Kind: KindFedAvg, LocalSteps: 1, Batch: -1},
			{Kind: KindFedAvg, LocalSteps: 5, Batch: -1},
			{Kind: KindFedAvg, Batch: -1},
			{Kind: KindFedProx, Batch: -1},
		},
		Rounds: 150,
		Seed:   1,
	}
}

// LookupPreset finds a preset by name.
func LookupPreset(name string) (Preset, error) {
	names := make([]string, len(presets))
	for i, p := range presets {
		if p.Name == name {
			return p, nil
		}
		names[i] = p.Name
	}
	return Preset{}, &InputError{Msg: fmt.Sprintf("unknown preset %q; allowed: %s", name, strings.Join(names, ", "))}
}
