package model

import (
	"slices"

	"github.com/fedscope/fedscope/internal/dense"
	"github.com/fedscope/fedscope/internal/parallel"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack/gonum"
)

// symRankTo sets the upper triangle of the r×r row-major c to
// alpha·A·Aᵀ + beta·c for the r×n row-major A: entry (k, l) is the dot
// product of rows k and l of A. It is the Gram matrix ΦᵀΦ of features
// stored feature-major (A = Φᵀ) and the kernel matrix ΦΦᵀ of features
// stored sample-major (A = Φ), the work that dominates a ridge problem
// with thousands of random features (docs/papers.md §4.4).
//
// It is dense.SymRank on all cores: gonum's Dsyrk walks the whole output
// once per row of A (memory-bound here), dense.SymRank computes tiles of
// the output from packed stripes of A. Every entry is summed in the same
// order (stripe by stripe, index by index) whichever task computes it, so
// the result is the same on any number of CPUs. The strict lower triangle
// of c is not touched.
func symRankTo(c, a []float64, r, n int, alpha, beta float64) {
	symRankStrided(c, r, a, r, n, alpha, beta)
}

// symRankStrided is symRankTo for c with row stride ldc ≥ r.
func symRankStrided(c []float64, ldc int, a []float64, r, n int, alpha, beta float64) {
	dense.SymRank(c, ldc, a, n, r, n, alpha, beta, parallel.For)
}

// cholBlock is the block size of cholesky.
const cholBlock = 128

// cholesky factorises the symmetric positive definite m×m matrix whose
// upper triangle a holds (row-major, stride m) as A = RᵀR, R upper
// triangular, in place; the strict lower triangle is not touched. It
// reports false when A is not positive definite.
//
// Right-looking blocked Cholesky: factor a diagonal block (LAPACK's
// unblocked Dpotf2), solve the block row beside it (Dtrsm), and update the
// trailing matrix A₂₂ −= R₁₂ᵀR₁₂ — nearly all of the m³/3 work — with
// symRankStrided, which is several times faster here than the Dgemm gonum's
// Dpotrf uses, and runs on all cores with the same bytes on any number of
// them.
func cholesky(a []float64, m int) bool {
	impl := gonum.Implementation{}
	var t []float64
	for k0 := 0; k0 < m; k0 += cholBlock {
		k1 := min(k0+cholBlock, m)
		nb := k1 - k0
		if !impl.Dpotf2(blas.Upper, nb, a[k0*m+k0:], m) {
			return false
		}
		rest := m - k1
		if rest == 0 {
			break
		}
		// R₁₂ = R₁₁⁻ᵀ A₁₂ (gonum's Dtrsm, bit for bit).
		dense.TrsmUpperTrans(nb, rest, a[k0*m+k0:], m, a[k0*m+k1:], m)
		// A₂₂ −= R₁₂ᵀR₁₂: dot products of the columns of R₁₂.
		t = slices.Grow(t[:0], rest*nb)[:rest*nb]
		for i := 0; i < nb; i++ {
			row := a[(k0+i)*m+k1 : (k0+i)*m+m]
			for j, v := range row {
				t[j*nb+i] = v
			}
		}
		symRankStrided(a[k1*m+k1:], m, t, rest, nb, -1, 1)
	}
	return true
}

// transposeTo sets dst (cols×rows) to the transpose of src (rows×cols),
// both row-major, in cache-sized tiles.
func transposeTo(dst, src []float64, rows, cols int) {
	const tile = 32
	for i0 := 0; i0 < rows; i0 += tile {
		i1 := min(i0+tile, rows)
		for j0 := 0; j0 < cols; j0 += tile {
			j1 := min(j0+tile, cols)
			for i := i0; i < i1; i++ {
				row := src[i*cols : (i+1)*cols]
				for j := j0; j < j1; j++ {
					dst[j*rows+i] = row[j]
				}
			}
		}
	}
}
