package dense

import "sync"

// The multi-column kernels below apply an upper triangular m×m row-major R
// (stride lda, non-unit diagonal) to an m×c row-major B (stride ldb) in
// place, with the same bits as gonum's Dtrmm and Dtrsm (blas.Left,
// blas.Upper, alpha = 1) for finite numbers: every row of the result is
// one running sum, over rows of B (or of the solution) in gonum's order, of
// a coefficient of R times that row, started from the row's own term. The
// c columns of a row are summed side by side (up to sixteen in AVX2
// registers), in a copy of B whose rows are padded to a multiple of four.
// gonum skips the zero coefficients; adding their products, ±0, to a sum
// that is not −0 changes nothing.

// padPool recycles the padded copies of B.
var padPool = sync.Pool{New: func() any { return new([]float64) }}

// withPadded copies B into rows of ldy = c rounded up to four numbers, runs
// f on the copy and copies the result back.
func withPadded(m, c int, b []float64, ldb int, f func(y []float64, ldy int)) {
	ldy := (c + 3) &^ 3
	buf := padPool.Get().(*[]float64)
	defer padPool.Put(buf)
	if cap(*buf) < m*ldy {
		*buf = make([]float64, m*ldy)
	}
	y := (*buf)[:m*ldy]
	for i := 0; i < m; i++ {
		row := y[i*ldy : (i+1)*ldy]
		copy(row, b[i*ldb:i*ldb+c])
		clear(row[c:])
	}
	f(y, ldy)
	for i := 0; i < m; i++ {
		copy(b[i*ldb:i*ldb+c], y[i*ldy:i*ldy+c])
	}
}

// rowSum adds (sub: subtracts) coef[t·cstep]·Y[t·ystep + j] to acc[j] for
// t = 0, …, rows−1 in turn and j < w (w a multiple of four, at most 16):
// the running sums of the multi-column kernels. Steps may be negative.
func rowSum(sub bool, rows int, y []float64, y0, ystep int, coef []float64, c0, cstep int, acc []float64) {
	w := len(acc)
	if rows <= 0 {
		return
	}
	if useAVX2 {
		yp, cp := &y[y0], &coef[c0]
		ys, cs := 8*ystep, 8*cstep
		// The last row touched must lie inside the slices.
		_ = y[y0+(rows-1)*ystep+w-1]
		_ = coef[c0+(rows-1)*cstep]
		switch {
		case w == 16 && !sub:
			colAdd16AVX2(rows, yp, ys, cp, cs, (*[16]float64)(acc))
		case w == 16:
			colSub16AVX2(rows, yp, ys, cp, cs, (*[16]float64)(acc))
		case w == 12 && !sub:
			colAdd12AVX2(rows, yp, ys, cp, cs, (*[12]float64)(acc))
		case w == 12:
			colSub12AVX2(rows, yp, ys, cp, cs, (*[12]float64)(acc))
		case w == 8 && !sub:
			colAdd8AVX2(rows, yp, ys, cp, cs, (*[8]float64)(acc))
		case w == 8:
			colSub8AVX2(rows, yp, ys, cp, cs, (*[8]float64)(acc))
		case !sub:
			colAdd4AVX2(rows, yp, ys, cp, cs, (*[4]float64)(acc))
		default:
			colSub4AVX2(rows, yp, ys, cp, cs, (*[4]float64)(acc))
		}
		return
	}
	for t := 0; t < rows; t++ {
		x := coef[c0+t*cstep]
		row := y[y0+t*ystep : y0+t*ystep+w]
		if sub {
			for j, v := range row {
				acc[j] -= float64(v * x)
			}
		} else {
			for j, v := range row {
				acc[j] += float64(x * v)
			}
		}
	}
}

// chunks calls f for the column chunks [j0, j0+w) of a padded row of ldy
// numbers, w ≤ 16.
func chunks(ldy int, f func(j0, w int)) {
	for j0 := 0; j0 < ldy; j0 += 16 {
		f(j0, min(16, ldy-j0))
	}
}

