package model

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// condLimit is the largest condition number of a Gram or kernel matrix that
// a Cholesky solve is trusted with; beyond it the SVD decides the rank.
const condLimit = 1e12

// MinNormLeastSquares returns the minimum-norm least-squares solution
// θ̂ = X⁺y of the n×d design x (row-major) and responses y, the local
// benchmark estimator of the federation gain (docs/papers.md §1.8, paper 000):
//
//	n ≥ d:  θ̂ = (XᵀX)⁻¹ Xᵀy          (ordinary least squares)
//	n < d:  θ̂ = Xᵀ (XXᵀ)⁻¹ y         (the interpolant of least norm)
//
// both by a Cholesky factorisation of the smaller Gram matrix. When that
// matrix is singular or too ill-conditioned to trust (rank-deficient X,
// e.g. a covariate subspace with fewer coordinates than rows), X⁺y is taken
// from a thin SVD with relative rank tolerance 1e-12, which is the
// Moore–Penrose pseudo-inverse in every case.
func MinNormLeastSquares(x, y []float64, n, d int) []float64 {
	if len(x) != n*d || len(y) != n {
		panic("model: MinNormLeastSquares: slice lengths do not match n×d")
	}
	theta := make([]float64, d)
	if n == 0 || d == 0 {
		return theta
	}
	xm := blas64.General{Rows: n, Cols: d, Stride: d, Data: x}
	m, trans := d, blas.Trans // Gram XᵀX (d×d)
	if n < d {
		m, trans = n, blas.NoTrans // kernel XXᵀ (n×n)
	}
	g := make([]float64, m*m)
	blas64.Syrk(trans, 1, xm, 0, blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: g})
	var ch mat.Cholesky
	if ch.Factorize(mat.NewSymDense(m, g)) && ch.Cond() < condLimit {
		rhs := make([]float64, m)
		if n >= d {
			gemv(blas.Trans, 1, xm, y, 0, rhs) // Xᵀy
		} else {
			copy(rhs, y)
		}
		sol := mat.NewVecDense(m, nil)
		if err := ch.SolveVecTo(sol, mat.NewVecDense(m, rhs)); err == nil {
			if n >= d {
				copy(theta, sol.RawVector().Data)
			} else {
				gemv(blas.Trans, 1, xm, sol.RawVector().Data, 0, theta) // Xᵀα
			}
			return theta
		}
	}
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(n, d, append([]float64(nil), x...)), mat.SVDThin) {
		return theta
	}
	rank := svd.Rank(1e-12)
	if rank == 0 {
		return theta
	}
	var sol mat.Dense
	svd.SolveTo(&sol, mat.NewDense(n, 1, append([]float64(nil), y...)), rank)
	return mat.Col(theta, 0, &sol)
}

// MinNormLeastSquaresOn is MinNormLeastSquares for a design whose rows use
// only the coordinates in support (ascending; nil means all d): the
// pseudo-inverse of X with zero columns is that of the non-zero columns,
// padded with zeros, so the work is on n×|support| numbers.
func MinNormLeastSquaresOn(x, y []float64, n, d int, support []int) []float64 {
	if support == nil {
		return MinNormLeastSquares(x, y, n, d)
	}
	r := len(support)
	xe := gather(x, n, d, support)
	sol := MinNormLeastSquares(xe, y, n, r)
	theta := make([]float64, d)
	for a, k := range support {
		theta[k] = sol[a]
	}
	return theta
}

// gather copies the columns listed in support of an n×d row-major matrix.
func gather(x []float64, n, d int, support []int) []float64 {
	r := len(support)
	out := make([]float64, n*r)
	for j := 0; j < n; j++ {
		row := x[j*d : (j+1)*d]
		dst := out[j*r : (j+1)*r]
		for a, k := range support {
			dst[a] = row[k]
		}
	}
	return out
}
