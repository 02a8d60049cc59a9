// Package bound is the family of paper 002 (`002_180ceb86164b5329.txt`,
// docs/papers.md §3 and §8): FedAvg with τ local SGD steps and uniform averaging
// on the notes' toy classifier, with the convergence bound of Thm 2.1 and
// the client-drift lemma drawn over the measured curves.
//
// The family is self-contained — its data, its algorithm and its bound live
// here — so that adding it to fedscope touched only this package, the
// registry and the README.
package bound

import (
	"context"
	"fmt"
	"math"

	"github.com/fedscope/fedscope/experiment"
)

// Family is paper 002's family.
var Family = experiment.Define(experiment.Definition[Config, *Data]{
	Name:      "bound",
	Paper:     "002_180ceb86164b5329.txt (docs/papers.md §3)",
	Compute:   compute{},
	Present:   present{},
	Lessons:   lessons,
	Reproduce: reproduction(),
})

// compute is what the engine runs (experiment.Computation), present what
// the front ends say (experiment.Presentation).
type (
	compute struct{}
	present struct{}
)

// Config is the family's part of a scenario.
type Config struct {
	Clients, Samples int
	DirichletC       float64 // Dir(c, c) class proportions per client: 100 ≈ IID, 0.1 highly skewed
	Eta              float64 // step size η; 0 means 1/(4L), the largest Thm 2.1 allows
	Tau              int     // local SGD steps τ of racers that do not pin tau=
	Racers           []experiment.RacerSpec
}

// KindFedAvg is the one algorithm of the family.
const KindFedAvg = "fedavg"

// racerKinds: `fedavg:batch=full` takes full local gradients instead of
// single samples (docs/papers.md §8, 002: its drift is the heterogeneity's
// alone).
var racerKinds = []experiment.RacerKind{
	{Name: KindFedAvg, Options: []experiment.RacerOption{{Key: "tau", Min: 1, Max: 1000}, {Key: "eta", Max: experiment.MaxFloat, Real: true},
		{Key: "batch", Words: []string{"full"}}}},
}

// fullBatch is the racer spec of FedAvg with local full-gradient steps.
var fullBatch = experiment.RacerSpec{Kind: KindFedAvg, Opts: []experiment.RacerOpt{{Key: "batch", Word: "full"}}}

// Ladders of the live keys.
var (
	etaLadder = experiment.Decades([]float64{1, 1.5, 2, 3, 5, 7}, -4, 1)
	tauLadder = []float64{1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50, 100}
	// cLadder runs from IID (100) to highly skewed (0.05); H moves down it.
	cLadder = []float64{0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 100}
)

// Presets implements experiment.Computation.
func (compute) Presets() []experiment.Preset {
	return []experiment.Preset{{Name: "fedavg-bound",
		Summary: "FedAvg with τ local SGD steps under the convergence bound of the lecture notes, and its client drift (paper 002, Thm 2.1)",
		Build:   fedavgBound}}
}

// fedavgBound is the toy example of docs/papers.md §8 (002): M = 10 clients with
// 100 points each, class shares from Dir(1, 1), τ = 5 single-sample SGD
// steps, η = 1/(4L), uniform averaging, T = 100 rounds; raced against the
// same FedAvg with local full-gradient steps, whose drift is due to the
// heterogeneity alone (§8, 002: with single samples the drift is the
// sampling noise's).
func fedavgBound() experiment.Scenario {
	return experiment.Scenario{
		Family: Family,
		Rounds: 100,
		Seed:   1,
		Config: Config{Clients: 10, Samples: 100, DirichletC: 1, Tau: 5, Racers: []experiment.RacerSpec{{Kind: KindFedAvg}, fullBatch}},
	}
}

