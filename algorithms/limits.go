package algorithms

import "github.com/fedscope/fedscope/model"

// FedAvgLimit returns the fixed point θ_∞ of full-batch FedAvg with step size
// eta and s local steps on the linear model (docs/papers.md §1.6, paper 000):
//
//	θ_∞ = (I − Σ_i w_i A_i^s)⁻¹ Σ_i w_i (Σ_{τ<s} A_i^τ) (η/n_i) X_iᵀy_i,
//	A_i = I − (η/n_i) X_iᵀX_i,
//
// the limit of the round map θ ↦ Σ_i w_i (A_i^s θ + Σ_{τ<s} A_i^τ (η/n_i) X_iᵀy_i)
// of docs/papers.md §1.3. For s = 1 it is the pooled least-squares solution; for
// s > 1 it is in general not a stationary point of the global loss.
//
// When the pooled XᵀX is singular (e.g. the covariate-subspace model with few
// clients) so is I − L, L = Σ w_i A_i^s, and the minimum-norm solution is
// returned: the fixed point restricted to the row space of X, which is where
// the iterates from θ_0 = 0 stay (docs/papers.md §1.6, last item). Justification:
// L is symmetric, and for a stable η (η λ_max(X_iᵀX_i/n_i) < 2 for every
// client) each A_i has its eigenvalues in (−1, 1], so ‖L‖ ≤ 1 and I − L is
// symmetric positive semi-definite, as model.MinNormSolve requires. Moreover
// vᵀ(I − L)v = 0 forces vᵀA_i^s v = ‖v‖² for every client with w_i > 0, i.e.
// X_i v = 0 for all i, so the null space of I − L is exactly that of XᵀX. The
// right-hand side lies in the row space of X (each X_iᵀy_i does, and A_i
// maps that space into itself), so the system is consistent and its
// minimum-norm solution is the unique fixed point in the row space.
//
// For an unstable η the result is still a solution of the fixed-point
// equation when I − L is non-singular, but a repelling one.
//
// It is computed from the round map (see RoundMap and MapBuilder), with the
// clients' statistics on the coordinates their rows use: O(Σ_i r_i³ log s)
// work for the subspace model rather than the O(M s d³) of forming A_i^s.
//
// FedAvgLimit panics if s < 1.
func FedAvgLimit(p *model.Problem, eta float64, s int) []float64 {
	if s < 1 {
		panic("algorithms: FedAvgLimit needs s ≥ 1 local steps")
	}
	return ProblemMap(p, MapSpec{Eta: eta, Steps: s}).Limit()
}

// FedProxLimit returns the fixed point θ_∞ of full-batch FedProx with step
// size eta on the linear model (docs/papers.md §1.6, paper 000):
//
//	θ_∞ = (I − Σ_i w_i B_i)⁻¹ Σ_i w_i B_i (η/n_i) X_iᵀy_i,
//	B_i = (I + (η/n_i) X_iᵀX_i)⁻¹,
//
// the limit of the round map θ ↦ Σ_i w_i B_i (θ + (η/n_i) X_iᵀy_i) of
// docs/papers.md §1.4. Each B_i is symmetric with eigenvalues in (0, 1] for every
// η > 0, so I − Σ w_i B_i is symmetric positive semi-definite with the null
// space of the pooled XᵀX (B_i v = v iff X_i v = 0); when that is singular the
// minimum-norm solution, the fixed point in the row space of X reached from
// θ_0 = 0, is returned, as in FedAvgLimit.
func FedProxLimit(p *model.Problem, eta float64) []float64 {
	return ProblemMap(p, MapSpec{Prox: true, Eta: eta}).Limit()
}
