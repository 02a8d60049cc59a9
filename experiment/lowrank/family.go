// Package lowrank is the family of paper 001 (`001_7cbbc8d4aab6065c.txt`,
// docs/papers.md §2): FedLRGD against its local-SGD FedAvg baseline on the
// soft-label logistic loss of Appendix A, with the suboptimality drawn
// against the federated oracle complexity.
package lowrank

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// Family is paper 001's family.
var Family = experiment.Define(experiment.Definition[Config, *model.Federated]{
	Name:      "lowrank",
	Paper:     "001_7cbbc8d4aab6065c.txt (docs/papers.md §2)",
	Compute:   compute{},
	Present:   present{},
	Lessons:   lessons,
	Reproduce: reproduction(),
	Sweeps:    sweeps{},
})

// compute is what the engine runs (experiment.Computation), present what
// the front ends say (experiment.Presentation), sweeps how the complexity
// sweep is evaluated (experiment.Sweeps).
type (
	compute struct{}
	present struct{}
	sweeps  struct{}
)

// Config is the family's part of a scenario (docs/papers.md §8, 001): m clients
// with s samples in d features and a server with Server samples; FedAvg's
// b is LocalSteps.
type Config struct {
	Clients, Samples, Dim int
	// Server is the number R of samples the server holds, fixed apart from
	// the racers so that a racer's objective and costs do not depend on
	// which other racers run: a FedLRGD racer of rank r ≤ R uses r of them
	// as interpolation nodes (R = r is the paper's setting).
	Server     int
	LocalSteps int     // b of FedAvg racers that do not pin s
	Rank       int     // r of FedLRGD racers that do not pin r=
	Iters      int     // S
	Phi        float64 // φ
	Mu         float64 // μ of the logistic loss
	Shift      float64 // client covariate shift in [0,1]
	SVDTol     float64 // FedLRGD's relative SVD cut-off; 0 = algorithms.DefaultSVDTol
	Epsilon    float64 // target suboptimality ε of the complexity sweep
	Racers     []experiment.RacerSpec
}

// Kinds of racer.
const (
	KindFedLRGD = "fedlrgd"
	KindFedAvg  = "fedavg"
)

// Limits of the knobs beyond experiment's: the soft-label problem is small.
const (
	maxDim  = 100
	maxRank = 200
)

var racerKinds = []experiment.RacerKind{
	{Name: KindFedLRGD, Options: []experiment.RacerOption{{Key: "r", Min: 1, Max: maxRank}}},
	{Name: KindFedAvg, Options: []experiment.RacerOption{{Key: "s", Min: 1, Max: experiment.MaxSteps}}},
}

// Ladders of the live keys.
var (
	rankLadder  = []float64{3, 5, 10, 20, 40} // docs/papers.md §8, 001
	stepsLadder = []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200}
)

// Presets implements experiment.Computation.
func (compute) Presets() []experiment.Preset {
	return []experiment.Preset{
		{Name: "lowrank", Summary: "FedLRGD r=3,5,10,40 vs FedAvg: suboptimality against federated oracle complexity (paper 001)", Build: lowRank},
		{Name: "lowrank-complexity", Summary: "sweep: oracle complexity Γ to reach ε of FedLRGD and FedAvg, with the paper's analytic curves (paper 001, Thm 2–3)", Build: lowRankComplexity},
	}
}

// lowRank is the FedLRGD preset of docs/papers.md §8 (paper 001): soft-label
// logistic loss with μ = 0.1 in d = 5, m = 100 clients with s = 50 samples,
// a server with R = 40 samples, FedLRGD with r = 3, 5, 10 (follows `rank`)
// and 40, S = 200, step 1/L1, φ = 100, τ = 1, against FedAvg with b = 10
// local SGD steps; 250 epochs (enough for r = 40: r + 1 + S = 241).
func lowRank() experiment.Scenario {
	return experiment.Scenario{Family: Family, Rounds: 250, Seed: 1, Config: lowRankConfig()}
}

