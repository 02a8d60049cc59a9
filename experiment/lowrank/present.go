package lowrank

import (
	"fmt"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// Story implements experiment.Presentation.
func (present) Story(experiment.Scenario, Config) string {
	return "FedLRGD works up front: the server interpolates the clients' gradients from r anchor points, the clients upload r weight vectors once, " +
		"then the server descends alone. The rank r trades the accuracy of the interpolated gradient — the plateau it reaches — for cost; " +
		"FedAvg (local SGD) pays an upload every epoch. x plots the race against the federated oracle complexity, the running time of paper 001."
}

// Caption implements experiment.Presentation.
func (present) Caption(sc experiment.Scenario, _ Config) string {
	if sc.IsSweep() {
		return "Oracle complexity Γ to reach ε: FedLRGD's stays flat as ε falls until its rank is too small, FedAvg's grows. Dashed: the paper's curves."
	}
	return "FedLRGD pays its uploads up front, then descends alone to a plateau set by its rank r; FedAvg pays an upload every epoch."
}

// Annotations implements experiment.Presentation.
func (present) Annotations(experiment.Scenario, Config) []experiment.Annotation {
	return []experiment.Annotation{
		{Metric: "suboptimality", Kind: experiment.Plateau, Tol: 0.001, Window: 20, Text: "%s plateaus", Only: []string{"fedlrgd"}},
		{Metric: "suboptimality", Kind: experiment.Diverges, Text: "%s diverged"},
	}
}

// Summarize implements experiment.Presentation: no end-of-run summary.
func (present) Summarize(experiment.Scenario, Config, *experiment.Table) []experiment.RacerSummary {
	return nil
}

// Menu implements experiment.Presentation: the racers of the presets.
func (present) Menu(experiment.Scenario, Config) []experiment.RacerSpec { return nil }

// Looks implements experiment.Presentation: the preset's ranks in order,
// and FedAvg with the looks it has in paper 000's race.
func (present) Looks() map[string]int {
	return map[string]int{"fedlrgd:r=3": 0, "fedlrgd:r=5": 1, "fedlrgd": 2, "fedlrgd:r=40": 3,
		"fedavg:s=1": 0, "fedavg:s=5": 1, "fedavg": 2, "fedavg:s=10": 4, "fedavg:s=2": 5, "fedavg:s=20": 6}
}

// Help implements experiment.Presentation.
func (present) Help(experiment.Scenario, Config) string {
	return "Suboptimality F(θ_t) − F* and the gradient norm per epoch; x switches the x axis to the cumulative federated oracle complexity Γ."
}

// Facts implements experiment.Presentation.
func (present) Facts(_ experiment.Scenario, c Config, _ *model.Federated) experiment.Facts {
	f := experiment.Facts{
		Summary: fmt.Sprintf("m=%d clients × s=%d, server R=%d, d=%d, S=%d, φ=%s, μ=%s", c.Clients, c.Samples, c.Server, c.Dim, c.Iters,
			experiment.FormatFloat(c.Phi), experiment.FormatFloat(c.Mu)),
		Charts: []string{"suboptimality", "grad_norm"},
		Levels: []experiment.Level{{Metric: "suboptimality", Value: c.Epsilon, Label: "target ε"}},
	}
	tol := c.SVDTol
	how := "given"
	if tol == 0 {
		tol, how = algorithms.DefaultSVDTol, "default"
	}
	f.Params = []experiment.Param{{Name: "server", Value: float64(c.Server), How: "given"}, {Name: "svd_tol", Value: tol, How: how}}
	for _, r := range resolve(c) {
		if r.spec.Kind == KindFedLRGD && r.rank < c.Server {
			f.Notes = append(f.Notes, fmt.Sprintf("the server holds R=%d samples: a FedLRGD racer of rank r < R weights the R − r beyond its nodes like a client's, (R − r)·r more gradients in epoch 1 than the paper's r²", c.Server))
			break
		}
	}
	return f
}
