package newton

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// metrics are the per-round metrics of a run (docs/papers.md §4.7, §6).
var metrics = []experiment.Metric{
	{Name: "test_mse", Caption: "test MSE", Short: "MSE"},
	{Name: "test_acc", Caption: "test accuracy", Short: "acc"},
	{Name: "grad_norm", Caption: "gradient norm ‖H W_t − b‖", Short: "‖∇‖", Log: true},
	{Name: "krr_dist", Caption: "distance to KRR ‖W_t − W_KRR‖", Short: "‖W−W_KRR‖", Log: true},
}

// Metrics implements experiment.Computation.
func (compute) Metrics(experiment.Scenario, Config) []experiment.Metric { return metrics }

// Prepared is the data of a run, shared read-only by its racers and re-runs.
type Prepared struct {
	Ridge *model.Ridge
	// Bandwidth σ² and λ the problem was built with, and how each was
	// chosen: "given", "median heuristic" or "tuned".
	Bandwidth, Lambda       float64
	HowBandwidth, HowLambda string
	Notes                   []string // how defaults were resolved (the tuning's choice and why)
	Tuning                  *Tuning  // what tuning tried; nil when not tuned

	// Undamped, when not nil, is the problem the undamped FedNewton runs
	// on: tuning chose a setting with Υ < 1 for it apart from the
	// validation-best setting every other racer uses (see Tuning).
	Undamped *Problem

	specOnce     sync.Once
	muMin, muMax float64 // the extreme eigenvalues of AH (model.Ridge.NewtonSpectrum)

	// The rounds of the racers already run on this problem, by racer id
	// and number of rounds (cached): a key press that changes one racer's
	// parameters re-runs that racer only.
	trajMu sync.Mutex
	traj   map[string]trajectory
	kept   int // the numbers the trajectories hold
}

// trajectory is a racer's rounds and how its run ended.
type trajectory struct {
	rounds []experiment.Round
	err    error
}

// maxTrajectories and maxKeptFloats bound the trajectories a problem keeps
// (their number, and the numbers of their models and metrics: 16 MB); past
// either bound they are dropped and kept again from the next run on.
const (
	maxTrajectories = 32
	maxKeptFloats   = 1 << 21
)

// cached wraps a racer's run so that its rounds on a problem are computed
// once per racer id and number of rounds, and replayed after. The id holds
// every parameter of the racer (the algorithm and what it pins or takes
// from the scenario), and everything else a racer reads is the problem, so
// a replay emits exactly the rounds a new run would. A run cut short by its
// context is not kept.
func cached(id string, run func(context.Context, *Prepared, int, func(experiment.Round)) error) func(context.Context, *Prepared, int, func(experiment.Round)) error {
	return func(ctx context.Context, data *Prepared, rounds int, emit func(experiment.Round)) error {
		key := fmt.Sprintf("%s/%d", id, rounds)
		data.trajMu.Lock()
		t, ok := data.traj[key]
		data.trajMu.Unlock()
		if ok {
			replays.Add(1)
			for _, r := range t.rounds {
				if err := ctx.Err(); err != nil {
					return err
				}
				emit(copyRound(r))
			}
			return t.err
		}
		// The rounds emitted are values nobody modifies (experiment.Table),
		// so they are kept as they are and copied when replayed.
		var rec []experiment.Round
		size := 0
		err := run(ctx, data, rounds, func(r experiment.Round) {
			rec = append(rec, r)
			size += len(r.Theta) + len(r.Values) + len(r.Assign)
			emit(r)
		})
		if ctx.Err() == nil && size <= maxKeptFloats {
			data.trajMu.Lock()
			if data.traj == nil || len(data.traj) >= maxTrajectories || data.kept+size > maxKeptFloats {
				data.traj, data.kept = map[string]trajectory{}, 0
			}
			data.traj[key] = trajectory{rounds: rec, err: err}
			data.kept += size
			data.trajMu.Unlock()
		}
		return err
	}
}

// replays counts the runs served from kept rounds (for the tests).
var replays atomic.Int64

// copyRound returns r with its own slices.
func copyRound(r experiment.Round) experiment.Round {
	r.Theta = append([]float64(nil), r.Theta...)
	r.Values = append([]float64(nil), r.Values...)
	r.Assign = append([]int(nil), r.Assign...)
	return r
}

// Problem is a ridge problem and the setting it was built at.
type Problem struct {
	Ridge             *model.Ridge
	Bandwidth, Lambda float64
}

// spectrumTol is the accuracy of μ_min and μ_max.
const spectrumTol = 1e-6

