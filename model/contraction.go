package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/internal/dense"
	"github.com/fedscope/fedscope/internal/parallel"
)

// contractionTol is the accuracy of Ridge.Contraction, relative to
// max(1, Υ): three or more significant digits where they matter.
const contractionTol = 1e-6

// Contraction returns FedNewton's contraction factor Υ, the spectral
// radius of its exact error map (docs/papers.md §4.2–4.3, §6 "contraction"):
//
//	E = Σ_j p_j (C_Dj + λI)⁻¹(C_Dj − C_D) = I − (Σ_j p_j H_j⁻¹) H,
//	e_t = E e_{t−1}.
//
// Below 1 FedNewton converges to KRR at that rate per round; above 1 more
// rounds hurt and it diverges. Computed once, on demand (ContractionTol).
func (r *Ridge) Contraction() float64 {
	r.contrOnce.Do(func() { r.contr, _ = r.ContractionTol(contractionTol) })
	return r.contr
}

// ContractionTol estimates Υ to an absolute accuracy of tol·max(1, Υ) and
// returns it with the number of Lanczos steps taken.
//
// With A = Σ_j p_j H_j⁻¹ (symmetric positive definite) the eigenvalues μ of
// AH are real and positive (AH is similar to H^{1/2}AH^{1/2}), so
// Υ = max(1 − μ_min, μ_max − 1): FedNewton diverges exactly when
// μ_max > 2. AH is self-adjoint in the H inner product ⟨x, y⟩ = xᵀHy, so
// the Lanczos process in that inner product (one H product and one pass of
// local solves per step, fully reorthogonalised) finds both ends of its
// spectrum in a few dozen steps, where power iteration needs many more
// when the two largest |1 − μ| are close. It stops when the residual bound
// β_{k+1}|s_k| of both extreme Ritz values is below the tolerance, or when
// the Krylov space is invariant (then the Ritz values are exact); with the
// quadratic bound r²/gap once the extreme Ritz values are isolated.
func (r *Ridge) ContractionTol(tol float64) (float64, int) {
	return contractionOn(r.lanczosSeq(), r.M, tol, 0)
}

// lanczosSeq returns the Lanczos process of the problem's AH, shared by
// ContractionTol and NewtonSpectrum: both run the same process (the same
// operators and first vector) and differ only in when they stop, so the one
// that runs second continues from the steps of the first, with the same
// bits as running it alone.
func (r *Ridge) lanczosSeq() *lanczosSeq {
	r.seqOnce.Do(func() {
		ops := make([]*RidgeOp, len(r.Clients))
		for j := range r.Clients {
			ops[j] = r.Clients[j].Op
		}
		r.seq = newLanczosSeq(r.Pooled, ops, r.Weights, r.M)
	})
	return r.seq
}

// ContractionAt returns Υ at λ (to tol, as Ridge.ContractionTol) without
// building the problem: only the local Hessians are factorised, and the
// pooled Hessian is applied as H = Σ_j p_j H_j through them, so the pooled
// Gram matrix is never formed. Tuning calls it for the settings it checks.
//
// With limit > 0 it stops as soon as the estimate reaches limit and returns
// that estimate, a lower bound of Υ: the extreme Ritz values of the Lanczos
// process lie inside the spectrum of AH, so their Υ never exceeds the true
// one, and a check "Υ < 1?" is decided in a few steps when Υ is large.
func (s *RidgeStats) ContractionAt(lambda, tol, limit float64) (float64, error) {
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return math.NaN(), fmt.Errorf("ridge: λ=%v must be a finite number > 0", lambda)
	}
	ops := make([]*RidgeOp, len(s.clients))
	errs := make([]error, len(ops))
	parallel.For(len(ops), func(j int) { ops[j], errs[j] = s.clients[j].op(s.M, lambda, false) })
	if err := firstErr(errs); err != nil {
		return math.NaN(), err
	}
	ups, _ := contraction(sumOp{ops, s.Weights}, ops, s.Weights, s.M, tol, limit)
	return ups, nil
}

// hessian multiplies by a Hessian (one column).
type hessian interface {
	MulTo(dst, w []float64, c int, scratch []float64)
	ScratchLen() int
}

// sumOp is H = Σ_j p_j H_j.
type sumOp struct {
	ops []*RidgeOp
	w   []float64
}

func (s sumOp) ScratchLen() int {
	n := 0
	for _, op := range s.ops {
		n = max(n, op.ScratchLen())
	}
	return n
}

func (s sumOp) MulTo(dst, v []float64, c int, scratch []float64) {
	tmp := make([]float64, len(dst))
	clear(dst)
	for j, op := range s.ops {
		op.MulTo(tmp, v, c, scratch)
		floatsAxpy(s.w[j], tmp, dst)
	}
}

