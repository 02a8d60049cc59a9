package model

import (
	"math"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/internal/dense"
	"github.com/fedscope/fedscope/internal/parallel"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// SubspaceSpectrum is a thin eigendecomposition of one client's Hessian
// G_i = X_iᵀX_i/n_i on the coordinates its rows use:
//
//	G_i = P (Q Λ Qᵀ) Pᵀ,   P = the d×r selection of the support E_i,
//
// with Q an r×k matrix of orthonormal columns and Λ the k non-zero
// eigenvalues (k ≤ min(n_i, r)). Every direction outside the columns of
// P Q lies in the null space of X_i: there a gradient step or a proximal
// step leaves θ unchanged, so the local map of FedAvg (s steps) and of
// FedProx is the identity plus a correction confined to span(P Q)
// (docs/papers.md §1.3–§1.4, closed forms of the local maps).
//
// In the covariate-subspace model of E000-4 (docs/papers.md §1.9) a client's rows
// live on r of the d coordinates, so the decomposition costs O(n r²+ r³)
// instead of O(n d² + d³), and for n_i < r the n_i×n_i kernel X X ᵀ is
// decomposed instead of the r×r Gram matrix.
type SubspaceSpectrum struct {
	Coords []int     // the support E_i, ascending; nil means all d coordinates
	R, K   int       // r = |E_i| and the number k of eigenpairs kept
	Q      []float64 // r×k row-major, orthonormal columns
	Lambda []float64 // the k eigenvalues of X_iᵀX_i/n_i, ascending
	QtB    []float64 // Qᵀ Pᵀ X_iᵀy_i/n_i
}

// NewSubspaceSpectrum decomposes the Hessian of a client with n rows x
// (row-major, d columns) and responses y whose rows are zero outside
// support (nil: all coordinates). Eigenvalues below 1e-13 of the largest
// belong to the null space of X and are dropped when the kernel is used.
func NewSubspaceSpectrum(x, y []float64, n, d int, support []int) SubspaceSpectrum {
	r := d
	xe := x
	if support != nil {
		r = len(support)
		xe = gather(x, n, d, support)
	}
	sp := SubspaceSpectrum{Coords: support, R: r}
	if n == 0 || r == 0 {
		return sp
	}
	xm := blas64.General{Rows: n, Cols: r, Stride: r, Data: xe}
	inv := 1 / float64(n)
	b := make([]float64, r) // X_Eᵀy/n
	gemv(blas.Trans, inv, xm, y, 0, b)
	if n < r {
		sp.setKernel(xe, b, n, r, support, &LocalWork{})
		return sp
	}
	var es mat.EigenSym
	g := make([]float64, r*r)
	blas64.Syrk(blas.Trans, inv, xm, 0, blas64.Symmetric{Uplo: blas.Upper, N: r, Stride: r, Data: g})
	if !es.Factorize(mat.NewSymDense(r, g), true) {
		panic("model: eigendecomposition of a client Hessian failed")
	}
	var q mat.Dense
	es.VectorsTo(&q)
	sp.K, sp.Lambda = r, es.Values(nil)
	sp.Q = append([]float64(nil), q.RawMatrix().Data...)
	sp.QtB = make([]float64, sp.K)
	gemv(blas.Trans, 1, sp.q(), b, 0, sp.QtB)
	return sp
}

func (sp *SubspaceSpectrum) q() blas64.General {
	return blas64.General{Rows: sp.R, Cols: sp.K, Stride: max(sp.K, 1), Data: sp.Q}
}

// SubspaceSpectra decomposes every client of a federation, in parallel (one
// client per task, so the result does not depend on scheduling).
func SubspaceSpectra(fed *datasets.Federation) []SubspaceSpectrum {
	out := make([]SubspaceSpectrum, len(fed.Clients))
	parallel.For(len(out), func(i int) {
		c := &fed.Clients[i]
		out[i] = NewSubspaceSpectrum(c.X, c.Y, c.N, fed.Dim, c.Support)
	})
	return out
}

// AddOuterTo adds w·P Q diag(f) Qᵀ Pᵀ to the d×d row-major matrix a, where
// f has one entry per eigenpair. It costs O(r² k); work, if it holds at
// least r·k + r² numbers, is used as scratch instead of allocating.
func (sp *SubspaceSpectrum) AddOuterTo(a []float64, d int, w float64, f []float64, work []float64) {
	r, k := sp.R, sp.K
	if k == 0 || w == 0 {
		return
	}
	if len(work) < r*k+r*r {
		work = make([]float64, r*k+r*r)
	}
	out := work[r*k : r*k+r*r]
	sp.outerTo(out, f, work[:r*k])
	for i := 0; i < r; i++ {
		ri := i
		if sp.Coords != nil {
			ri = sp.Coords[i]
		}
		dst := a[ri*d : (ri+1)*d]
		src := out[i*r : (i+1)*r]
		if sp.Coords == nil {
			blas64.Axpy(w, vec(src), vec(dst))
			continue
		}
		for j, v := range src {
			dst[sp.Coords[j]] += w * v
		}
	}
}

// outerTo sets out (r×r, both triangles) to Q diag(f) Qᵀ, by a symmetric
// rank-k update of Q diag(√f) when every f is ≥ 0 (stable step sizes), by a
// general product otherwise. qf must hold r·k numbers.
func (sp *SubspaceSpectrum) outerTo(out, f, qf []float64) {
	r, k := sp.R, sp.K
	if k == 0 {
		clear(out[:r*r])
		return
	}
	nonneg := true
	for _, v := range f[:k] {
		nonneg = nonneg && v >= 0
	}
	scale := out[:k] // free until the product below
	for j, v := range f[:k] {
		scale[j] = v
		if nonneg {
			scale[j] = math.Sqrt(v)
		}
	}
	for row := 0; row < r; row++ {
		q, dst := sp.Q[row*k:(row+1)*k], qf[row*k:(row+1)*k]
		for j, c := range scale {
			dst[j] = q[j] * c
		}
	}
	qfm := blas64.General{Rows: r, Cols: k, Stride: k, Data: qf[:r*k]}
	if nonneg {
		dense.SyrkUpper(r, k, 1, qfm.Data, k, 0, out, r)
		mirrorUpper(out, r)
	} else {
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, qfm, sp.q(), 0, blas64.General{Rows: r, Cols: r, Stride: r, Data: out})
	}
}