// lowRankConfig is the configuration of the lowrank preset.
func lowRankConfig() Config {
	return Config{Clients: 100, Samples: 50, Dim: 5, Server: 40, LocalSteps: 10, Rank: 10, Iters: 200, Phi: 100, Mu: 0.1,
		Epsilon: 1e-4,
		Racers: []experiment.RacerSpec{
			{Kind: KindFedLRGD, Opts: []experiment.RacerOpt{{Key: "r", Value: 3}}},
			{Kind: KindFedLRGD, Opts: []experiment.RacerOpt{{Key: "r", Value: 5}}},
			{Kind: KindFedLRGD},
			{Kind: KindFedLRGD, Opts: []experiment.RacerOpt{{Key: "r", Value: 40}}},
			{Kind: KindFedAvg},
		}}
}

// Knobs implements experiment.Computation.
func (compute) Knobs(sc experiment.Scenario, _ Config) []experiment.Knob {
	out := []experiment.Knob{
		experiment.IntKnob("local_steps", "FedAvg local SGD steps b of racers that do not pin s", 1, experiment.MaxSteps, func(c *Config) *int { return &c.LocalSteps }).
			WithLive(experiment.Live{Down: []string{"-", "_"}, Up: []string{"+", "="}, Name: "b", Desc: "FedAvg local SGD steps b",
				Step: experiment.LadderStep(stepsLadder, func(c *Config) *int { return &c.LocalSteps })}),
		experiment.IntKnob("clients", "number of clients m", 1, experiment.MaxClients, func(c *Config) *int { return &c.Clients }),
		experiment.IntKnob("dim", "feature dimension d", 1, maxDim, func(c *Config) *int { return &c.Dim }),
		experiment.IntKnob("samples", "samples s per client", 1, experiment.MaxSamples, func(c *Config) *int { return &c.Samples }),
		experiment.IntKnob("server", "samples R the server holds (≥ every FedLRGD rank r; R = r is the paper's setting)", 1, maxRank, func(c *Config) *int { return &c.Server }),
		experiment.IntKnob("rank", "FedLRGD rank r of racers that do not pin r (at most server)", 1, maxRank, func(c *Config) *int { return &c.Rank }).
			WithLive(experiment.Live{Down: []string{"h"}, Up: []string{"H"}, Name: "rank", Desc: "FedLRGD rank r",
				Step: experiment.LadderStep(rankLadder, func(c *Config) *int { return &c.Rank })}),
		experiment.IntKnob("gd_iters", "FedLRGD inexact gradient steps S", 1, 100_000, func(c *Config) *int { return &c.Iters }),
		experiment.FloatKnob("phi", "φ, cost of one upload in gradient evaluations", true, func(c *Config) *float64 { return &c.Phi }),
		experiment.FloatKnob("mu", "μ of the logistic loss", false, func(c *Config) *float64 { return &c.Mu }),
		experiment.FloatKnob("shift", "client covariate shift in [0,1]", true, func(c *Config) *float64 { return &c.Shift }),
		experiment.FloatKnob("svd_tol", "FedLRGD's relative SVD cut-off of G⁽ⁱ⁾, below 1 (0 = the default 1e-4)", true, func(c *Config) *float64 { return &c.SVDTol }),
		experiment.FloatKnob("epsilon", "target suboptimality ε (what lowrank-complexity sweeps; a dashed level on the run's chart)", false,
			func(c *Config) *float64 { return &c.Epsilon }),
		experiment.RacersKnob(racerKinds, func(c *Config) *[]experiment.RacerSpec { return &c.Racers }),
	}
	if sc.IsSweep() {
		out = append(out, experiment.TrialsKnob(), sweepKnob)
	}
	return out
}

