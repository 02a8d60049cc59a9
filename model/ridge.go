package model

import (
	"errors"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/internal/dense"
	"github.com/fedscope/fedscope/internal/parallel"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// FeatureMap maps rows of inputs to rows of features.
type FeatureMap interface {
	// Dims returns the input and feature dimensions.
	Dims() (in, out int)
	// MapTo sets dst (n×out) to the features of the n rows of x (n×in).
	MapTo(dst, x []float64, n int)
}

// Dims implements FeatureMap.
func (f *RFF) Dims() (in, out int) { return f.In, f.Out }

// Identity is the feature map φ(x) = x on R^d.
type Identity int

// Dims implements FeatureMap.
func (d Identity) Dims() (in, out int) { return int(d), int(d) }

// MapTo implements FeatureMap.
func (d Identity) MapTo(dst, x []float64, n int) { copy(dst[:n*int(d)], x[:n*int(d)]) }

// Ridge is a federation prepared for ridge regression in a finite feature
// space (docs/papers.md §4.1, paper 003). With the normalised design of §4.1,
// client j has the Hessian and right-hand side
//
//	H_j = Φ_jᵀΦ_j/|D_j| + λI,   b_j = Φ_jᵀY_j/|D_j|,
//
// and the global objective (1/(2|D|)) Σ‖Φw − y‖² + (λ/2)‖w‖² has
// H = Σ p_j H_j, b = Σ p_j b_j with p_j = |D_j|/|D|. Multiclass data regress
// one-hot targets: W is M×C (one column per class, sharing H_j) and the
// prediction is the argmax (§8). Everything is computed once and shared,
// read-only, by every racer.
//
// A client with |D_j| ≥ M keeps the Cholesky factor of its M×M Hessian; a
// client with fewer samples keeps Φ_j and the factor of the |D_j|×|D_j|
// kernel system instead (Woodbury), so a small file with M = 2000 features
// costs little. RidgeStats.At builds one from statistics that do not
// depend on λ, so that a grid of λ costs one factorisation per value.
type Ridge struct {
	M, C    int     // feature dimension, outputs (1, or the number of classes)
	Classes int     // 0 for regression
	Lambda  float64 // λ
	N       int     // |D|
	Clients []RidgeClient
	Weights []float64 // p_j
	B       []float64 // b = Φᵀy/|D|, M×C row-major
	Pooled  *RidgeOp  // H

	KRR  []float64 // w_KRR = H⁻¹b (docs/papers.md §4.1)
	DKRR []float64 // w_DKRR = Σ p_j H_j⁻¹ b_j

	TestPhi []float64 // test features, NTest×M
	TestY   []float64 // test responses or class indices
	NTest   int

	proxMu sync.Mutex
	prox   map[float64][]*RidgeOp

	contrOnce sync.Once
	contr     float64
	seqOnce   sync.Once
	seq       *lanczosSeq // the Lanczos process of Contraction and NewtonSpectrum

	// The data the problem was built from, kept (read-only, shared) for
	// the diagnosis of a contraction factor above 1 (Diagnose).
	sets []*datasets.Set
	fm   FeatureMap
	diagState
}

// RidgeClient is one client's ridge statistics.
type RidgeClient struct {
	N  int
	B  []float64 // b_j, M×C
	Op *RidgeOp  // H_j
}

// RidgeOp applies and inverts a ridge Hessian ΦᵀΦ/n + λI to M×C blocks.
type RidgeOp struct {
	n, m   int
	lambda float64
	// Primal (n ≥ m): r is the upper Cholesky factor R of H = RᵀR, m×m.
	// Dual (n < m): phi is Φ (n×m) and r the factor of ΦΦᵀ + nλI (n×n).
	r   []float64
	phi []float64
}

// ScratchLen returns the scratch length MulTo and SolveTo need per output
// column.
func (o *RidgeOp) ScratchLen() int {
	if o.phi == nil {
		return 0
	}
	return o.n
}

// MulTo sets dst = H·w for M×C blocks (row-major); scratch holds
// ScratchLen()·C numbers. dst and w must not overlap.
func (o *RidgeOp) MulTo(dst, w []float64, c int, scratch []float64) {
	if o.phi == nil {
		copy(dst, w)
		if c == 1 { // H w = Rᵀ(R w): matrix–vector products are much faster here
			dense.TrmvUpper(o.m, o.r, o.m, dst)
			dense.TrmvUpperTrans(o.m, o.r, o.m, dst)
			return
		}
		dense.TrmmUpper(o.m, c, o.r, o.m, dst, c) // gonum's Dtrmm, bit for bit
		dense.TrmmUpperTrans(o.m, c, o.r, o.m, dst, c)
		return
	}
	t := scratch[:o.n*c]
	phi := general(o.n, o.m, o.phi)
	copy(dst, w)
	if c == 1 { // H w = Φᵀ(Φw)/n + λw with matrix–vector products (a one-column Gemm is far slower)
		gemv(blas.NoTrans, 1, phi, w, 0, t)
		gemv(blas.Trans, 1/float64(o.n), phi, t, o.lambda, dst)
		return
	}
	dense.GemmNN(o.n, c, o.m, o.phi, o.m, w, c, t, c) // gonum's Dgemm, bit for bit
	dense.GemmTNAcc(o.m, c, o.n, 1/float64(o.n), o.phi, o.m, t, c, o.lambda, dst, c)
}

// SolveTo sets dst = H⁻¹·v for M×C blocks; scratch as for MulTo. dst and v
// must not overlap.
func (o *RidgeOp) SolveTo(dst, v []float64, c int, scratch []float64) {
	if o.phi == nil {
		copy(dst, v)
		if c == 1 { // Rᵀ y = v, then R x = y
			dense.TrsvUpperTrans(o.m, o.r, o.m, dst)
			dense.TrsvUpper(o.m, o.r, o.m, dst)
			return
		}
		// gonum's Dpotrs (two Dtrsm), bit for bit.
		dense.TrsmUpperTrans(o.m, c, o.r, o.m, dst, c)
		dense.TrsmUpper(o.m, c, o.r, o.m, dst, c)
		return
	}
	// (ΦᵀΦ/n + λI)⁻¹ = (1/λ)[I − Φᵀ(nλI + ΦΦᵀ)⁻¹Φ] (Woodbury).
	t := scratch[:o.n*c]
	phi := general(o.n, o.m, o.phi)
	copy(dst, v)
	if c == 1 {
		gemv(blas.NoTrans, 1, phi, v, 0, t)
		dense.TrsvUpperTrans(o.n, o.r, o.n, t)
		dense.TrsvUpper(o.n, o.r, o.n, t)
		gemv(blas.Trans, -1/o.lambda, phi, t, 1/o.lambda, dst)
		return
	}
	dense.GemmNN(o.n, c, o.m, o.phi, o.m, v, c, t, c)
	dense.TrsmUpperTrans(o.n, c, o.r, o.n, t, c)
	dense.TrsmUpper(o.n, c, o.r, o.n, t, c)
	dense.GemmTNAcc(o.m, c, o.n, -1/o.lambda, o.phi, o.m, t, c, 1/o.lambda, dst, c)
}

// SolveBatch sets dst[j] = ops[j]⁻¹·v[j] for every j, the same bits as
// ops[j].SolveTo(dst[j], v[j], c, scratch) one after the other. For one
// column, the back substitutions of the primal operators of one size run
// four at a time (dense.TrsvUpperBatch), which overlaps their chains of
// dependent additions; everything else is SolveTo.
func SolveBatch(ops []*RidgeOp, dst, v [][]float64, c int, scratch []float64) {
	var rs, xs [][]float64
	m := -1
	for j, op := range ops {
		if c != 1 || op.phi != nil || (m >= 0 && op.m != m) {
			op.SolveTo(dst[j], v[j], c, scratch)
			continue
		}
		m = op.m
		copy(dst[j], v[j])
		dense.TrsvUpperTrans(op.m, op.r, op.m, dst[j])
		rs, xs = append(rs, op.r), append(xs, dst[j])
	}
	if len(rs) > 0 {
		dense.TrsvUpperBatch(m, rs, m, xs)
	}
}

// ErrNotPositive reports a Hessian that could not be factorised.
var ErrNotPositive = errors.New("ridge Hessian is not positive definite (λ too small for the data?)")

// newPrimal factors gram + λI in place (gram: upper triangle of ΦᵀΦ/n).
func newPrimal(gram []float64, n, m int, lambda float64) (*RidgeOp, error) {
	for k := 0; k < m; k++ {
		gram[k*m+k] += lambda
	}
	if !cholesky(gram, m) {
		return nil, ErrNotPositive
	}
	return &RidgeOp{n: n, m: m, lambda: lambda, r: gram}, nil
}

// newDual factors ΦΦᵀ + nλI for n×m features phi, in place in kern (the
// upper triangle of ΦΦᵀ, n×n).
func newDual(phi, kern []float64, n, m int, lambda float64) (*RidgeOp, error) {
	for i := 0; i < n; i++ {
		kern[i*n+i] += float64(n) * lambda
	}
	if !cholesky(kern, n) {
		return nil, ErrNotPositive
	}
	return &RidgeOp{n: n, m: m, lambda: lambda, r: kern, phi: phi}, nil
}

// kernelOf returns the upper triangle of ΦΦᵀ for n×m features phi.
func kernelOf(phi []float64, n, m int) []float64 {
	k := make([]float64, n*n)
	symRankTo(k, phi, n, m, 1, 0)
	return k
}

// Shifted returns the operator of H + μI (FedProx's local system).
func (o *RidgeOp) Shifted(mu float64) (*RidgeOp, error) {
	if o.phi != nil {
		return newDual(o.phi, kernelOf(o.phi, o.n, o.m), o.n, o.m, o.lambda+mu)
	}
	// H = RᵀR; the lower triangle of r is zero (cholesky leaves it as the
	// statistics left it).
	rt := make([]float64, o.m*o.m)
	transposeTo(rt, o.r, o.m, o.m)
	g := make([]float64, o.m*o.m)
	symRankTo(g, rt, o.m, o.m, 1, 0) // RᵀR: dot products of the columns of R
	return newPrimal(g, o.n, o.m, mu)
}

// targetsTo writes the regression targets, or one-hot rows for classes > 0.
func targetsTo(dst, y []float64, classes int) {
	if classes == 0 {
		copy(dst, y)
		return
	}
	clear(dst)
	for i, k := range y {
		dst[i*classes+int(k)] = 1
	}
}

// RidgeWork is the scratch memory of one goroutine working on a Ridge
// problem, so that rounds allocate nothing.
type RidgeWork struct {
	Scratch []float64 // max n × C over the operators
	V, U    []float64 // M×C
	Pred    []float64 // NTest×C
}

// NewWork sizes a workspace for the problem.
func (r *Ridge) NewWork() *RidgeWork {
	n := r.Pooled.ScratchLen()
	for j := range r.Clients {
		n = max(n, r.Clients[j].Op.ScratchLen())
	}
	return &RidgeWork{Scratch: make([]float64, n*r.C), V: make([]float64, r.M*r.C), U: make([]float64, r.M*r.C),
		Pred: make([]float64, r.NTest*r.C)}
}

// Evaluate returns the test mean squared error of W (for classes, of the
// one-hot targets, summed over classes) and the test accuracy of the argmax
// prediction (NaN for regression); both NaN without a test set.
func (r *Ridge) Evaluate(w []float64, ws *RidgeWork) (mse, acc float64) {
	s := r.Score(w, ws)
	return s.MSE, s.Acc
}

// Score is a test evaluation with the standard errors of its means (the
// noise level a tuning rule compares differences with).
type Score struct {
	MSE, Acc     float64 // as Ridge.Evaluate
	MSESE, AccSE float64 // standard errors: sd(squared errors)/√n, √(acc(1−acc)/n)
}

// Score evaluates W on the test set (Evaluate) with standard errors.
func (r *Ridge) Score(w []float64, ws *RidgeWork) Score {
	out := Score{MSE: math.NaN(), Acc: math.NaN(), MSESE: math.NaN(), AccSE: math.NaN()}
	if r.NTest == 0 {
		return out
	}
	c := r.C
	if c == 1 {
		gemv(blas.NoTrans, 1, general(r.NTest, r.M, r.TestPhi), w, 0, ws.Pred)
	} else {
		dense.GemmNN(r.NTest, c, r.M, r.TestPhi, r.M, w, c, ws.Pred, c) // gonum's Dgemm, bit for bit
	}
	var se, se2 float64
	correct := 0
	for i := 0; i < r.NTest; i++ {
		p := ws.Pred[i*c : (i+1)*c]
		var e float64
		if r.Classes == 0 {
			d := p[0] - r.TestY[i]
			e = d * d
		} else {
			truth, best := int(r.TestY[i]), 0
			for k, v := range p {
				d := v
				if k == truth {
					d--
				}
				e += d * d
				if v > p[best] {
					best = k
				}
			}
			if best == truth {
				correct++
			}
		}
		se += e
		se2 += e * e
	}
	n := float64(r.NTest)
	out.MSE = se / n
	out.MSESE = math.Sqrt(math.Max(se2/n-out.MSE*out.MSE, 0) / n)
	if r.Classes > 0 {
		out.Acc = float64(correct) / n
		out.AccSE = math.Sqrt(out.Acc * (1 - out.Acc) / n)
	}
	return out
}

// GradNorm returns ‖H W − b‖_F, the norm of the gradient of the global ridge
// objective (docs/papers.md §4.1).
func (r *Ridge) GradNorm(w []float64, ws *RidgeWork) float64 {
	r.Pooled.MulTo(ws.U, w, r.C, ws.Scratch)
	var s float64
	for k, b := range r.B {
		d := ws.U[k] - b
		s += d * d
	}
	return math.Sqrt(s)
}

// ProxOps returns the operators of H_j + μI for every client (FedProx's
// local systems, docs/papers.md §4.5), factorised once per μ and cached.
func (r *Ridge) ProxOps(mu float64) ([]*RidgeOp, error) {
	r.proxMu.Lock()
	defer r.proxMu.Unlock()
	if ops, ok := r.prox[mu]; ok {
		return ops, nil
	}
	ops := make([]*RidgeOp, len(r.Clients))
	errs := make([]error, len(r.Clients))
	parallel.For(len(r.Clients), func(j int) { ops[j], errs[j] = r.Clients[j].Op.Shifted(mu) })
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	r.prox[mu] = ops
	return ops, nil
}

// DataHeterogeneity returns the empirical data heterogeneity of §4.6,
// Δ_Dj = ‖Φ_DᵀΦ_D − Φ_DjᵀΦ_Dj‖ = ‖H − H_j‖ (spectral norm, by power
// iteration on the symmetric difference), per client and averaged with
// weights p_j (§8). It lives here rather than in datasets because it is
// measured in feature space.
func (r *Ridge) DataHeterogeneity() (avg float64, perClient []float64) {
	m := r.M
	perClient = make([]float64, len(r.Clients))
	parallel.For(len(r.Clients), func(j int) {
		ws := r.NewWork()
		v, a, b := make([]float64, m), make([]float64, m), make([]float64, m)
		rng := rand.New(rand.NewPCG(2, uint64(j)))
		for k := range v {
			v[k] = rng.NormFloat64()
		}
		var lam float64
		for it := 0; it < 100; it++ {
			nrm := Norm(v)
			if nrm == 0 {
				break
			}
			for k := range v {
				v[k] /= nrm
			}
			r.Pooled.MulTo(a, v, 1, ws.Scratch)
			r.Clients[j].Op.MulTo(b, v, 1, ws.Scratch)
			for k := range v {
				v[k] = a[k] - b[k]
			}
			lam = Norm(v)
		}
		perClient[j] = lam
	})
	for j, d := range perClient {
		avg += r.Weights[j] * d
	}
	return avg, perClient
}

func general(rows, cols int, data []float64) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: data}
}

// gemv is blas64.Gemv for unit-stride vectors with dense's kernels, the
// same bits as gonum's (dense.GemvN, dense.GemvT).
func gemv(t blas.Transpose, alpha float64, a blas64.General, x []float64, beta float64, y []float64) {
	if t == blas.NoTrans {
		dense.GemvN(a.Rows, a.Cols, alpha, a.Data, a.Stride, x, beta, y)
		return
	}
	dense.GemvT(a.Rows, a.Cols, alpha, a.Data, a.Stride, x, beta, y)
}