// contraction is ContractionTol for the pooled Hessian H and local
// Hessians H_j with weights p_j; limit > 0 stops once the estimate reaches
// it (ContractionAt).
func contraction(pooled hessian, clients []*RidgeOp, w []float64, m int, tol, limit float64) (float64, int) {
	return contractionOn(newLanczosSeq(pooled, clients, w, m), m, tol, limit)
}

// contractionOn is contraction on the steps of seq.
func contractionOn(seq *lanczosSeq, m int, tol, limit float64) (float64, int) {
	maxSteps := min(m, 400)
	for k := 1; ; k++ {
		alpha, beta, b := seq.step(k)
		if k <= 60 || k%5 == 0 || k == maxSteps || b == 0 {
			ups, done := estimate(alpha, beta, b, tol, limit)
			if done || k >= maxSteps {
				return ups, k
			}
		}
	}
}

// lanczosSeq is a Lanczos process (for the pooled Hessian H and the local
// solves of the clients with weights w) whose steps are computed once, on
// demand, and kept.
type lanczosSeq struct {
	mu    sync.Mutex
	l     *lanczos
	norms []float64 // norms[k−1]: the H-norm of step k's new direction
	z, hz []float64 // the direction of the last step, not yet accepted
}

func newLanczosSeq(pooled hessian, clients []*RidgeOp, w []float64, m int) *lanczosSeq {
	n := pooled.ScratchLen()
	for _, op := range clients {
		n = max(n, op.ScratchLen())
	}
	scratch := make([]float64, n)
	tmp, vs := make([][]float64, len(clients)), make([][]float64, len(clients))
	for j := range tmp {
		tmp[j] = make([]float64, m)
	}
	l := &lanczos{m: m,
		mulH: func(dst, v []float64) { pooled.MulTo(dst, v, 1, scratch) },
		mulA: func(dst, v []float64) {
			for j := range vs {
				vs[j] = v
			}
			SolveBatch(clients, tmp, vs, 1, scratch) // the clients' solves overlapped
			clear(dst)
			for j := range clients {
				floatsAxpy(w[j], tmp[j], dst)
			}
		}}
	return &lanczosSeq{l: l}
}

// step runs the process to its step k (k ≥ 1): the first vector, k − 1
// accepted directions and the k-th direction computed, and returns T's
// diagonal α_1…α_k, its off-diagonal β_1…β_{k−1} and the norm of the k-th
// direction. The slices are not changed later.
func (s *lanczosSeq) step(k int) (alpha, beta []float64, next float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.l.q == nil {
		s.l.start()
	}
	for len(s.norms) < k {
		if j := len(s.norms); j > 0 {
			s.l.accept(s.z, s.hz, s.norms[j-1])
		}
		var b float64
		s.z, s.hz, b = s.l.extend()
		s.norms = append(s.norms, b)
	}
	return s.l.alpha[:k:k], s.l.beta[: k-1 : k-1], s.norms[k-1]
}

// lanczos is the Lanczos process for the eigenvalues of AH, self-adjoint
// in the H inner product: the basis q (and Hq), and the tridiagonal T
// (alpha on its diagonal, beta off it) of AH in that basis.
type lanczos struct {
	m           int
	mulH, mulA  func(dst, v []float64)
	q, hq       [][]float64
	alpha, beta []float64
}

// start takes a seeded random first vector of H-norm 1.
func (l *lanczos) start() {
	rng := rand.New(rand.NewPCG(1, 1))
	v := make([]float64, l.m)
	for k := range v {
		v[k] = rng.NormFloat64()
	}
	hv := make([]float64, l.m)
	l.mulH(hv, v)
	nrm := math.Sqrt(dotN(v, hv, l.m))
	scal(1/nrm, v)
	scal(1/nrm, hv)
	l.q, l.hq = [][]float64{v}, [][]float64{hv}
}

// extend computes the next Lanczos direction z = AH q_k, orthogonalised
// against the basis, with Hz and its H-norm b, and records T's next
// diagonal entry.
func (l *lanczos) extend() (z, hz []float64, b float64) {
	m, k := l.m, len(l.q)
	z = make([]float64, m)
	l.mulA(z, l.hq[k-1]) // AH q_k
	l.alpha = append(l.alpha, dotN(l.hq[k-1], z, m))
	for range 2 { // full reorthogonalisation in the H inner product, twice
		for i := range l.q {
			floatsAxpy(-dotN(l.hq[i], z, m), l.q[i], z)
		}
	}
	hz = make([]float64, m)
	l.mulH(hz, z)
	return z, hz, math.Sqrt(math.Max(dotN(z, hz, m), 0))
}

