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
		scaleUpperRows(c, ldc, n, 0, n, beta)
		return
	}
	if useAVX2 && n >= 4 && k >= 4 {
		syrkUpperPacked(n, k, alpha, a, lda, beta, c, ldc)
		return
	}
	i := 0
	for ; i+1 < n; i += 2 {
		syrkUpperRows2(i, n, k, alpha, a, lda, beta, c, ldc)
	}
	if i < n { // a last odd row
		syrkUpperRow1(i, n, k, alpha, a, lda, beta, c, ldc)
	}
}

// syrkSet sets the entry *p of C from the dot product d as SyrkUpper does:
// alpha·d for beta = 0, else *p·beta + alpha·d.
func syrkSet(p *float64, d, alpha, beta float64) {
	if beta == 0 {
		*p = float64(alpha * d)
	} else {
		*p = float64(*p*beta) + float64(alpha*d)
	}
}

// syrkUpperRows2 computes the entries j ≥ i of rows i and i+1 of C on the
// pure-Go path of SyrkUpper, eight dot products at a time.
func syrkUpperRows2(i, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	row := func(i int) []float64 { return a[i*lda : i*lda+k] }
	a0, a1 := row(i), row(i+1)
	j := i
	for ; j+3 < n; j += 4 {
		var d [8]float64
		dots2x4(k, a0, a1, row(j), row(j+1), row(j+2), row(j+3), &d)
		for q := 0; q < 4; q++ {
			syrkSet(&c[i*ldc+j+q], d[q], alpha, beta)
			if j+q >= i+1 {
				syrkSet(&c[(i+1)*ldc+j+q], d[4+q], alpha, beta)
			}
		}
	}
	for ; j < n; j++ {
		syrkSet(&c[i*ldc+j], Dot(a0, row(j)), alpha, beta)
		if j >= i+1 {
			syrkSet(&c[(i+1)*ldc+j], Dot(a1, row(j)), alpha, beta)
		}
	}
}

// syrkUpperRow1 computes the entries j ≥ i of the last row i of an odd n
// on the pure-Go path of SyrkUpper, four dot products at a time.
func syrkUpperRow1(i, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	row := func(i int) []float64 { return a[i*lda : i*lda+k] }
	a0 := row(i)
	j := i
	for ; j+3 < n; j += 4 {
		var d [4]float64
		dots1x4(k, a0, row(j), row(j+1), row(j+2), row(j+3), &d)
		for q := 0; q < 4; q++ {
			syrkSet(&c[i*ldc+j+q], d[q], alpha, beta)
		}
	}
	for ; j < n; j++ {
		syrkSet(&c[i*ldc+j], Dot(a0, row(j)), alpha, beta)
	}
}

// syrkUpperPacked is SyrkUpper on AVX2 as four products with sequential
// sums: partial sum q of Dot(a_i, a_j) is the sum, in order, of the
// products over the columns ≡ q (mod 4) (for q = 0 followed by the last
// k mod 4 columns), so the columns of A are dealt into four lanes, each
// packed into panels of eight rows, and each lane's sums come from 4×8 tiles
// of sequential sums (gemm4x8) before the four are combined as Dot does.
func syrkUpperPacked(n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	n4 := k / 4
	kc := [4]int{k - 3*n4, n4, n4, n4} // lane 0 takes the tail
	panels := (n + 7) / 8
	size := panels * 8 * k
	buf := packPool.Get().(*[]float64)
	defer packPool.Put(buf)
	if cap(*buf) < size {
		*buf = make([]float64, size)
	}
	p := (*buf)[:size]
	// Lane q of panel t starts at off[q] + t·8·kc[q].
	var off [4]int
	for q := 1; q < 4; q++ {
		off[q] = off[q-1] + panels*8*kc[q-1]
	}
	for t := 0; t < panels; t++ {
		syrkPackPanel(p, off, kc, t, n, k, a, lda)
	}
	var acc [4][32]float64
	for iq := 0; iq < n; iq += 4 {
		for jp := iq &^ 7; jp < n; jp += 8 {
			for q := 0; q < 4; q++ {
				base := off[q]
				pa := p[base+(iq/8)*8*kc[q]+iq%8:]
				pb := p[base+(jp/8)*8*kc[q]:]
				gemm4x8(kc[q], pa, 8, pb, 8, &acc[q])
			}
			syrkStoreTile(&acc, iq, jp, n, alpha, beta, c, ldc)
		}
	}
}

// syrkPackPanel deals rows 8t…8t+7 of A (zeros past row n) into panel t of
// the four lanes of p: column 4m+q goes to lane q, the last k mod 4 columns
// to lane 0.
func syrkPackPanel(p []float64, off, kc [4]int, t, n, k int, a []float64, lda int) {
	n4 := kc[1]
	d0, d1 := p[off[0]+t*8*kc[0]:off[0]+(t+1)*8*kc[0]], p[off[1]+t*8*n4:off[1]+(t+1)*8*n4]
	d2, d3 := p[off[2]+t*8*n4:off[2]+(t+1)*8*n4], p[off[3]+t*8*n4:off[3]+(t+1)*8*n4]
	for r := 0; r < 8; r++ {
		i := t*8 + r
		if i >= n {
			for m := 0; m < n4; m++ {
				d0[m*8+r], d1[m*8+r], d2[m*8+r], d3[m*8+r] = 0, 0, 0, 0
			}
			for m := n4; m < kc[0]; m++ {
				d0[m*8+r] = 0
			}
			continue
		}
		row := a[i*lda : i*lda+k]
		for m := 0; m < n4; m++ {
			x := row[4*m : 4*m+4]
			d0[m*8+r], d1[m*8+r], d2[m*8+r], d3[m*8+r] = x[0], x[1], x[2], x[3]
		}
		for m := n4; m < kc[0]; m++ {
			d0[m*8+r] = row[3*n4+m]
		}
	}
}

// syrkStoreTile combines the four lanes' 4×8 tiles of sums at rows
// iq…iq+3, columns jp…jp+7 as Dot does and stores the entries j ≥ i
// inside C.
func syrkStoreTile(acc *[4][32]float64, iq, jp, n int, alpha, beta float64, c []float64, ldc int) {
	for r := 0; r < 4 && iq+r < n; r++ {
		i := iq + r
		crow := c[i*ldc : i*ldc+n]
		for e := max(jp, i) - jp; e < 8 && jp+e < n; e++ {
			x := r*8 + e
			d := (acc[0][x] + acc[2][x]) + (acc[1][x] + acc[3][x])
			if beta == 0 {
				crow[jp+e] = float64(alpha * d)
			} else {
				crow[jp+e] = float64(crow[jp+e]*beta) + float64(alpha*d)
			}
		}
	}
}
