package mixture

import "github.com/fedscope/fedscope/experiment"

// Story implements experiment.Storyteller.
func (Family) Story(sc experiment.Scenario) string {
	return "Every client belongs to one of k hidden clusters, each with its own regression truth. Phase 1 (FedMD) moves anchor clients towards the cluster truths " +
		"using moments of fresh 2-point clients, then groups the anchors; Phase 2 lets every client pick its nearest cluster model and refines the models with " +
		"FedAvg. Solid bands on the left mean correct assignments. From a random start (the second racer) Phase 2 alone can merge clusters and stay wrong (paper 004)."
}

// Annotations implements experiment.Storyteller.
func (Family) Annotations(sc experiment.Scenario) []experiment.Annotation {
	return []experiment.Annotation{
		{Metric: "cluster_dist", Kind: experiment.Reaches, Tol: 0, Text: "%s within εΔ"},
		{Metric: "cluster_dist", Kind: experiment.Diverges, Text: "%s diverged"},
	}
}
