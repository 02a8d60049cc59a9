package model

import (
	"sync"

	"github.com/fedscope/fedscope/internal/dense"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Stats holds what the squared loss of one client needs,
// l_i(θ) = 1/(2 n_i) ‖y_i − X_i θ‖² (docs/papers.md §1.2, paper 000).
//
// When n_i ≥ d the Gram matrix X_iᵀX_i/n_i is cheaper to apply than the raw
// design (d² against 2·n_i·d per product), so it is computed once and kept;
// when n_i < d only the raw design is used. X and Y always point at the
// federation's data (never copied) because the minibatch variants need rows.
type Stats struct {
	N, Dim int
	Gram   []float64 // X_iᵀX_i/n_i, d×d row-major (both triangles); nil when N < Dim
	XtY    []float64 // X_iᵀy_i/n_i
	X, Y   []float64 // raw design (n_i×d row-major) and responses

	kernel *kernelCache // X_i X_iᵀ for the minibatch proximal step, built on first use
}

// kernelCache holds a client's n×n kernel matrix X Xᵀ, built once on first
// use (by the minibatch FedProx racer) and shared by every later epoch,
// racer and re-run: each batch's B×B system is then a gather instead of
// B²/2 inner products of length d.
type kernelCache struct {
	once sync.Once
	k    []float64 // n×n row-major, both triangles; nil when over maxKernel
}

// maxKernel bounds the kernel cache of one client (n² numbers, 32 MB).
const maxKernel = 2000 * 2000

// Kernel returns X Xᵀ (n×n, row-major), or nil when the client is too large
// to keep it.
func (s *Stats) Kernel() []float64 {
	if s.kernel == nil || s.N*s.N > maxKernel {
		return nil
	}
	s.kernel.once.Do(func() {
		k := make([]float64, s.N*s.N)
		dense.SyrkUpper(s.N, s.Dim, 1, s.X, s.Dim, 0, k, s.N)
		mirrorUpper(k, s.N)
		s.kernel.k = k
	})
	return s.kernel.k
}

// NewStats computes the statistics of one client's data.
func NewStats(x, y []float64, n, d int) Stats {
	s := Stats{N: n, Dim: d, X: x, Y: y, XtY: make([]float64, d), kernel: &kernelCache{}}
	if n == 0 {
		return s
	}
	xm := blas64.General{Rows: n, Cols: d, Stride: d, Data: x}
	inv := 1 / float64(n)
	gemv(blas.Trans, inv, xm, y, 0, s.XtY)
	if n >= d {
		s.Gram = make([]float64, d*d)
		gramUpperPooled(s.Gram, x, n, d, inv, 0)
		mirrorUpper(s.Gram, d)
	}
	return s
}

// HessianTo sets dst = (X_iᵀX_i/n_i)·u, the Hessian of l_i applied to u.
// scratch must hold N numbers when the client has no Gram matrix.
func (s *Stats) HessianTo(dst, u, scratch []float64) {
	if s.Gram != nil {
		gemv(blas.NoTrans, 1, s.gram(), u, 0, dst)
		return
	}
	xm := s.design()
	r := scratch[:s.N]
	gemv(blas.NoTrans, 1, xm, u, 0, r)
	gemv(blas.Trans, 1/float64(s.N), xm, r, 0, dst)
}

// GradientTo sets dst = ∇l_i(u) = (1/n_i) X_iᵀ(X_i u − y_i) (docs/papers.md §1.2).
func (s *Stats) GradientTo(dst, u, scratch []float64) {
	s.HessianTo(dst, u, scratch)
	for k, b := range s.XtY {
		dst[k] -= b
	}
}

// ScratchLen returns how many numbers of scratch GradientTo needs.
func (s *Stats) ScratchLen() int {
	if s.Gram != nil {
		return 0
	}
	return s.N
}

func (s *Stats) gram() blas64.General {
	return blas64.General{Rows: s.Dim, Cols: s.Dim, Stride: s.Dim, Data: s.Gram}
}

func (s *Stats) design() blas64.General {
	return blas64.General{Rows: s.N, Cols: s.Dim, Stride: s.Dim, Data: s.X}
}

// Row returns the j-th row x_ij of the design.
func (s *Stats) Row(j int) []float64 { return s.X[j*s.Dim : (j+1)*s.Dim] }

func vec(x []float64) blas64.Vector { return blas64.Vector{N: len(x), Inc: 1, Data: x} }

// mirrorUpper copies the upper triangle of a row-major n×n matrix into the
// lower one.
func mirrorUpper(a []float64, n int) {
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			a[j*n+i] = a[i*n+j]
		}
	}
}
