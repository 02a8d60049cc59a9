package dense

// GemvN sets y = alpha·A·x + beta·y for the m×n row-major A (stride lda)
// with the same bits as gonum's Dgemv(blas.NoTrans, …) with unit strides
// on amd64 (its SSE2 GemvN): per row, the products of even and of odd
// columns are summed apart in increasing column over the whole pairs of
// columns, then added; a last odd column's product is added to that —
// except on the last row of an odd m, where gonum adds it to the even sum
// first; then y_i = beta·y_i + alpha·h, with y first set to zero when beta
// is 0 (and left alone when alpha is 0 and beta is 1, scaled when alpha is
// 0). Eight rows at a time keep their even and odd sums in four AVX2
// registers.
func GemvN(m, n int, alpha float64, a []float64, lda int, x []float64, beta float64, y []float64) {
	if m == 0 || n == 0 {
		return
	}
	if len(a) < (m-1)*lda+n || len(x) < n || len(y) < m {
		panic("dense: GemvN: slice too short")
	}
	if alpha == 0 {
		if beta != 1 {
			for i := range y[:m] {
				y[i] *= beta
			}
		}
		return
	}
	if beta == 0 {
		clear(y[:m])
	}
	n2 := n / 2
	finish := func(i int, se, so float64) {
		if n%2 == 1 {
			p := float64(a[i*lda+n-1] * x[n-1])
			if m%2 == 1 && i == m-1 {
				se += p
				se = se + so
			} else {
				se = (se + so) + p
			}
		} else {
			se += so
		}
		y[i] = float64(y[i]*beta) + float64(alpha*se)
	}
	i := 0
	if useAVX2 && n2 > 0 {
		var acc [32]float64
		for ; i+7 < m; i += 8 {
			gemvN8AVX2(n2, &a[i*lda], 8*lda, &x[0], &acc)
			for r := 0; r < 8; r++ {
				base := (r/2)*4 + (r%2)*2 // rows 2k and 2k+1 share register k
				finish(i+r, acc[base], acc[base+1])
			}
		}
	}
	for ; i < m; i++ {
		row := a[i*lda : i*lda+2*n2]
		var se, so float64
		for t := 0; t < n2; t++ {
			se += float64(row[2*t] * x[2*t])
			so += float64(row[2*t+1] * x[2*t+1])
		}
		finish(i, se, so)
	}
}

// GemvT sets y = alpha·Aᵀ·x + beta·y for the m×n row-major A (stride lda),
// y of n numbers, with the same bits as gonum's Dgemv(blas.Trans, …) with
// unit strides on amd64 (its SSE2 GemvT): y is first scaled by beta (set to
// zero for beta = 0, left alone for 1), then y_j += (alpha·x_i)·a_ij for the
// rows i in order. Sixteen entries of y at a time stay in AVX2 registers
// while the rows stream past.
func GemvT(m, n int, alpha float64, a []float64, lda int, x []float64, beta float64, y []float64) {
	if m == 0 || n == 0 {
		return
	}
	if len(a) < (m-1)*lda+n || len(x) < m || len(y) < n {
		panic("dense: GemvT: slice too short")
	}
	y = y[:n]
	if alpha == 0 {
		if beta != 1 {
			for j := range y {
				y[j] *= beta
			}
		}
		return
	}
	switch beta {
	case 1:
	case 0:
		clear(y)
	default:
		for j := range y {
			y[j] *= beta
		}
	}
	buf := padPool.Get().(*[]float64)
	defer padPool.Put(buf)
	if cap(*buf) < m {
		*buf = make([]float64, m)
	}
	coef := (*buf)[:m]
	for i, v := range x[:m] {
		coef[i] = alpha * v
	}
	// Rows in blocks of gemvTRows, so that a block's rows stay in cache while
	// y passes over them in chunks of sixteen (gonum passes four rows at a
	// time over all of y); each y_j still adds the rows in order.
	for i0 := 0; i0 < m; i0 += gemvTRows {
		gemvTRowBlock(min(gemvTRows, m-i0), n, i0, a, lda, coef, y)
	}
}

// gemvTRows is the number of rows of A that GemvT adds to y at a time.
const gemvTRows = 16

// gemvTRowBlock adds rows i0…i0+rows−1 of A, times their coefficients
// coef[i], to the n numbers of y in row order: with AVX2 sixteen entries of
// y at a time, then chunks of sixteen or of the multiple of four left, then
// the last n mod 4 entries one at a time.
func gemvTRowBlock(rows, n, i0 int, a []float64, lda int, coef, y []float64) {
	var acc [16]float64
	j0 := 0
	if useAVX2 && n >= 16 {
		nc := n / 16
		_ = a[(i0+rows-1)*lda+16*nc-1]
		gemvTBlockAVX2(rows, nc, &a[i0*lda], 8*lda, &coef[i0], &y[0])
		j0 = 16 * nc
	}
	for ; j0 < n; j0 += 16 {
		w := min(16, (n-j0)&^3) // 16 numbers, or the multiple of four left
		if w == 0 {
			break
		}
		s := acc[:w]
		copy(s, y[j0:j0+w])
		rowSum(false, rows, a, i0*lda+j0, lda, coef, i0, 1, s)
		copy(y[j0:j0+w], s)
		if w < 16 {
			j0 += w
			break
		}
	}
	for j := j0; j < n; j++ { // the last n mod 4
		s := y[j]
		for i := i0; i < i0+rows; i++ {
			s += float64(coef[i] * a[i*lda+j])
		}
		y[j] = s
	}
}