// estimate returns Υ from the extreme Ritz values of T (diagonal alpha,
// off-diagonal beta; next the norm of the next direction) and whether to stop: Υ accurate to tol, the basis
// invariant, or Υ at limit (> 0).
func estimate(alpha, beta []float64, next, tol, limit float64) (ups float64, done bool) {
	k := len(alpha)
	lo, hi, resLo, resHi := ritz(alpha, beta, next)
	ups = math.Max(lo, hi)
	// Υ is set by one end of the spectrum: that end must be accurate, and
	// the other must not be able to overtake it.
	errUps, other, resOther := resLo, hi, resHi
	if hi > lo {
		errUps, other, resOther = resHi, lo, resLo
	}
	converged := k >= 2 && errUps <= tol*math.Max(1, ups) && other+resOther <= ups
	invariant := next <= 1e-13*math.Max(1, math.Abs(alpha[k-1]))
	return ups, invariant || converged || (limit > 0 && ups >= limit)
}

// accept normalises z (H-norm b) into the next basis vector.
func (l *lanczos) accept(z, hz []float64, b float64) {
	l.beta = append(l.beta, b)
	scal(1/b, z)
	scal(1/b, hz)
	l.q, l.hq = append(l.q, z), append(l.hq, hz)
}

// ritz returns 1 − θ_min and θ_max − 1 from the extreme eigenvalues θ of
// the symmetric tridiagonal T (diagonal alpha, off-diagonal beta) — Υ is
// the larger — and bounds of their errors from the residuals next·|s_k|
// (s the eigenvector of T, next the norm of the next Lanczos vector).
func ritz(alpha, beta []float64, next float64) (lo, hi, resLo, resHi float64) {
	k := len(alpha)
	d := append([]float64(nil), alpha...)
	e := append([]float64(nil), beta...)
	if k == 1 {
		return 1 - d[0], d[0] - 1, next, next
	}
	// The last components of T's eigenvectors: gonum's Dsteqr(EVTridiag)
	// bit for bit, carrying only the eigenvector matrix's last row.
	last := make([]float64, k)
	work := make([]float64, 2*k)
	if !dense.TridiagEigenLast(k, d, e, last, work) {
		return math.NaN(), math.NaN(), math.Inf(1), math.Inf(1)
	}
	// The residual r = next·|s_k| of a Ritz pair bounds the distance of its
	// value to the spectrum, and r²/gap does too once r is below the gap to
	// the neighbouring Ritz values (Kato–Temple): the quadratic bound lets
	// a converged extreme stop the process long before r itself is small.
	bound := func(res, gap float64) float64 {
		if gap > res {
			return math.Min(res, res*res/gap)
		}
		return res
	}
	resLo = bound(next*math.Abs(last[0]), d[1]-d[0])
	resHi = bound(next*math.Abs(last[k-1]), d[k-1]-d[k-2])
	return 1 - d[0], d[k-1] - 1, resLo, resHi
}

func scal(a float64, x []float64) {
	for i := range x {
		x[i] *= a
	}
}

// Causes of a contraction factor Υ ≥ 1 (ContractionDiagnosis.Cause).
const (
	CauseHeterogeneity = "heterogeneity across clients"
	CauseSmallLambda   = "a small λ"
	CauseFewSamples    = "few samples per client"
)

// ContractionDiagnosis says why FedNewton's contraction factor Υ is what
// it is, by two counterfactuals on the same features (docs/papers.md §4.3:
// Υ = Σ_j p_j P_j (2R_j + Δ_Dj/λ)(1 + Δ_Dj/λ) grows with the clients'
// sampling error R_j, with their heterogeneity Δ_Dj, and as λ shrinks):
//
//   - IID is Υ when the same samples are dealt at random to clients of the
//     same sizes: the heterogeneity terms vanish and only the sampling error
//     of |D_j| samples per client remains (the homogeneous Υ = 2Σ p_j P_j R_j);
//   - TenLambda is Υ at 10λ, the sensitivity to the regularisation.
//
// Cause is CauseHeterogeneity when Υ ≥ 1 but IID < 1 and at least
// hetMargin times smaller (the split, not the sample size, makes FedNewton
// diverge: a random split alone moves Υ by tens of percent — pendigits at
// σ² = 1, λ = 1e-4: 1.24 for its IID split, 0.98 for another); otherwise
// CauseSmallLambda when a tenfold λ brings Υ below 1; otherwise
// CauseFewSamples. Empty when Υ < 1.
type ContractionDiagnosis struct {
	Upsilon, IID, TenLambda float64
	Lambda                  float64
	Samples                 int // mean |D_j|
	Features                int // M
	Cause                   string
}

