package bound

import "github.com/fedscope/fedscope/experiment"

// Story implements experiment.Storyteller.
func (Family) Story(sc experiment.Scenario) string {
	return "FedAvg with τ single-sample SGD steps per round on the notes' toy classifier. Top: the running average of F(x̄) − F*, Thm 2.1's left side, " +
		"under its right side (dashed). Only the bound's first term falls with the rounds: with a constant η it has a floor, so the notes' " +
		"\"O(1/(τT))\" needs a shrinking step. Bottom: the clients' drift under the drift lemma; H raises the heterogeneity ζ (paper 002, Thm 2.1)."
}

// Annotations implements experiment.Storyteller.
func (Family) Annotations(sc experiment.Scenario) []experiment.Annotation {
	return []experiment.Annotation{
		{Metric: "subopt_avg", Kind: experiment.Diverges, Text: "%s diverged"},
	}
}
