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
	i := 0
	if k > 0 {
		for ; i+3 < m; i += 4 {
			j := 0
			for ; j+7 < n; j += 8 {
				gemm4x8(k, a[i:], lda, b[j:], ldb, &acc)
				for q := 0; q < 4; q++ {
					copy(c[(i+q)*ldc+j:(i+q)*ldc+j+8], acc[q*8:q*8+8])
				}
			}
			gemmTNEdge(i, i+4, j, n, k, a, lda, b, ldb, c, ldc)
		}
	}
	gemmTNEdge(i, m, 0, n, k, a, lda, b, ldb, c, ldc)
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