// TrmmUpper sets B = R·B, gonum's Dtrmm(Left, Upper, NoTrans, NonUnit, m,
// c, 1, …): row i becomes r_ii·b_i + r_{i,i+1}·b_{i+1} + … + r_{i,m−1}·b_{m−1}
// (the old rows), summed left to right.
func TrmmUpper(m, c int, a []float64, lda int, b []float64, ldb int) {
	if m == 0 || c == 0 {
		return
	}
	withPadded(m, c, b, ldb, func(y []float64, ldy int) {
		var acc [16]float64
		for i := 0; i < m; i++ {
			aii := a[i*lda+i]
			chunks(ldy, func(j0, w int) {
				s := acc[:w]
				for j := range s {
					s[j] = float64(aii * y[i*ldy+j0+j])
				}
				rowSum(false, m-1-i, y, (i+1)*ldy+j0, ldy, a, i*lda+i+1, 1, s)
				copy(y[i*ldy+j0:i*ldy+j0+w], s)
			})
		}
	})
}

// TrmmUpperTrans sets B = Rᵀ·B, gonum's Dtrmm(Left, Upper, Trans, NonUnit,
// m, c, 1, …): row i becomes r_ii·b_i + r_{i−1,i}·b_{i−1} + … + r_{0,i}·b_0
// (the old rows), summed in that order.
func TrmmUpperTrans(m, c int, a []float64, lda int, b []float64, ldb int) {
	if m == 0 || c == 0 {
		return
	}
	withPadded(m, c, b, ldb, func(y []float64, ldy int) {
		var acc [16]float64
		for i := m - 1; i >= 0; i-- {
			aii := a[i*lda+i]
			chunks(ldy, func(j0, w int) {
				s := acc[:w]
				for j := range s {
					v := y[i*ldy+j0+j]
					if aii != 1 {
						v = float64(aii * v)
					}
					s[j] = v
				}
				if i > 0 {
					rowSum(false, i, y, (i-1)*ldy+j0, -ldy, a, (i-1)*lda+i, -lda, s)
				}
				copy(y[i*ldy+j0:i*ldy+j0+w], s)
			})
		}
	})
}

// TrsmUpper solves R·X = B in place, gonum's Dtrsm(Left, Upper, NoTrans,
// NonUnit, m, c, 1, …): x_i = (b_i − r_{i,i+1}·x_{i+1} − … − r_{i,m−1}·x_{m−1})·(1/r_ii),
// subtracting left to right and multiplying by the reciprocal.
func TrsmUpper(m, c int, a []float64, lda int, b []float64, ldb int) {
	if m == 0 || c == 0 {
		return
	}
	withPadded(m, c, b, ldb, func(y []float64, ldy int) {
		var acc [16]float64
		for i := m - 1; i >= 0; i-- {
			inv := 1 / a[i*lda+i]
			chunks(ldy, func(j0, w int) {
				s := acc[:w]
				copy(s, y[i*ldy+j0:i*ldy+j0+w])
				rowSum(true, m-1-i, y, (i+1)*ldy+j0, ldy, a, i*lda+i+1, 1, s)
				for j := range s {
					y[i*ldy+j0+j] = float64(inv * s[j])
				}
			})
		}
	})
}

// TrsmUpperTrans solves Rᵀ·X = B in place, gonum's Dtrsm(Left, Upper,
// Trans, NonUnit, m, c, 1, …): x_i = (b_i − r_{0,i}·x_0 − … − r_{i−1,i}·x_{i−1})·(1/r_ii),
// subtracting in that order and multiplying by the reciprocal.
func TrsmUpperTrans(m, c int, a []float64, lda int, b []float64, ldb int) {
	if m == 0 || c == 0 {
		return
	}
	withPadded(m, c, b, ldb, func(y []float64, ldy int) {
		var acc [16]float64
		for i := 0; i < m; i++ {
			inv := 1 / a[i*lda+i]
			chunks(ldy, func(j0, w int) {
				s := acc[:w]
				copy(s, y[i*ldy+j0:i*ldy+j0+w])
				rowSum(true, i, y, j0, ldy, a, i, lda, s)
				for j := range s {
					y[i*ldy+j0+j] = float64(inv * s[j])
				}
			})
		}
	})
}
