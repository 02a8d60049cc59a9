package dense

// GemmTN sets the m×n row-major C (stride ldc) to AᵀB for the k×m A
// (stride lda) and the k×n B (stride ldb), the same bits as gonum's
// Dgemm(blas.Trans, blas.NoTrans, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
// for finite A and B: c_ij = Σ_l a_li·b_lj summed in increasing l from zero
// (gonum adds a_li·b_lj row l by row l; it skips the a_li that are zero,
// whose products would add ±0 to a sum that is never −0, which changes
// nothing). It computes C in tiles of 4×8 entries whose sums stay in
// registers, reading A and B where they are.
func GemmTN(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k > 0 && (len(a) < (k-1)*lda+m || len(b) < (k-1)*ldb+n) || len(c) < (m-1)*ldc+n {
		panic("dense: GemmTN: slice too short")
	}
	var acc [32]float64
	if k > 0 && m >= 4 && n >= 8 {
		// Last tiles that would run past C are moved back to end at its
		// edge (as in GemmNN).
		for i0 := 0; i0 < m; i0 += 4 {
			i := min(i0, m-4)
			for j0 := 0; j0 < n; j0 += 8 {
				j := min(j0, n-8)
				gemm4x8(k, a[i:], lda, b[j:], ldb, &acc)
				for q := 0; q < 4; q++ {
					*(*[8]float64)(c[(i+q)*ldc+j:]) = *(*[8]float64)(acc[q*8:])
				}
			}
		}
		return
	}
	gemmTNEdge(0, m, 0, n, k, a, lda, b, ldb, c, ldc)
}

// gemmTNEdge computes the entries (i, j), i ∈ [i0, i1), j ∈ [j0, j1), of
// GemmTN one at a time.
func gemmTNEdge(i0, i1, j0, j1, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	for i := i0; i < i1; i++ {
		for j := j0; j < j1; j++ {
			var s float64
			for l := 0; l < k; l++ {
				s += float64(a[l*lda+i] * b[l*ldb+j])
			}
			c[i*ldc+j] = s
		}
	}
}

// GemmNN sets the m×n row-major C (stride ldc) to A·B for the m×k A
// (stride lda) and the k×n B (stride ldb), the same bits as gonum's
// Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
// for finite A and B: c_ij = Σ_l a_il·b_lj summed in increasing l from zero
// (gonum's zero a_il, which it skips, change nothing, as in GemmTN). Four
// rows of A at a time are packed column by column, and C is computed in
// 4×8 tiles whose sums stay in registers.
func GemmNN(m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k > 0 && (len(a) < (m-1)*lda+k || len(b) < (k-1)*ldb+n) || len(c) < (m-1)*ldc+n {
		panic("dense: GemmNN: slice too short")
	}
	if k > 0 && n >= 8 {
		buf := packPool.Get().(*[]float64)
		defer packPool.Put(buf)
		if cap(*buf) < 4*k {
			*buf = make([]float64, 4*k)
		}
		pa := (*buf)[:4*k]
		var acc [32]float64
		// A last row group or column panel that would run past C is moved
		// back to end at its edge: the entries it computes again get the
		// same bits, each entry's sum depending on its row and column only.
		for i0 := 0; i0 < m && m >= 4; i0 += 4 {
			i := min(i0, m-4)
			for q := 0; q < 4; q++ {
				row := a[(i+q)*lda : (i+q)*lda+k]
				for l, v := range row {
					pa[l*4+q] = v
				}
			}
			for j0 := 0; j0 < n; j0 += 8 {
				j := min(j0, n-8)
				gemm4x8(k, pa, 4, b[j:], ldb, &acc)
				for q := 0; q < 4; q++ {
					*(*[8]float64)(c[(i+q)*ldc+j:]) = *(*[8]float64)(acc[q*8:])
				}
			}
		}
		if m >= 4 {
			return
		}
	}
	gemmNNEdge(0, m, 0, n, k, a, lda, b, ldb, c, ldc)
}

// gemmNNEdge computes the entries (i, j), i ∈ [i0, i1), j ∈ [j0, j1), of
// GemmNN one at a time.
func gemmNNEdge(i0, i1, j0, j1, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	for i := i0; i < i1; i++ {
		row := a[i*lda : i*lda+k]
		for j := j0; j < j1; j++ {
			var s float64
			for l, v := range row {
				s += float64(v * b[l*ldb+j])
			}
			c[i*ldc+j] = s
		}
	}
}

