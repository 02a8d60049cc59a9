package linear

import (
	"context"
	"fmt"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// metrics are the per-round metrics of a run (docs/papers.md §6). The gradient
// norm is that of the paper's plotted loss ℓ(θ) = (1/N) Σ‖y_i − X_iθ‖², twice
// the gradient of the 1/(2N) objective FedAvg s=1 minimises (§1.2, §7).
var metrics = []experiment.Metric{
	{Name: "grad_norm", Caption: "gradient norm ‖∇ℓ(θ_t)‖, ℓ = (1/N)Σ‖y − Xθ‖²", Short: "‖∇ℓ‖", Log: true},
	{Name: "est_error", Caption: "estimation error ‖θ_t − θ*‖", Short: "‖θ−θ*‖", Log: true},
	{Name: "client_error", Caption: "client error Σ w_i‖θ_t − θ_i*‖", Short: "Σw‖θ−θᵢ*‖", Log: true},
	{Name: "ls_error", Caption: "error of pooled least squares ‖θ_LS − θ*‖", Short: "LS", Log: true},
}

// Metrics implements experiment.Computation.
func (compute) Metrics(experiment.Scenario, Config) []experiment.Metric { return metrics }

// Racers implements experiment.Computation. The full-batch racers run on round
// maps kept with the prepared problem (algorithms.RoundMap): each racer's
// first call builds the maps of all of them in one pass over the clients,
// so a change of η rebuilds every map once and a change of s only the map
// of the racer that follows it.
func (compute) Racers(sc experiment.Scenario, c Config) []experiment.RacerOf[*model.Problem] {
	var out []experiment.RacerOf[*model.Problem]
	rs := resolve(c)
	var specs []algorithms.MapSpec
	for _, r := range rs {
		if r.batch == 0 {
			specs = append(specs, r.mapSpec())
		}
	}
	norm := c.BatchNorm
	for _, r := range rs {
		var alg algorithms.Algorithm = algorithms.FedProx{Eta: r.eta, Batch: r.batch, BatchNorm: norm, Seed: sc.Seed}
		if r.kind == KindFedAvg {
			alg = algorithms.FedAvg{Eta: r.eta, LocalSteps: r.steps, Batch: r.batch, BatchNorm: norm, Seed: sc.Seed}
		}
		out = append(out, experiment.RacerOf[*model.Problem]{Label: r.label, Spec: r.spec, Run: runner(alg, specs)})
	}
	return out
}

// resolved is a racer with its parameters filled in from the scenario.
type resolved struct {
	spec        experiment.RacerSpec
	label, kind string
	eta         float64
	steps       int
	batch       int
}

// resolve fills the racers' unpinned parameters from the configuration
// and labels them; racers that resolve to the same algorithm are kept once.
func resolve(c Config) []resolved {
	var out []resolved
	seen := map[string]bool{}
	for _, spec := range c.Racers {
		s, _ := spec.Opt("s")
		b, pinnedB := spec.Opt("b")
		eta, pinnedEta := spec.Opt("eta")
		r := resolved{spec: spec, kind: spec.Kind, eta: eta, steps: int(s), batch: int(b)}
		if r.kind == KindFedAvg && r.steps == 0 {
			r.steps = c.LocalSteps
		}
		if !pinnedB {
			r.batch = c.Batch
		}
		if !pinnedEta {
			r.eta = c.Eta
		}
		id := fmt.Sprintf("%s/%d/%d/%v", r.kind, r.steps, r.batch, r.eta)
		if seen[id] {
			continue
		}
		seen[id] = true
		r.label = "FedProx"
		if r.kind == KindFedAvg {
			r.label = fmt.Sprintf("FedAvg s=%d", r.steps)
		}
		if pinnedB && r.batch != c.Batch {
			if r.batch == 0 {
				r.label += " full"
			} else {
				r.label += fmt.Sprintf(" B=%d", r.batch)
			}
		}
		if pinnedEta && r.eta != c.Eta {
			r.label += " eta=" + experiment.FormatFloat(r.eta)
		}
		out = append(out, r)
	}
	return out
}

// mapSpec names the round map of a full-batch racer.
func (r resolved) mapSpec() algorithms.MapSpec {
	return algorithms.MapSpec{Prox: r.kind == KindFedProx, Eta: r.eta, Steps: r.steps}
}

// runner adapts a FedAvg/FedProx racer to the engine: round 0 first, the
// common start θ_0 = 0 (docs/papers.md §8), then the algorithm's rounds; each
// carries the metrics in the family's order, the last the error of pooled
// least squares (a constant of the data, repeated for the CSV column). specs
// are the round maps of every full-batch racer of the scenario, prepared
// together before the first round.
func runner(alg algorithms.Algorithm, specs []algorithms.MapSpec) func(context.Context, *model.Problem, int, func(experiment.Round)) error {
	return func(ctx context.Context, p *model.Problem, rounds int, emit func(experiment.Round)) error {
		emit(roundZero(p))
		if len(specs) > 0 {
			if err := algorithms.PrepareMaps(ctx, p, specs); err != nil {
				return err
			}
		}
		return alg.Run(ctx, p, rounds, func(r algorithms.LinearRound) {
			emit(experiment.Round{Index: r.Index, Theta: r.Theta,
				Values: []float64{r.GradNorm, r.EstError, r.ClientError, p.LSError}})
		})
	}
}

// roundZero is the row of θ_0 = 0, where every racer starts.
func roundZero(p *model.Problem) experiment.Round {
	theta := make([]float64, p.Dim)
	scratch := make([]float64, p.GradNormScratch())
	return experiment.Round{Index: 0, Theta: theta,
		Values: []float64{p.GradNorm(theta, scratch), p.EstError(theta), p.ClientError(theta), p.LSError}}
}

// DataKey implements experiment.Computation: the federation and the seed
// decide the data; η, s, B and the racers reuse them.
func (compute) DataKey(sc experiment.Scenario, c Config) string {
	return fmt.Sprintf("%#v|%d", c.Data, sc.Seed)
}

// Prepare implements experiment.Computation: the federation and every
// client's statistics, computed once and shared by the racers.
func (compute) Prepare(ctx context.Context, sc experiment.Scenario, c Config, report func(experiment.Progress)) (*model.Problem, error) {
	fed, err := c.Data.Generate(sc.Seed)
	if err != nil {
		return nil, &experiment.InputError{Msg: err.Error()}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return model.NewProblem(fed), nil
}
