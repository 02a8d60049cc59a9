package lowrank

import "github.com/fedscope/fedscope/experiment"

// Story implements experiment.Storyteller.
func (Family) Story(sc experiment.Scenario) string {
	return "FedLRGD spends its work up front: the server interpolates every client's gradients from r anchor parameters (its samples), the clients upload r " +
		"weight vectors, then the server descends alone at no further communication. The rank r trades the accuracy of the interpolated gradient, and so the " +
		"plateau it reaches, for cost. FedAvg (local SGD) pays an upload every epoch. Press x to read the race against the federated oracle complexity, " +
		"the running time of paper 001 (Definition 1)."
}

// Annotations implements experiment.Storyteller.
func (Family) Annotations(sc experiment.Scenario) []experiment.Annotation {
	return []experiment.Annotation{
		{Metric: "suboptimality", Kind: experiment.Plateau, Tol: 0.001, Window: 20, Text: "%s plateaus", Only: []string{"fedlrgd"}},
		{Metric: "suboptimality", Kind: experiment.Diverges, Text: "%s diverged"},
	}
}
