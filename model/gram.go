package model

import (
	"slices"

	"github.com/fedscope/fedscope/internal/parallel"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/gonum"
)

// Block sizes of symRankTo: a stripe of gramChunk columns of A is walked in
// panels of gramPanel rows, so that the panel being re-read (gramPanel ×
// gramChunk numbers, 256 KB) stays in the level-2 cache while every row
// pair of a task passes over it; gramTask rows of output form one task.
const (
	gramChunk = 256
	gramPanel = 128
	gramTask  = 64
)

// symRankTo sets the upper triangle of the r×r row-major c to
// alpha·A·Aᵀ + beta·c for the r×n row-major A: entry (k, l) is the dot
// product of rows k and l of A. It is the Gram matrix ΦᵀΦ of features
// stored feature-major (A = Φᵀ) and the kernel matrix ΦΦᵀ of features
// stored sample-major (A = Φ), the work that dominates a ridge problem
// with thousands of random features (docs/papers.md §4.4).
//
// It replaces gonum's Dsyrk, which walks the whole output once per row of A
// (memory-bound here): output rows are split into tasks run on all cores,
// each task sweeps A in column stripes, and a 2×4 register block of dot
// products is summed per stripe. Every entry is summed in the same order
// (stripe by stripe, index by index) whichever task computes it, so the
// result is the same on any number of CPUs. The strict lower triangle of c
// is not touched, and nothing is allocated.
func symRankTo(c, a []float64, r, n int, alpha, beta float64) {
	symRankStrided(c, r, a, r, n, alpha, beta)
}

// symRankStrided is symRankTo for c with row stride ldc ≥ r.
func symRankStrided(c []float64, ldc int, a []float64, r, n int, alpha, beta float64) {
	if r == 0 {
		return
	}
	if len(a) < r*n || len(c) < (r-1)*ldc+r {
		panic("model: symRankTo: slice too short")
	}
	tasks := (r + gramTask - 1) / gramTask
	parallel.For(tasks, func(t int) {
		k0, k1 := t*gramTask, min((t+1)*gramTask, r)
		if beta != 1 {
			for k := k0; k < k1; k++ {
				row := c[k*ldc+k : k*ldc+r]
				if beta == 0 {
					clear(row)
					continue
				}
				for i := range row {
					row[i] *= beta
				}
			}
		}
		for lo := 0; lo < n; lo += gramChunk {
			hi := min(lo+gramChunk, n)
			for l0 := k0; l0 < r; l0 += gramPanel {
				l1 := min(l0+gramPanel, r)
				gramStripe(c, ldc, a, r, n, k0, k1, l0, l1, lo, hi, alpha)
			}
		}
	})
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
		// R₁₂ = R₁₁⁻ᵀ A₁₂.
		blas64.Trsm(blas.Left, blas.Trans, 1,
			blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: nb, Stride: m, Data: a[k0*m+k0:]},
			blas64.General{Rows: nb, Cols: rest, Stride: m, Data: a[k0*m+k1:]})
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

// gramStripe adds alpha times the dot products over columns lo..hi of rows
// k ∈ [k0, k1) with rows l ∈ [max(l0, k), l1) of a to c[k, l].
func gramStripe(c []float64, ldc int, a []float64, r, n, k0, k1, l0, l1, lo, hi int, alpha float64) {
	k := k0
	for ; k+1 < k1 && k+1 < l1; k += 2 {
		a0, a1 := a[k*n+lo:k*n+hi], a[(k+1)*n+lo:(k+1)*n+hi]
		c0, c1 := c[k*ldc:k*ldc+r], c[(k+1)*ldc:(k+1)*ldc+r]
		l := max(l0, k)
		if l == k { // the diagonal block: (k,k), (k,k+1), (k+1,k+1)
			s00, s01, s11 := dot3(a0, a1)
			c0[k] += alpha * s00
			c0[k+1] += alpha * s01
			c1[k+1] += alpha * s11
			l += 2
		}
		for ; l+3 < l1; l += 4 {
			s00, s01, s02, s03, s10, s11, s12, s13 := dot24(a0, a1,
				a[l*n+lo:l*n+hi], a[(l+1)*n+lo:(l+1)*n+hi], a[(l+2)*n+lo:(l+2)*n+hi], a[(l+3)*n+lo:(l+3)*n+hi])
			c0[l] += alpha * s00
			c0[l+1] += alpha * s01
			c0[l+2] += alpha * s02
			c0[l+3] += alpha * s03
			c1[l] += alpha * s10
			c1[l+1] += alpha * s11
			c1[l+2] += alpha * s12
			c1[l+3] += alpha * s13
		}
		for ; l < l1; l++ {
			s0, s1 := dot12(a0, a1, a[l*n+lo:l*n+hi])
			c0[l] += alpha * s0
			c1[l] += alpha * s1
		}
	}
	for ; k < k1; k++ { // a last odd row
		a0 := a[k*n+lo : k*n+hi]
		c0 := c[k*ldc : k*ldc+r]
		for l := max(l0, k); l < l1; l++ {
			s0, _ := dot12(a0, a0, a[l*n+lo:l*n+hi])
			c0[l] += alpha * s0
		}
	}
}

// dot24 returns the eight dot products of x0, x1 with y0..y3 (equal
// lengths), each summed in index order: a 2×4 register block, so every
// load feeds four or two multiply-adds. Pure Go on purpose (issue 14: one
// static binary, the same bytes on every CPU).
func dot24(x0, x1, y0, y1, y2, y3 []float64) (s00, s01, s02, s03, s10, s11, s12, s13 float64) {
	n := len(x0)
	x1, y0, y1, y2, y3 = x1[:n], y0[:n], y1[:n], y2[:n], y3[:n]
	for i := 0; i < n; i++ {
		a, b := x0[i], x1[i]
		u0, u1, u2, u3 := y0[i], y1[i], y2[i], y3[i]
		s00 += a * u0
		s01 += a * u1
		s02 += a * u2
		s03 += a * u3
		s10 += b * u0
		s11 += b * u1
		s12 += b * u2
		s13 += b * u3
	}
	return
}

// dot3 returns x0·x0, x0·x1 and x1·x1.
func dot3(x0, x1 []float64) (s00, s01, s11 float64) {
	n := len(x0)
	x1 = x1[:n]
	for i := 0; i < n; i++ {
		a, b := x0[i], x1[i]
		s00 += a * a
		s01 += a * b
		s11 += b * b
	}
	return
}

// dot12 returns x0·y and x1·y.
func dot12(x0, x1, y []float64) (s0, s1 float64) {
	n := len(x0)
	x1, y = x1[:n], y[:n]
	for i := 0; i < n; i++ {
		s0 += x0[i] * y[i]
		s1 += x1[i] * y[i]
	}
	return
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
