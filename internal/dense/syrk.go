package dense

// SyrkUpper computes the upper triangle of C = alpha·A·Aᵀ + beta·C for the
// n×k row-major A (stride lda) and the n×n row-major C (stride ldc), the
// same bits as gonum's Dsyrk(blas.Upper, blas.NoTrans, …) on amd64: entry
// (i, j), j ≥ i, becomes alpha·Dot(a_i, a_j) when beta is 0 and
// c_ij·beta + alpha·Dot(a_i, a_j) otherwise (each product rounded, then the
// sum); with alpha = 0 it is only scaled by beta (zeroed for beta = 0). The
// strict lower triangle is not touched.
//
// The dot products are computed eight at a time (two rows of A against four
// others), which reads each row of A once per block instead of once per
// entry, and on AVX2 keeps each product's four partial sums in one register.
func SyrkUpper(n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	if n == 0 {
		return
	}
	if len(a) < lda*(n-1)+k || len(c) < ldc*(n-1)+n {
		panic("dense: SyrkUpper: slice too short")
	}
	if alpha == 0 {
		for i := 0; i < n; i++ {
			row := c[i*ldc+i : i*ldc+n]
			for j := range row {
				if beta == 0 {
					row[j] = 0
				} else {
					row[j] *= beta
				}
			}
		}
		return
	}
	set := func(i, j int, d float64) {
		p := &c[i*ldc+j]
		if beta == 0 {
			*p = float64(alpha * d)
		} else {
			*p = float64(*p*beta) + float64(alpha*d)
		}
	}
	row := func(i int) []float64 { return a[i*lda : i*lda+k] }
	i := 0
	for ; i+1 < n; i += 2 {
		a0, a1 := row(i), row(i+1)
		j := i
		for ; j+3 < n; j += 4 {
			var d [8]float64
			dots2x4(k, a0, a1, row(j), row(j+1), row(j+2), row(j+3), &d)
			for q := 0; q < 4; q++ {
				set(i, j+q, d[q])
				if j+q >= i+1 {
					set(i+1, j+q, d[4+q])
				}
			}
		}
		for ; j < n; j++ {
			set(i, j, Dot(a0, row(j)))
			if j >= i+1 {
				set(i+1, j, Dot(a1, row(j)))
			}
		}
	}
	if i < n { // a last odd row
		a0 := row(i)
		j := i
		for ; j+3 < n; j += 4 {
			var d [4]float64
			dots1x4(k, a0, row(j), row(j+1), row(j+2), row(j+3), &d)
			for q := 0; q < 4; q++ {
				set(i, j+q, d[q])
			}
		}
		for ; j < n; j++ {
			set(i, j, Dot(a0, row(j)))
		}
	}
}