// TermTo sets dm (r×r) and v (r) to a local map u ↦ u − D u + v of a
// kernel-form client from its eigenpairs: D = Q diag(comp) Qᵀ and
// v = Q (geo ∘ Qᵀb), with (comp, geo) = coef(λ) per eigenvalue
// (GDCoefficients or ProxCoefficients). work must hold r·k + 2k numbers.
func (sp *SubspaceSpectrum) TermTo(dm, v, work []float64, coef func(lambda float64) (comp, geo float64)) {
	r, k := sp.R, sp.K
	comp, z, qf := work[:k], work[k:2*k], work[2*k:2*k+r*k]
	for j, lam := range sp.Lambda {
		c, g := coef(lam)
		comp[j], z[j] = c, g*sp.QtB[j]
	}
	sp.outerTo(dm, comp, qf)
	if k == 0 {
		clear(v[:r])
		return
	}
	gemv(blas.NoTrans, 1, sp.q(), z, 0, v[:r])
}

// AddVecTo adds w·P Q (g ∘ QᵀPᵀb) to the d-vector c, with b = X_iᵀy_i/n_i.
func (sp *SubspaceSpectrum) AddVecTo(c []float64, w float64, g []float64) {
	if sp.K == 0 || w == 0 {
		return
	}
	z := make([]float64, sp.K)
	for j := range z {
		z[j] = g[j] * sp.QtB[j]
	}
	v := make([]float64, sp.R)
	gemv(blas.NoTrans, 1, sp.q(), z, 0, v)
	for a, x := range v {
		k := a
		if sp.Coords != nil {
			k = sp.Coords[a]
		}
		c[k] += w * x
	}
}

// GDCoefficients returns, for s full-batch gradient steps with step η along
// an eigen-direction of curvature λ (docs/papers.md §1.3, A = I − ηΛ):
//
//	pow  = (1 − ηλ)^s
//	comp = 1 − (1 − ηλ)^s
//	geo  = Σ_{τ<s} (1 − ηλ)^τ · η = comp/λ   (s·η when λ = 0)
//
// comp and geo are computed through log1p/expm1, so they stay accurate when
// ηλ is tiny (nearly flat directions of the subspace and polynomial models).
func GDCoefficients(lambda, eta float64, s int) (pow, comp, geo float64) {
	x := eta * lambda
	switch {
	case x == 0:
		return 1, 0, float64(s) * eta
	case x < 1:
		l := float64(s) * math.Log1p(-x)
		pow, comp = math.Exp(l), -math.Expm1(l)
	default:
		pow = math.Pow(1-x, float64(s))
		comp = 1 - pow
	}
	return pow, comp, comp / lambda
}

// ProxCoefficients returns, for the exact proximal step with parameter η
// along an eigen-direction of curvature λ (docs/papers.md §1.4,
// u ← (1 + ηλ)⁻¹(u + η b̃)): mult = 1/(1 + ηλ), comp = 1 − mult = ηλ/(1 + ηλ)
// and the input gain geo = η/(1 + ηλ).
func ProxCoefficients(lambda, eta float64) (mult, comp, geo float64) {
	mult = 1 / (1 + eta*lambda)
	return mult, eta * lambda * mult, eta * mult
}