// Spectrum returns μ_min and μ_max of AH on the run's problem, computed once.
func (p *Prepared) Spectrum() (muMin, muMax float64) {
	p.specOnce.Do(func() { p.muMin, p.muMax, _ = p.Ridge.NewtonSpectrum(spectrumTol) })
	return p.muMin, p.muMax
}

// Damped returns the damped FedNewton's step η = 2/(1 + μ_max) and its
// per-round contraction (model.DampedRate).
func (p *Prepared) Damped() (eta, rate float64) {
	muMin, muMax := p.Spectrum()
	eta = model.DampedStep(muMax)
	return eta, model.DampedRate(eta, muMin, muMax)
}

// Racers implements experiment.Computation: unpinned parameters follow the
// scenario; racers that resolve to the same algorithm are kept once.
func (compute) Racers(_ experiment.Scenario, c Config) []experiment.RacerOf[*Prepared] {
	var out []experiment.RacerOf[*Prepared]
	seen := map[string]bool{}
	for _, spec := range c.Racers {
		var label string
		var alg algorithms.RidgeAlgorithm
		id := spec.Kind
		switch spec.Kind {
		case KindKRR:
			label, alg = "KRR", algorithms.KRR{}
		case KindDKRR:
			label, alg = "DKRR", algorithms.DKRR{}
		case KindFedNewton:
			label, alg = "FedNewton", algorithms.FedNewton{}
			if _, damped := spec.Opt("damped"); damped {
				label, id = "FedNewton damped", "fednewton/damped"
				out = appendRacer(out, seen, id, experiment.RacerOf[*Prepared]{Label: label, Spec: spec, Run: cached(id, dampedRunner)})
				continue
			}
			out = appendRacer(out, seen, id, experiment.RacerOf[*Prepared]{Label: label, Spec: spec, Run: cached(id, undampedRunner)})
			continue
		case KindFedAvg:
			s, _ := spec.Opt("s")
			eta, pinned := spec.Opt("eta")
			steps := int(s)
			if steps == 0 {
				steps = c.LocalSteps
			}
			if !pinned {
				eta = c.Eta
			}
			label = fmt.Sprintf("FedAvg s=%d", steps)
			if pinned && eta != c.Eta {
				label += " eta=" + experiment.FormatFloat(eta)
			}
			id = fmt.Sprintf("fedavg/%d/%v", steps, eta)
			alg = algorithms.RidgeFedAvg{Eta: eta, LocalSteps: steps}
		case KindFedProx:
			mu, pinned := spec.Opt("mu")
			if !pinned {
				mu = c.LambdaProx
			}
			label = "FedProx"
			if pinned && mu != c.LambdaProx {
				label += " mu=" + experiment.FormatFloat(mu)
			}
			id = fmt.Sprintf("fedprox/%v", mu)
			alg = algorithms.RidgeFedProx{Mu: mu}
		default:
			continue // Validate reports it
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, experiment.RacerOf[*Prepared]{Label: label, Spec: spec, Run: cached(id, runner(alg))})
	}
	return out
}

// appendRacer adds a racer unless one with the same id was added.
func appendRacer(out []experiment.RacerOf[*Prepared], seen map[string]bool, id string, r experiment.RacerOf[*Prepared]) []experiment.RacerOf[*Prepared] {
	if seen[id] {
		return out
	}
	seen[id] = true
	return append(out, r)
}

// undampedRunner runs the paper's FedNewton, on the problem tuning chose
// for it when that differs from the others'.
func undampedRunner(ctx context.Context, data *Prepared, rounds int, emit func(experiment.Round)) error {
	if data.Undamped != nil {
		data = &Prepared{Ridge: data.Undamped.Ridge}
	}
	return runner(algorithms.FedNewton{})(ctx, data, rounds, emit)
}

// dampedRunner runs FedNewton with the step 2/(1 + μ_max) of the run's
// problem.
func dampedRunner(ctx context.Context, data *Prepared, rounds int, emit func(experiment.Round)) error {
	eta, _ := data.Damped()
	return runner(algorithms.FedNewton{Step: eta})(ctx, data, rounds, emit)
}

// runner adapts a ridge racer to the engine.
func runner(alg algorithms.RidgeAlgorithm) func(context.Context, *Prepared, int, func(experiment.Round)) error {
	return func(ctx context.Context, data *Prepared, rounds int, emit func(experiment.Round)) error {
		return alg.Run(ctx, data.Ridge, rounds, func(r algorithms.RidgeRound) {
			emit(experiment.Round{Index: r.Index, Theta: r.W, Values: []float64{r.TestMSE, r.TestAcc, r.GradNorm, r.KRRDist}})
		})
	}
}
