package lowrank

import "github.com/fedscope/fedscope/experiment"

// Story implements experiment.Storyteller.
func (Family) Story(sc experiment.Scenario) string {
	return "FedLRGD works up front: the server interpolates the clients' gradients from r anchor points, the clients upload r weight vectors once, " +
		"then the server descends alone. The rank r trades the accuracy of the interpolated gradient — the plateau it reaches — for cost; " +
		"FedAvg (local SGD) pays an upload every epoch. x plots the race against the federated oracle complexity, the running time of paper 001."
}

// Annotations implements experiment.Storyteller.
func (Family) Annotations(sc experiment.Scenario) []experiment.Annotation {
	return []experiment.Annotation{
		{Metric: "suboptimality", Kind: experiment.Plateau, Tol: 0.001, Window: 20, Text: "%s plateaus", Only: []string{"fedlrgd"}},
		{Metric: "suboptimality", Kind: experiment.Diverges, Text: "%s diverged"},
	}
}