// Knobs implements experiment.Computation.
func (compute) Knobs(experiment.Scenario, Config) []experiment.Knob {
	return []experiment.Knob{
		experiment.FloatKnob("eta", "step size η (0 = 1/(4L), the largest Thm 2.1 allows)", true, func(c *Config) *float64 { return &c.Eta }).
			WithLive(experiment.Live{Down: []string{"["}, Up: []string{"]"}, Name: "η", Desc: "step size η", Step: stepEta}),
		experiment.IntKnob("local_steps", "local SGD steps τ of racers that do not pin tau", 1, 1000, func(c *Config) *int { return &c.Tau }).
			WithLive(experiment.Live{Down: []string{"-", "_"}, Up: []string{"+", "="}, Name: "τ", Desc: "local steps τ",
				Step: experiment.LadderStep(tauLadder, func(c *Config) *int { return &c.Tau })}),
		experiment.IntKnob("clients", "number of clients M", 1, 1000, func(c *Config) *int { return &c.Clients }),
		experiment.IntKnob("samples", "points per client", 1, 100_000, func(c *Config) *int { return &c.Samples }),
		experiment.FloatKnob("dirichlet_c", "heterogeneity: client class shares from Dir(c, c) (100 ≈ IID, 0.1 highly skewed)", false,
			func(c *Config) *float64 { return &c.DirichletC }).
			WithLive(experiment.Live{Down: []string{"h"}, Up: []string{"H"}, Name: "Dir(c)", Desc: "class skew Dir(c) (heterogeneity: H skews more)",
				Step: experiment.StepOf(func(_ experiment.Scenario, c *Config, up bool) error {
					// More heterogeneity is a smaller c.
					c.DirichletC = experiment.StepLadder(cLadder, c.DirichletC, !up)
					return nil
				})}),
		experiment.RacersKnob(racerKinds, func(c *Config) *[]experiment.RacerSpec { return &c.Racers }),
	}
}

// stepEta moves η along its ladder, from 1/(4L) when η is automatic.
var stepEta = experiment.StepOf(func(sc experiment.Scenario, c *Config, up bool) error {
	cur := c.Eta
	if cur == 0 {
		cur = generate(c.Clients, c.Samples, c.DirichletC, sc.Seed).stepLimit()
	}
	c.Eta = experiment.StepLadder(etaLadder, cur, up)
	return nil
})

// Validate implements experiment.Computation.
func (compute) Validate(_ experiment.Scenario, c Config) error {
	if err := experiment.CheckRacers(c.Racers, racerKinds); err != nil {
		return err
	}
	switch {
	case c.Clients < 1:
		return experiment.Errorf("clients=%d: must be ≥ 1", c.Clients)
	case c.Samples < 1:
		return experiment.Errorf("samples=%d: must be ≥ 1", c.Samples)
	case !(c.DirichletC > 0) || math.IsInf(c.DirichletC, 0):
		return experiment.Errorf("dirichlet_c=%v: must be a finite number > 0", c.DirichletC)
	case c.Tau < 1:
		return experiment.Errorf("local_steps=%d: must be ≥ 1", c.Tau)
	case !(c.Eta >= 0):
		return experiment.Errorf("eta=%v: must be ≥ 0", c.Eta)
	}
	return nil
}

// metrics are the per-round metrics (docs/papers.md §3.2, §8).
var metrics = []experiment.Metric{
	{Name: "subopt", Caption: "suboptimality F(x_t) − F*", Short: "F−F*", Log: true},
	{Name: "subopt_avg", Caption: "running average of F(x̄) − F* over all local steps", Short: "avg F(x̄)−F*", Log: true, Bound: "bound"},
	{Name: "bound", Caption: "Thm 2.1 bound D²/(2ητT) + ησ²/M + 4τη²Lσ² + 18τ²η²Lζ²", Short: "bound", Log: true},
	{Name: "drift", Caption: "client drift (1/M) Σ‖x_i − x̄‖², largest over the round's local steps", Short: "drift", Log: true, Bound: "drift_bound"},
	{Name: "drift_bound", Caption: "drift bound 18τ²η²ζ² + 4τη²σ²", Short: "drift bound", Log: true},
	{Name: "accuracy", Caption: "training accuracy of sign(xᵀw)", Short: "acc"},
}