// Validate implements experiment.Computation.
func (compute) Validate(sc experiment.Scenario, c Config) error {
	bad := experiment.Errorf
	if err := experiment.CheckRacers(c.Racers, racerKinds); err != nil {
		return err
	}
	switch {
	case c.Clients < 1 || c.Clients > experiment.MaxClients:
		return bad("clients=%d: must lie in 1..%d", c.Clients, experiment.MaxClients)
	case c.LocalSteps < 1:
		return bad("local_steps=%d: must be ≥ 1", c.LocalSteps)
	case c.Dim < 1 || c.Dim > maxDim:
		return bad("dim=%d: must lie in 1..%d", c.Dim, maxDim)
	case c.Samples < 1:
		return bad("samples=%d: must be ≥ 1", c.Samples)
	case !(c.Mu > 0):
		return bad("mu=%v: must be > 0", c.Mu)
	case c.Shift > 1:
		return bad("shift=%v: must lie in [0, 1]", c.Shift)
	case c.Iters < 1:
		return bad("gd_iters=%d: must be ≥ 1", c.Iters)
	case c.Server < 1 || c.Server > maxRank:
		return bad("server=%d: must lie in 1..%d", c.Server, maxRank)
	case c.SVDTol >= 1:
		return bad("svd_tol=%v: must lie in [0, 1) (0 = the default %g)", c.SVDTol, algorithms.DefaultSVDTol)
	case !(c.Epsilon > 0):
		return bad("epsilon=%v: must be > 0", c.Epsilon)
	}
	for _, r := range resolve(c) {
		if r.spec.Kind == KindFedLRGD && r.rank > c.Server {
			return bad("%s: the rank r=%d exceeds the server's R=%d samples (its interpolation nodes); set server ≥ %d or a smaller rank",
				r.label, r.rank, c.Server, r.rank)
		}
	}
	if !sc.IsSweep() && sc.Trials != 0 {
		return bad("trials=%d: %s is not a sweep; sweep presets: lowrank-complexity", sc.Trials, sc.Preset)
	}
	if err := softLabels(c).Validate(); err != nil {
		return bad("%v", err)
	}
	return nil
}

// metrics are the per-epoch metrics (docs/papers.md §2.3, §6).
var metrics = []experiment.Metric{
	{Name: "suboptimality", Caption: "suboptimality F(θ_t) − F*", Short: "F−F*", Log: true},
	{Name: "oracle", Caption: "federated oracle complexity Γ", Short: "Γ", Log: true, XAxis: true},
	{Name: "comm_up", Caption: "numbers uploaded", Short: "up"},
	{Name: "comm_down", Caption: "numbers downloaded", Short: "down"},
	{Name: "grad_norm", Caption: "gradient norm ‖∇F(θ_t)‖", Short: "‖∇F‖", Log: true},
	{Name: "est_error", Caption: "distance to the minimiser ‖θ_t − θ_opt‖", Short: "‖θ−θ_opt‖", Log: true},
}

// Metrics implements experiment.Computation.
func (compute) Metrics(experiment.Scenario, Config) []experiment.Metric { return metrics }

// resolved is a racer with its parameters filled in.
type resolved struct {
	spec  experiment.RacerSpec
	label string
	rank  int // FedLRGD
	steps int // FedAvg
}

// resolve fills the racers' unpinned parameters; duplicates are kept once.
func resolve(c Config) []resolved {
	var out []resolved
	seen := map[string]bool{}
	for _, spec := range c.Racers {
		r := resolved{spec: spec}
		switch spec.Kind {
		case KindFedLRGD:
			v, _ := spec.Opt("r")
			if r.rank = int(v); r.rank == 0 {
				r.rank = c.Rank
			}
			r.label = fmt.Sprintf("FedLRGD r=%d", r.rank)
		case KindFedAvg:
			v, _ := spec.Opt("s")
			if r.steps = int(v); r.steps == 0 {
				r.steps = c.LocalSteps
			}
			r.label = fmt.Sprintf("FedAvg b=%d", r.steps)
		default:
			continue
		}
		if seen[r.label] {
			continue
		}
		seen[r.label] = true
		out = append(out, r)
	}
	return out
}

// Racers implements experiment.Computation.
func (compute) Racers(sc experiment.Scenario, c Config) []experiment.RacerOf[*model.Federated] {
	var out []experiment.RacerOf[*model.Federated]
	for _, r := range resolve(c) {
		var alg algorithms.FederatedAlgorithm = algorithms.LocalSGD{Steps: r.steps, Phi: c.Phi, Seed: sc.Seed}
		if r.spec.Kind == KindFedLRGD {
			alg = algorithms.FedLRGD{Rank: r.rank, Iters: c.Iters, Phi: c.Phi, Seed: sc.Seed, Tol: c.SVDTol}
		}
		out = append(out, experiment.RacerOf[*model.Federated]{Label: r.label, Spec: r.spec, Run: runner(alg)})
	}
	return out
}