// Sentence explains the diagnosis in words, e.g. for a divergence message.
func (d ContractionDiagnosis) Sentence() string {
	head := fmt.Sprintf("FedNewton's contraction factor Υ = %.3g", d.Upsilon)
	switch d.Cause {
	case "":
		return fmt.Sprintf("%s < 1: it converges to KRR", head)
	case CauseHeterogeneity:
		return fmt.Sprintf("%s ≥ 1 because of %s: dealt at random to clients of the same sizes the same samples give Υ = %.3g (and 10λ gives %.3g)",
			head, d.Cause, d.IID, d.TenLambda)
	case CauseSmallLambda:
		return fmt.Sprintf("%s ≥ 1 because of %s (λ = %.3g for about %d samples per client and M = %d features): 10λ gives Υ = %.3g, dealing the same samples at random to clients of the same sizes %.3g",
			head, d.Cause, d.Lambda, d.Samples, d.Features, d.TenLambda, d.IID)
	}
	return fmt.Sprintf("%s ≥ 1 because of %s (about %d per client for M = %d features at λ = %.3g): dealt at random to clients of the same sizes the same samples give Υ = %.3g, and 10λ still %.3g",
		head, d.Cause, d.Samples, d.Features, d.Lambda, d.IID, d.TenLambda)
}

// hetMargin is how much smaller than Υ the Υ of an IID split must be for
// the diagnosis to blame heterogeneity.
const hetMargin = 1.5

// diagnosisTol is the accuracy of the counterfactual factors: they only
// need to tell a side of 1.
const diagnosisTol = 1e-3

// Diagnose computes the ContractionDiagnosis once (it builds the local
// statistics of an IID re-split, about the cost of preparing the clients
// again, so it is only worth it when Υ ≥ 1 needs explaining; below 1 it
// returns at once).
func (r *Ridge) Diagnose() ContractionDiagnosis {
	r.diagOnce.Do(func() { r.diag = r.diagnose() })
	return r.diag
}

func (r *Ridge) diagnose() ContractionDiagnosis {
	d := ContractionDiagnosis{Upsilon: r.Contraction(), IID: math.NaN(), TenLambda: math.NaN(), Lambda: r.Lambda,
		Samples: r.N / len(r.Clients), Features: r.M}
	if d.Upsilon < 1 {
		return d
	}
	// 10λ: every Hessian shifted by 9λ.
	if pooled, err := r.Pooled.Shifted(9 * r.Lambda); err == nil {
		ops := make([]*RidgeOp, len(r.Clients))
		errs := make([]error, len(ops))
		parallel.For(len(ops), func(j int) { ops[j], errs[j] = r.Clients[j].Op.Shifted(9 * r.Lambda) })
		if firstErr(errs) == nil {
			d.TenLambda, _ = contraction(pooled, ops, r.Weights, r.M, diagnosisTol, 0)
		}
	}
	if ops := r.iidOps(); ops != nil {
		d.IID, _ = contraction(r.Pooled, ops, r.Weights, r.M, diagnosisTol, 0)
	}
	switch {
	case d.IID < 1 && d.IID*hetMargin <= d.Upsilon:
		d.Cause = CauseHeterogeneity
	case d.TenLambda < 1:
		d.Cause = CauseSmallLambda
	default:
		d.Cause = CauseFewSamples
	}
	return d
}

// iidStream seeds the IID re-split of Diagnose.
const iidStream = 1<<42 + 7

// iidOps returns the local Hessians of the same samples dealt at random to
// clients of the same sizes (the pooled Hessian is unchanged), or nil when
// the samples were not kept.
func (r *Ridge) iidOps() []*RidgeOp {
	if r.sets == nil || r.fm == nil {
		return nil
	}
	all := datasets.Concat(r.sets)
	perm := datasets.Permutation(all.N, rand.New(rand.NewPCG(1, iidStream)))
	ops := make([]*RidgeOp, len(r.sets))
	errs := make([]error, len(ops))
	lo := make([]int, len(r.sets)+1)
	for j, s := range r.sets {
		lo[j+1] = lo[j] + s.N
	}
	parallel.For(len(ops), func(j int) {
		h := clientStats(all.Subset(perm[lo[j]:lo[j+1]]), r.fm, all.Classes)
		ops[j], errs[j] = h.op(r.M, r.Lambda, true)
	})
	if firstErr(errs) != nil {
		return nil
	}
	return ops
}

func firstErr(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// diagnosis state of a Ridge (kept apart from its definition for clarity).
type diagState struct {
	diagOnce sync.Once
	diag     ContractionDiagnosis
}
