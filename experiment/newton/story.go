package newton

import "github.com/fedscope/fedscope/experiment"

// Story implements experiment.Storyteller.
func (Family) Story(sc experiment.Scenario) string {
	switch sc.Sweep.Knob {
	case "clients":
		return "The same |D| = 10000 samples split over more and more clients, so each holds fewer. DKRR, one average of local KRR fits, degrades as the local fits get noisy; " +
			"FedNewton corrects it with the global gradient and each client's local Hessian and recovers KRR in a few rounds — as long as the local Hessians are good enough " +
			"for its contraction factor Υ to stay below 1 (paper 003, Thm 1 and Fig. 3)."
	case "alpha", "beta":
		return "Clients drift apart in their inputs (α) or their models (β). DKRR suffers from the drift; FedNewton's rounds pull it back to centralised KRR " +
			"while its contraction factor Υ stays below 1 (paper 003, Thm 1 and Fig. 4). x relabels the axis with the measured heterogeneity."
	}
	if cfg(sc).Data.DataPath != "" {
		return "Your data, dealt to the clients, in random Fourier features. KRR is the centralised target, DKRR averages the clients' local fits once, " +
			"FedNewton improves on DKRR with a Newton step per round (global gradient, local Hessians); FedAvg and FedProx start from DKRR too (paper 003, Table 3)."
	}
	return "KRR on all data is the target; DKRR averages the clients' local KRR fits once. FedNewton combines the global gradient with each client's local Hessian: " +
		"when its contraction factor Υ (in the title) is below 1 it reaches KRR in a few rounds, while FedAvg and FedProx barely move from their DKRR start " +
		"(paper 003, Fig. 5)."
}

// Annotations implements experiment.Storyteller.
func (Family) Annotations(sc experiment.Scenario) []experiment.Annotation {
	if sc.IsSweep() {
		return nil
	}
	return []experiment.Annotation{
		{Metric: "krr_dist", Kind: experiment.Diverges, Text: "%s diverged"},
		{Metric: "test_mse", Kind: experiment.Diverges, Text: "%s diverged"},
		{Metric: "test_acc", Kind: experiment.Diverges, Text: "%s diverged"},
	}
}
