package bound

import "github.com/fedscope/fedscope/experiment"

// Story implements experiment.Storyteller.
func (Family) Story(sc experiment.Scenario) string {
	return "FedAvg with τ single-sample SGD steps per round on the lecture notes' toy classifier. Top: the running average of F(x̄) − F* over every local step, " +
		"Thm 2.1's left side, under its right side (dashed, same colour). Only the first term of the bound falls with the rounds: with a constant η it has a floor, " +
		"so the notes' closing \"O(1/(τT))\" holds only for a step that shrinks. Bottom: the clients' drift from their average under the drift lemma. " +
		"H raises the class skew (heterogeneity ζ) (paper 002, Thm 2.1)."
}

// Annotations implements experiment.Storyteller.
func (Family) Annotations(sc experiment.Scenario) []experiment.Annotation {
	return []experiment.Annotation{
		{Metric: "subopt_avg", Kind: experiment.Diverges, Text: "%s diverged"},
	}
}