// GemmTNAcc sets the m×n C (stride ldc) to beta·C + alpha·AᵀB for the k×m A
// and k×n B, the same bits as gonum's Dgemm(blas.Trans, blas.NoTrans, m, n,
// k, alpha, a, lda, b, ldb, beta, c, ldc) for finite numbers: C is first
// scaled by beta (zeroed for beta = 0, left alone for beta = 1), then
// c_ij += (alpha·a_li)·b_lj for l in increasing order. The scaled
// coefficients alpha·A are packed four columns at a time and C is updated in
// 4×8 tiles started from its own entries; a last tile that would run past C
// is moved back to end at its edge and stores only the entries no earlier
// tile has.
func GemmTNAcc(m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k > 0 && (len(a) < (k-1)*lda+m || len(b) < (k-1)*ldb+n) || len(c) < (m-1)*ldc+n {
		panic("dense: GemmTNAcc: slice too short")
	}
	if beta != 1 {
		scaleRect(m, n, beta, c, ldc)
	}
	if alpha == 0 || k == 0 {
		return
	}
	if !useAVX2 || m < 4 || n < 8 {
		gemmTNAccGo(m, n, k, alpha, a, lda, b, ldb, c, ldc)
		return
	}
	gemmTNAccAVX2(m, n, k, alpha, a, lda, b, ldb, c, ldc)
}

// scaleRect multiplies the m×n C (stride ldc) by beta, zeroing it for
// beta = 0 (so that NaN or Inf in C do not survive, as in gonum).
func scaleRect(m, n int, beta float64, c []float64, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// gemmTNAccGo is the pure-Go path of GemmTNAcc: c_ij += (alpha·a_li)·b_lj,
// row i of C at a time, l in increasing order.
func gemmTNAccGo(m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	for i := 0; i < m; i++ {
		for l := 0; l < k; l++ {
			t := alpha * a[l*lda+i]
			row, br := c[i*ldc:i*ldc+n], b[l*ldb:l*ldb+n]
			for j, v := range br {
				row[j] += float64(t * v)
			}
		}
	}
}

// gemmTNAccBlock is the number of columns of alpha·A that gemmTNAccAVX2
// packs at a time.
const gemmTNAccBlock = 64

// gemmTNAccAVX2 is the AVX2 path of GemmTNAcc (m ≥ 4, n ≥ 8): alpha·A is
// packed gemmTNAccBlock columns at a time (contiguous reads of each of its
// rows), and the 4-row groups of C read their coefficients there.
func gemmTNAccAVX2(m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	const block = gemmTNAccBlock
	buf := packPool.Get().(*[]float64)
	defer packPool.Put(buf)
	if cap(*buf) < (block+3)*k {
		*buf = make([]float64, (block+3)*k)
	}
	for b0 := 0; b0 < m; b0 += block {
		b1 := min(b0+block, m)
		p0 := min(b0, m-4) // a last group moved back may start before b0
		w := b1 - p0
		pa := (*buf)[:w*k]
		packScaledCols(pa, w, k, alpha, a, lda, p0, b1)
		gemmTNAccTiles(n, k, pa, w, p0, b0, b1, m, b, ldb, c, ldc)
	}
}

// packScaledCols sets pa (k×w, w = b1−p0) to alpha times columns p0…b1−1
// of the k rows of A.
func packScaledCols(pa []float64, w, k int, alpha float64, a []float64, lda, p0, b1 int) {
	for l := 0; l < k; l++ {
		src, dst := a[l*lda+p0:l*lda+b1], pa[l*w:(l+1)*w]
		for r, v := range src {
			dst[r] = alpha * v
		}
	}
}

// gemmTNAccTiles updates rows b0…b1−1 of C in 4×8 tiles started from C's
// own entries, with the coefficients packed in pa (columns p0…b1−1 of
// alpha·A, stride w); a tile moved back to end at C's edge stores only the
// entries no earlier tile has.
func gemmTNAccTiles(n, k int, pa []float64, w, p0, b0, b1, m int, b []float64, ldb int, c []float64, ldc int) {
	var acc [32]float64
	for i0 := b0; i0 < b1; i0 += 4 {
		i := min(i0, m-4)
		for j0 := 0; j0 < n; j0 += 8 {
			j := min(j0, n-8)
			for q := 0; q < 4; q++ {
				*(*[8]float64)(acc[q*8:]) = *(*[8]float64)(c[(i+q)*ldc+j:])
			}
			gemm4x8AccAVX2(k, &pa[i-p0], 8*w, &b[j], 8*ldb, &acc)
			for q := i0 - i; q < 4; q++ {
				for p := j0 - j; p < 8; p++ {
					c[(i+q)*ldc+j+p] = acc[q*8+p]
				}
			}
		}
	}
}
