package algorithms

import (
	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/mat"
)

// FedAvgLimit returns the fixed point θ_∞ of full-batch FedAvg with step size
// eta and s local steps on the linear model (PAPERS.md §1.6, paper 000):
//
//	θ_∞ = (I − Σ_i w_i A_i^s)⁻¹ Σ_i w_i (Σ_{τ<s} A_i^τ) (η/n_i) X_iᵀy_i,
//	A_i = I − (η/n_i) X_iᵀX_i,
//
// the limit of the round map θ ↦ Σ_i w_i (A_i^s θ + Σ_{τ<s} A_i^τ (η/n_i) X_iᵀy_i)
// of PAPERS.md §1.3. For s = 1 it is the pooled least-squares solution; for
// s > 1 it is in general not a stationary point of the global loss.
//
// When the pooled XᵀX is singular (e.g. the covariate-subspace model with few
// clients) so is I − L, L = Σ w_i A_i^s, and the minimum-norm solution is
// returned: the fixed point restricted to the row space of X, which is where
// the iterates from θ_0 = 0 stay (PAPERS.md §1.6, last item). Justification:
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
// FedAvgLimit panics if s < 1.
func FedAvgLimit(p *model.Problem, eta float64, s int) []float64 {
	if s < 1 {
		panic("algorithms: FedAvgLimit needs s ≥ 1 local steps")
	}
	d := p.Dim
	lhs := identity(d) // I − Σ w_i A_i^s
	rhs := mat.NewVecDense(d, nil)
	var (
		pow, tmp mat.Dense
		v, av    mat.VecDense
	)
	for i := range p.Clients {
		c := &p.Clients[i]
		w := p.Weights[i]
		if w == 0 {
			continue
		}
		a := localGD(c, eta)
		// v runs through A_i^τ (η/n_i) X_iᵀy_i, τ = 0..s−1, and pow through A_i^τ.
		v.CloneFromVec(mat.NewVecDense(d, append([]float64(nil), c.XtY...)))
		v.ScaleVec(eta, &v)
		pow.CloneFrom(identity(d))
		for tau := 0; tau < s; tau++ {
			rhs.AddScaledVec(rhs, w, &v)
			av.MulVec(a, &v)
			v.CloneFromVec(&av)
			tmp.Mul(a, &pow)
			pow.CloneFrom(&tmp)
		}
		lhs.Sub(lhs, scaled(w, &pow))
	}
	return model.MinNormSolve(symmetric(lhs), rhs.RawVector().Data, d)
}

// FedProxLimit returns the fixed point θ_∞ of full-batch FedProx with step
// size eta on the linear model (PAPERS.md §1.6, paper 000):
//
//	θ_∞ = (I − Σ_i w_i B_i)⁻¹ Σ_i w_i B_i (η/n_i) X_iᵀy_i,
//	B_i = (I + (η/n_i) X_iᵀX_i)⁻¹,
//
// the limit of the round map θ ↦ Σ_i w_i B_i (θ + (η/n_i) X_iᵀy_i) of
// PAPERS.md §1.4. Each B_i is symmetric with eigenvalues in (0, 1] for every
// η > 0, so I − Σ w_i B_i is symmetric positive semi-definite with the null
// space of the pooled XᵀX (B_i v = v iff X_i v = 0); when that is singular the
// minimum-norm solution, the fixed point in the row space of X reached from
// θ_0 = 0, is returned, as in FedAvgLimit.
func FedProxLimit(p *model.Problem, eta float64) []float64 {
	d := p.Dim
	lhs := identity(d) // I − Σ w_i B_i
	rhs := mat.NewVecDense(d, nil)
	var (
		b  mat.SymDense
		ch mat.Cholesky
		bv mat.VecDense
	)
	for i := range p.Clients {
		c := &p.Clients[i]
		w := p.Weights[i]
		if w == 0 {
			continue
		}
		// I + ηG_i is symmetric positive definite for η > 0.
		sys := mat.NewSymDense(d, nil)
		sys.ScaleSym(eta, clientGram(c))
		for k := 0; k < d; k++ {
			sys.SetSym(k, k, sys.At(k, k)+1)
		}
		if !ch.Factorize(sys) {
			panic("algorithms: I + ηX_iᵀX_i/n_i not positive definite (η ≤ 0?)")
		}
		if err := ch.InverseTo(&b); err != nil {
			panic("algorithms: " + err.Error())
		}
		bv.MulVec(&b, mat.NewVecDense(d, append([]float64(nil), c.XtY...)))
		rhs.AddScaledVec(rhs, w*eta, &bv)
		lhs.Sub(lhs, scaled(w, &b))
	}
	return model.MinNormSolve(symmetric(lhs), rhs.RawVector().Data, d)
}

// clientGram returns X_iᵀX_i/n_i, from the kept Gram matrix or, for clients
// with n_i < d, from the raw design.
func clientGram(c *model.Stats) *mat.SymDense {
	if c.Gram != nil {
		return mat.NewSymDense(c.Dim, append([]float64(nil), c.Gram...))
	}
	g := mat.NewSymDense(c.Dim, nil)
	if c.N > 0 {
		g.SymRankK(g, 1/float64(c.N), mat.NewDense(c.N, c.Dim, c.X).T())
	}
	return g
}

// localGD returns A_i = I − η X_iᵀX_i/n_i, the linear part of one local
// gradient step (PAPERS.md §1.3).
func localGD(c *model.Stats, eta float64) *mat.Dense {
	a := mat.DenseCopyOf(clientGram(c))
	a.Scale(-eta, a)
	for k := 0; k < c.Dim; k++ {
		a.Set(k, k, a.At(k, k)+1)
	}
	return a
}

// identity returns the d×d identity matrix.
func identity(d int) *mat.Dense {
	m := mat.NewDense(d, d, nil)
	for k := 0; k < d; k++ {
		m.Set(k, k, 1)
	}
	return m
}

// scaled returns alpha·a as a new matrix.
func scaled(alpha float64, a mat.Matrix) *mat.Dense {
	var m mat.Dense
	m.Scale(alpha, a)
	return &m
}

// symmetric returns (a + aᵀ)/2 in row-major order: the products and inverses
// above are symmetric only up to rounding.
func symmetric(a *mat.Dense) []float64 {
	d, _ := a.Dims()
	out := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			out[i*d+j] = (a.At(i, j) + a.At(j, i)) / 2
		}
	}
	return out
}