// runner adapts a racer to the engine. Its last epoch is held back until
// the racer stops, so that it can carry a warning when the racer ends
// above its start or more than twice above its own best (endWarning).
func runner(alg algorithms.FederatedAlgorithm) func(context.Context, *model.Federated, int, func(experiment.Round)) error {
	return func(ctx context.Context, data *model.Federated, rounds int, emit func(experiment.Round)) error {
		var held *experiment.Round
		w := endWatch{best: math.Inf(1), cause: "a constant-step SGD fluctuates about its noise floor"}
		if _, ok := alg.(algorithms.FedLRGD); ok {
			w.cause = "the descent settled at a fixed point of the interpolated gradient, not at F's minimiser (the smaller the rank, the farther; its growth rule cannot see this)"
		}
		err := alg.Run(ctx, data, rounds, func(r algorithms.EpochRound) {
			if held != nil {
				emit(*held)
			}
			held = &experiment.Round{Index: r.Index, Theta: r.Theta, Warning: r.Warning,
				Values: []float64{r.Subopt, r.Oracle, r.CommUp, r.CommDown, r.GradNorm, r.OptDist}}
			w.see(r.Index, r.Subopt)
		})
		if held != nil && ctx.Err() == nil {
			if warn := w.warning(); warn != "" {
				held.Warning = strings.TrimPrefix(held.Warning+"; "+warn, "; ")
			}
			emit(*held)
		}
		return err
	}
}

// endWatch follows a racer's suboptimality: its first value, its best and
// its last.
type endWatch struct {
	start, best, last float64
	bestAt, n         int
	cause             string // why such a racer can end above its best
}

func (w *endWatch) see(epoch int, v float64) {
	if w.n == 0 {
		w.start = v
	}
	w.n++
	w.last = v
	if v < w.best {
		w.best, w.bestAt = v, epoch
	}
}

// endGrowth is how many times above its own best a racer may end without a
// warning.
const endGrowth = 2

// warning says when the racer ended above its start, or more than
// endGrowth times above its own best: a descent that settled at a wrong
// point (FedLRGD's interpolated gradient has a fixed point that is not F's
// minimiser when the rank is too small, and the growth rule of its
// descent cannot see it), or SGD noise. "" otherwise.
func (w *endWatch) warning() string {
	switch {
	case w.n < 2:
		return ""
	case w.last > w.start:
		return fmt.Sprintf("ends at F − F* = %.3g, above its start %.3g (its best was %.3g at epoch %d): %s", w.last, w.start, w.best, w.bestAt, w.cause)
	case w.last > endGrowth*w.best:
		return fmt.Sprintf("ends at F − F* = %.3g, %.1f× above its own best %.3g (epoch %d): %s", w.last, w.last/w.best, w.best, w.bestAt, w.cause)
	}
	return ""
}

// softLabels is the data configuration of the scenario.
func softLabels(c Config) datasets.SoftLabels {
	return datasets.SoftLabels{Clients: c.Clients, Samples: c.Samples, Dim: c.Dim, Server: c.Server, Shift: c.Shift}
}

// DataKey implements experiment.Computation.
func (compute) DataKey(sc experiment.Scenario, c Config) string {
	return fmt.Sprintf("%#v|%v|%d", softLabels(c), c.Mu, sc.Seed)
}

// Prepare implements experiment.Computation: the data and F* of the problem.
func (compute) Prepare(_ context.Context, sc experiment.Scenario, c Config, _ func(experiment.Progress)) (*model.Federated, error) {
	d, err := softLabels(c).Generate(sc.Seed)
	if err != nil {
		return nil, &experiment.InputError{Msg: err.Error()}
	}
	loss := model.Logistic{Dim: d.Dim, Mu: c.Mu}
	return model.NewFederated(loss, d.Dim+1, d.Server, d.Clients, 1), nil
}
