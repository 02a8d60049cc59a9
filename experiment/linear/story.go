package linear

import "github.com/fedscope/fedscope/experiment"

// Story implements experiment.Storyteller.
func (Family) Story(sc experiment.Scenario) string {
	switch cfg(sc).Kind {
	case fedGainKind:
		if sc.Sweep.Knob == "subspace_dim" {
			return "Each client's rows live on r of the d = 100 coordinates, a different set per client. " +
				"While the union of the clients' subspaces leaves coordinates uncovered, the federation cannot estimate them and the gain stays small; " +
				"once every coordinate is covered — around r ≈ d·ln d / M, a coupon collector — the federation gain jumps " +
				"(paper 000, Thm 6 and Fig. 5). Above the dashed FG = 1 line, joining the federation helps."
		}
		return "The federation gain FG = local error / federated error of one data-scarce client (n = 50 < d = 100) and one data-rich client (n = 500) " +
			"as the clients' true models drift apart by Γ. Above the dashed FG = 1 line, joining helps. " +
			"The scarce client, which cannot estimate alone, gains until Γ ≈ √(1 − n/d)·‖θ*‖; the rich client only until Γ ≈ σ√(d/n) " +
			"(paper 000, Thm 5 and Fig. 4)."
	case polynomialKind:
		return "Twenty clients each see only their own slice of [−1, 1] and fit U5 with six monomials: no client alone can recover the polynomial, the federation can. " +
			"The integrated error falls like 1/N, the minimax rate of a finite-dimensional class, so 1/MSE grows linearly in the total sample size N " +
			"(paper 000, Fig. 6)."
	}
	if cfg(sc).Batch > 0 {
		return "The paradox with minibatch local steps: each local step is one pass over batches of B points, each batch's share of the local loss, " +
			"so that a pass sums to one full-batch step. The curves keep the shape of the full-batch race — s ≥ 2 and FedProx still stall " +
			"above 0 while their error reaches the least-squares line — so the paradox does not hinge on full gradients (paper 000, Figs. 2–3)."
	}
	return "FedAvg with s = 1 local step is centralised gradient descent: its gradient norm falls towards 0. " +
		"With s ≥ 2 local steps, and with FedProx, it stalls well above 0, at a point not stationary for the global loss, " +
		"yet the estimation error reaches the dashed line of pooled least squares: FedAvg in about s times fewer rounds " +
		"(local steps save communication), FedProx at this η about as slowly as s = 1. That is the stationary-point paradox (paper 000, Fig. 1)."
}

// Annotations implements experiment.Storyteller: the paradox labels the
// racers whose gradient norm stalls, the errors that reach the
// least-squares line, and divergences.
func (Family) Annotations(sc experiment.Scenario) []experiment.Annotation {
	if cfg(sc).Kind != runKind {
		return nil
	}
	return []experiment.Annotation{
		{Metric: "grad_norm", Kind: experiment.Plateau, Tol: 0.01, Window: 10, Text: "%s stalls: not stationary",
			Skip: []string{"fedavg:s=1"}},
		{Metric: "est_error", Kind: experiment.Reaches, Level: "pooled least squares", Tol: 0.05, Text: "%s reaches least squares"},
		{Metric: "grad_norm", Kind: experiment.Diverges, Text: "%s diverged"},
	}
}