// Metrics implements experiment.Computation.
func (compute) Metrics(experiment.Scenario, Config) []experiment.Metric { return metrics }

// settings resolves the racers: unpinned τ and η follow the scenario (η = 0
// is 1/(4L) of the data, which needs d); racers that resolve to the same
// setting are kept once.
func settings(c Config, stepLimit func() float64) []Setting {
	var out []Setting
	seen := map[string]bool{}
	for _, spec := range c.Racers {
		t, _ := spec.Opt("tau")
		eta, pinned := spec.Opt("eta")
		_, full := spec.Opt("batch")
		tau := int(t)
		if tau == 0 {
			tau = c.Tau
		}
		if !pinned {
			eta = c.Eta
		}
		label := fmt.Sprintf("FedAvg τ=%d", tau)
		if full {
			label += " full"
		}
		if pinned && eta != c.Eta {
			label += " η=" + experiment.FormatFloat(eta)
		}
		if seen[label] {
			continue
		}
		seen[label] = true
		if eta == 0 && stepLimit != nil {
			eta = stepLimit()
		}
		out = append(out, Setting{Label: label, Spec: spec, Eta: eta, Tau: tau, Full: full})
	}
	return out
}

// Racers implements experiment.Computation: each racer replays its trace,
// which Prepare ran (the bound's constants need every racer's iterates
// before the first round is drawn).
func (compute) Racers(sc experiment.Scenario, c Config) []experiment.RacerOf[*Data] {
	var out []experiment.RacerOf[*Data]
	for i, s := range settings(c, nil) {
		out = append(out, experiment.RacerOf[*Data]{Label: s.Label, Spec: s.Spec, Run: runner(i)})
	}
	return out
}

// runner replays racer i's trace and reports the bounds beside the
// measured values, after round 0: the start x⁽⁰⁾ = 0 (docs/papers.md §8),
// where no local step has run yet, so the running average, its bound
// (D²/(2ητT) at T = 0) and the drift are not measured there.
func runner(i int) func(context.Context, *Data, int, func(experiment.Round)) error {
	return func(ctx context.Context, d *Data, rounds int, emit func(experiment.Round)) error {
		tr := d.Traces[i]
		m := len(d.Clients)
		drift := DriftBound(d, tr.Eta, tr.Tau, tr.Full)
		x0 := make([]float64, dim)
		nan := math.NaN()
		emit(experiment.Round{Index: 0, Theta: x0, Values: []float64{d.F(x0) - d.FStar, nan, nan, nan, drift, d.accuracy(x0)}})
		for _, r := range tr.Rounds {
			if r.index > rounds {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			emit(experiment.Round{Index: r.index, Theta: r.x, Values: []float64{r.subopt, r.avg,
				Bound(d, tr.Eta, tr.Tau, r.index, m, tr.Full), r.drift, drift, r.accuracy}})
		}
		return tr.Err
	}
}

// DataKey implements experiment.Computation: the data and the run, whose
// iterates set the region of the constants.
func (compute) DataKey(sc experiment.Scenario, c Config) string {
	return fmt.Sprintf("%d|%d|%v|%d|%d|%v", c.Clients, c.Samples, c.DirichletC, sc.Seed, sc.Rounds, settings(c, nil))
}

// Prepare implements experiment.Computation: the federation, every racer's
// run on it, and the constants of Thm 2.1 over the region the runs visited.
func (compute) Prepare(ctx context.Context, sc experiment.Scenario, c Config, _ func(experiment.Progress)) (*Data, error) {
	d := generate(c.Clients, c.Samples, c.DirichletC, sc.Seed)
	for _, s := range settings(c, d.stepLimit) {
		tr, err := fedAvg(ctx, d, s, sc.Rounds, sc.Seed)
		if err != nil {
			return nil, err
		}
		d.Traces = append(d.Traces, tr)
	}
	d.region(d.Traces)
	return d, nil
}
