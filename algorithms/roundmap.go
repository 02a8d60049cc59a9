package algorithms

import (
	"github.com/fedscope/fedscope/internal/dense"
	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/blas/blas64"
)

// RoundMap is one full-batch communication round of FedAvg or FedProx on the
// linear model written as an affine map (docs/papers.md §1.6, paper 000):
//
//	θ ↦ θ − Aθ + c,   A = Σ_i w_i (I − T_i),   c = Σ_i w_i t_i,
//
// where u ↦ T_i u + t_i is client i's local map: T_i = A_i^s and
// t_i = Σ_{τ<s} A_i^τ (η/n_i) X_iᵀy_i for s gradient steps
// (A_i = I − (η/n_i)X_iᵀX_i, §1.3), T_i = B_i = (I + (η/n_i)X_iᵀX_i)⁻¹ and
// t_i = η B_i X_iᵀy_i/n_i for the proximal step (§1.4).
//
// Once A and c are assembled a round costs one d×d product whatever the
// number of clients and local steps. A is symmetric up to rounding, and
// positive semi-definite for every stable step size.
type RoundMap struct {
	Dim int
	A   []float64 // d×d row-major
	C   []float64 // d
}

// MapSpec names one round map: FedAvg with Steps full-batch local gradient
// steps, or FedProx (Prox), with step size Eta.
type MapSpec struct {
	Prox  bool
	Eta   float64
	Steps int // FedAvg: s ≥ 1; ignored for FedProx
}

// NewFedAvgMap returns the round map of FedAvg with s full-batch local steps
// of size eta, with aggregation weights w (w_i = n_i/N), built from each
// client's eigendecomposition (model.SubspaceSpectrum): in that basis I − T_i
// and the input gain are diagonal. It is the spectral construction that
// MapBuilder's repeated squaring is tested against.
//
// NewFedAvgMap panics if s < 1.
func NewFedAvgMap(spectra []model.SubspaceSpectrum, w []float64, d int, eta float64, s int) RoundMap {
	if s < 1 {
		panic("algorithms: FedAvg needs s ≥ 1 local steps")
	}
	return newRoundMap(spectra, w, d, func(lambda float64) (comp, geo float64) {
		_, comp, geo = model.GDCoefficients(lambda, eta, s)
		return comp, geo
	})
}

// NewFedProxMap returns the round map of full-batch FedProx with parameter
// eta and aggregation weights w, from the clients' eigendecompositions.
func NewFedProxMap(spectra []model.SubspaceSpectrum, w []float64, d int, eta float64) RoundMap {
	return newRoundMap(spectra, w, d, func(lambda float64) (comp, geo float64) {
		_, comp, geo = model.ProxCoefficients(lambda, eta)
		return comp, geo
	})
}

// newRoundMap accumulates A = Σ w_i P Q_i diag(comp) Q_iᵀ Pᵀ and
// c = Σ w_i P Q_i (geo ∘ Q_iᵀ b_i), coef giving comp = 1 − (local
// multiplier) and geo = input gain per eigenvalue.
func newRoundMap(spectra []model.SubspaceSpectrum, w []float64, d int, coef func(lambda float64) (comp, geo float64)) RoundMap {
	m := RoundMap{Dim: d, A: make([]float64, d*d), C: make([]float64, d)}
	var work []float64
	for i := range spectra {
		if n := spectra[i].R * (spectra[i].K + spectra[i].R); n > len(work) {
			work = make([]float64, n)
		}
	}
	for i := range spectra {
		sp := &spectra[i]
		if w[i] == 0 || sp.K == 0 {
			continue
		}
		comp, geo := make([]float64, sp.K), make([]float64, sp.K)
		for j, lam := range sp.Lambda {
			comp[j], geo[j] = coef(lam)
		}
		sp.AddOuterTo(m.A, d, w[i], comp, work)
		sp.AddVecTo(m.C, w[i], geo)
	}
	return m
}

// Step sets dst = θ − Aθ + c, one round from θ (dst and theta must not
// overlap).
func (m RoundMap) Step(dst, theta []float64) {
	copy(dst, m.C)
	blas64.Axpy(1, blas64.Vector{N: m.Dim, Inc: 1, Data: theta}, blas64.Vector{N: m.Dim, Inc: 1, Data: dst})
	dense.GemvN(m.Dim, m.Dim, -1, m.A, m.Dim, theta, 1, dst) // gonum's Dgemv, bit for bit
}

// Limit returns the fixed point θ_∞ of the round map (see LimitTo).
func (m RoundMap) Limit() []float64 {
	theta := make([]float64, m.Dim)
	m.LimitTo(theta, nil)
	return theta
}

// LimitWork is scratch memory for LimitTo; one serves one goroutine.
type LimitWork struct {
	obs  []int
	a, c []float64
	sol  []float64
	sw   model.SolveWork
}

// LimitTo sets theta to the fixed point θ_∞ of the round map, the solution
// of Aθ = c (docs/papers.md §1.6). When A is singular (the pooled XᵀX is: some
// directions are seen by no client) the minimum-norm solution is returned,
// which is the fixed point in the row space of X that the iterates reach from
// θ_0 = 0. Coordinates that no client observes (a zero row and column of A,
// e.g. in the covariate-subspace model) are split off first, so the common
// singular case costs a Cholesky solve on the observed coordinates only.
// ws may be nil; reused, it makes the common case allocation-free.
func (m RoundMap) LimitTo(theta []float64, ws *LimitWork) {
	if ws == nil {
		ws = &LimitWork{}
	}
	d := m.Dim
	ws.obs = ws.obs[:0]
	for k := 0; k < d; k++ {
		if m.A[k*d+k] != 0 || m.C[k] != 0 {
			ws.obs = append(ws.obs, k)
		}
	}
	clear(theta[:d])
	q := len(ws.obs)
	if q == 0 {
		return
	}
	ws.a, ws.c, ws.sol = grow(ws.a, q*q), grow(ws.c, q), grow(ws.sol, q)
	for i, ki := range ws.obs {
		ws.c[i] = m.C[ki]
		for j, kj := range ws.obs {
			// Symmetrise: the accumulated blocks are symmetric only up to rounding.
			ws.a[i*q+j] = (m.A[ki*d+kj] + m.A[kj*d+ki]) / 2
		}
	}
	model.MinNormSolveTo(ws.sol, ws.a, ws.c, q, &ws.sw)
	for i, k := range ws.obs {
		theta[k] = ws.sol[i]
	}
}

// mapRound advances θ by one application of the round map.
func mapRound(m *RoundMap) func(t int, theta []float64) error {
	next := make([]float64, m.Dim)
	return func(_ int, theta []float64) error {
		m.Step(next, theta)
		copy(theta, next)
		return nil
	}
}
