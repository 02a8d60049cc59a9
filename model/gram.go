package model

import (
	"github.com/fedscope/fedscope/internal/parallel"
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
// with thousands of random features (PAPERS.md §4.4).
//
// It replaces gonum's Dsyrk, which walks the whole output once per row of A
// (memory-bound here): output rows are split into tasks run on all cores,
// each task sweeps A in column stripes, and a 2×4 register block of dot
// products is summed per stripe. Every entry is summed in the same order
// (stripe by stripe, index by index) whichever task computes it, so the
// result is the same on any number of CPUs. The strict lower triangle of c
// is not touched.
func symRankTo(c, a []float64, r, n int, alpha, beta float64) {
	if r == 0 {
		return
	}
	if len(a) < r*n || len(c) < r*r {
		panic("model: symRankTo: slice too short")
	}
	tasks := (r + gramTask - 1) / gramTask
	parallel.For(tasks, func(t int) {
		k0, k1 := t*gramTask, min((t+1)*gramTask, r)
		acc := make([]float64, (k1-k0)*r) // rows k0..k1 of the result
		for lo := 0; lo < n; lo += gramChunk {
			hi := min(lo+gramChunk, n)
			for l0 := k0; l0 < r; l0 += gramPanel {
				l1 := min(l0+gramPanel, r)
				gramStripe(acc, a, r, n, k0, k1, l0, l1, lo, hi)
			}
		}
		for k := k0; k < k1; k++ {
			row, src := c[k*r+k:(k+1)*r], acc[(k-k0)*r+k:(k-k0+1)*r]
			if beta == 0 {
				for i, v := range src {
					row[i] = alpha * v
				}
				continue
			}
			for i, v := range src {
				row[i] = alpha*v + beta*row[i]
			}
		}
	})
}

// gramStripe adds to acc (rows k0..k1 of the output, r columns) the dot
// products over columns lo..hi of rows k ∈ [k0, k1) with rows
// l ∈ [max(l0, k), l1) of a.
func gramStripe(acc, a []float64, r, n, k0, k1, l0, l1, lo, hi int) {
	k := k0
	for ; k+1 < k1 && k+1 < l1; k += 2 {
		a0, a1 := a[k*n+lo:k*n+hi], a[(k+1)*n+lo:(k+1)*n+hi]
		c0, c1 := acc[(k-k0)*r:(k-k0+1)*r], acc[(k+1-k0)*r:(k+2-k0)*r]
		l := max(l0, k)
		if l == k { // the diagonal block: (k,k), (k,k+1), (k+1,k+1)
			s00, s01, s11 := dot3(a0, a1)
			c0[k] += s00
			c0[k+1] += s01
			c1[k+1] += s11
			l += 2
		}
		for ; l+3 < l1; l += 4 {
			s00, s01, s02, s03, s10, s11, s12, s13 := dot24(a0, a1,
				a[l*n+lo:l*n+hi], a[(l+1)*n+lo:(l+1)*n+hi], a[(l+2)*n+lo:(l+2)*n+hi], a[(l+3)*n+lo:(l+3)*n+hi])
			c0[l] += s00
			c0[l+1] += s01
			c0[l+2] += s02
			c0[l+3] += s03
			c1[l] += s10
			c1[l+1] += s11
			c1[l+2] += s12
			c1[l+3] += s13
		}
		for ; l < l1; l++ {
			s0, s1 := dot12(a0, a1, a[l*n+lo:l*n+hi])
			c0[l] += s0
			c1[l] += s1
		}
	}
	for ; k < k1; k++ { // a last odd row
		a0 := a[k*n+lo : k*n+hi]
		c0 := acc[(k-k0)*r : (k-k0+1)*r]
		for l := max(l0, k); l < l1; l++ {
			s0, _ := dot12(a0, a0, a[l*n+lo:l*n+hi])
			c0[l] += s0
		}
	}
}

// dot24 returns the eight dot products of x0, x1 with y0..y3 (equal
// lengths), each summed in index order.
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
