package newton

import (
	"context"
	"fmt"

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
		out = append(out, experiment.RacerOf[*Prepared]{Label: label, Spec: spec, Run: runner(alg)})
	}
	return out
}

// runner adapts a ridge racer to the engine.
func runner(alg algorithms.RidgeAlgorithm) func(context.Context, *Prepared, int, func(experiment.Round)) error {
	return func(ctx context.Context, data *Prepared, rounds int, emit func(experiment.Round)) error {
		return alg.Run(ctx, data.Ridge, rounds, func(r algorithms.RidgeRound) {
			emit(experiment.Round{Index: r.Index, Theta: r.W, Values: []float64{r.TestMSE, r.TestAcc, r.GradNorm, r.KRRDist}})
		})
	}
}
