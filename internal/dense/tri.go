package dense

import "math"

// The triangular kernels work on an upper triangular n×n row-major matrix
// R (stride lda, non-unit diagonal; the strict lower triangle is not read)
// and one vector x of n numbers (unit stride), in place, with the same bits
// as gonum's Dtrmv and Dtrsv (blas.Upper, blas.NonUnit, incX = 1) on amd64.

// colBlock is the width of the column blocks of TrmvUpperTrans and
// TrsvUpperTrans: sixteen running sums, four AVX2 registers.
const colBlock = 16

// TrmvUpper sets x = R·x in gonum's order: x_i = r_ii·x_i + Dot(r_i[i+1:],
// x[i+1:]) with the old x, for n ≥ 2 (x_0 = r_00·x_0 for n = 1). The rows
// are independent; they are computed in groups of four whose dot products
// start at the same position modulo 4 (rows i, i+4, i+8, i+12), so that the
// four share every load of x and keep their partial sums in four registers.
func TrmvUpper(n int, a []float64, lda int, x []float64) {
	if n == 0 {
		return
	}
	if len(a) < (n-1)*lda+n || len(x) < n {
		panic("dense: TrmvUpper: slice too short")
	}
	if n == 1 {
		x[0] *= a[0]
		return
	}
	var out [16]float64
	for i0 := 0; i0 < n; i0 += 16 {
		i1 := min(i0+16, n)
		for g := 0; g < 4 && i0+g < i1; g++ {
			rows := [4]int{i0 + g, i0 + g + 4, i0 + g + 8, i0 + g + 12}
			if rows[3] >= n { // a short group at the end: row by row
				for _, i := range rows {
					if i < i1 {
						out[i-i0] = float64(a[i*lda+i]*x[i]) + Dot(a[i*lda+i+1:i*lda+n], x[i+1:n])
					}
				}
				continue
			}
			var d [4]float64
			dotsSamePhase(n, a, lda, x, rows, &d)
			for q, i := range rows {
				out[i-i0] = float64(a[i*lda+i]*x[i]) + d[q]
			}
		}
		copy(x[i0:i1], out[:i1-i0])
	}
}

// dotsSamePhase sets d[q] = Dot(r_i[i+1:n], x[i+1:n]) for the rows
// i = rows[q] = i0, i0+4, i0+8, i0+12 (all < n): each row's products before
// the start of the last one are added to its own partial sums, then the four
// run together.
func dotsSamePhase(n int, a []float64, lda int, x []float64, rows [4]int, d *[4]float64) {
	var acc [16]float64
	s := rows[3] + 1
	n4 := (n - s) / 4
	m := s + 4*n4
	if useAVX2 {
		// One call: row q joins at its own start, block q of x[rows[0]+1:].
		_ = x[m-1]
		for _, i := range rows {
			_ = a[i*lda+m-1]
		}
		r3 := rows[3]*lda + rows[3] + 1
		if n4 == 0 { // row 3 has nothing before the tail: any address it will not read
			r3--
		}
		dotStagedAVX2(n4, &x[rows[0]+1], &a[rows[0]*lda+rows[0]+1], &a[rows[1]*lda+rows[1]+1],
			&a[rows[2]*lda+rows[2]+1], &a[r3], &acc)
	} else {
		for q, i := range rows {
			lanesGo((*[4]float64)(acc[q*4:]), a[i*lda+i+1:i*lda+m], x[i+1:m])
		}
	}
	for q, i := range rows {
		d[q] = finishDot((*[4]float64)(acc[q*4:]), a[i*lda+m:i*lda+n], x[m:n])
	}
}

// TrmvUpperTrans sets x = Rᵀ·x in gonum's order: x_j = r_jj·x_j, then
// + x_i·r_ij for i = j−1 down to 0, with the old x. Columns are computed in
// blocks of sixteen, right to left, whose sums stay in registers while the
// rows above the block stream past.
func TrmvUpperTrans(n int, a []float64, lda int, x []float64) {
	if n == 0 {
		return
	}
	if len(a) < (n-1)*lda+n || len(x) < n {
		panic("dense: TrmvUpperTrans: slice too short")
	}
	var acc [colBlock]float64
	for j1 := n; j1 > 0; j1 -= colBlock {
		j0 := max(0, j1-colBlock)
		w := j1 - j0
		for j := j0; j < j1; j++ {
			acc[j-j0] = float64(x[j] * a[j*lda+j])
		}
		// The corner: rows j0…j1−2 add to the columns of the block right of them.
		if useAVX2 && w == colBlock && cornerZerosHarmless(acc[:], x[j0:j1-1]) {
			cornerAdd16(a, lda, j0, x, &acc)
		} else {
			for i := j1 - 2; i >= j0; i-- {
				xi := x[i]
				for j := i + 1; j < j1; j++ {
					acc[j-j0] += float64(xi * a[i*lda+j])
				}
			}
		}
		// The rows above the block, bottom to top.
		if j0 > 0 {
			if useAVX2 && w == colBlock {
				colAdd16AVX2(j0, &a[(j0-1)*lda+j0], -8*lda, &x[j0-1], -8, &acc)
			} else {
				for i := j0 - 1; i >= 0; i-- {
					xi := x[i]
					row := a[i*lda+j0 : i*lda+j1]
					for j, v := range row {
						acc[j] += float64(xi * v)
					}
				}
			}
		}
		copy(x[j0:j1], acc[:w])
	}
}

// TrsvUpper solves R·y = x in place (back substitution) in gonum's order:
// y_i = (x_i − Σ_{j>i} x_j·r_ij)/r_ii with the sum in increasing j from
// zero. Each sum needs the one before it, so it runs as it is.
func TrsvUpper(n int, a []float64, lda int, x []float64) {
	if n == 0 {
		return
	}
	if len(a) < (n-1)*lda+n || len(x) < n {
		panic("dense: TrsvUpper: slice too short")
	}
	for i := n - 1; i >= 0; i-- {
		row := a[i*lda+i+1 : i*lda+n]
		xs := x[i+1 : n]
		xs = xs[:len(row)]
		var sum float64
		for j, v := range row {
			sum += float64(xs[j] * v)
		}
		x[i] -= sum
		x[i] /= a[i*lda+i]
	}
}

// TrsvUpperTrans solves Rᵀ·y = x in place (forward substitution) in
// gonum's order: y_j = (x_j − r_0j·y_0 − r_1j·y_1 − … − r_{j−1,j}·y_{j−1})/r_jj,
// subtracting in increasing i. Columns are computed in blocks of sixteen,
// left to right: first the rows above the block (their y known), with the
// sums in registers, then the block's own triangle.
func TrsvUpperTrans(n int, a []float64, lda int, x []float64) {
	if n == 0 {
		return
	}
	if len(a) < (n-1)*lda+n || len(x) < n {
		panic("dense: TrsvUpperTrans: slice too short")
	}
	var acc [colBlock]float64
	for j0 := 0; j0 < n; j0 += colBlock {
		j1 := min(j0+colBlock, n)
		w := j1 - j0
		copy(acc[:w], x[j0:j1])
		if j0 > 0 {
			if useAVX2 && w == colBlock {
				colSub16AVX2(j0, &a[j0], 8*lda, &x[0], 8, &acc)
			} else {
				for i := 0; i < j0; i++ {
					yi := x[i]
					row := a[i*lda+j0 : i*lda+j1]
					for j, v := range row {
						acc[j] -= float64(v * yi)
					}
				}
			}
		}
		for j := j0; j < j1; j++ {
			yj := acc[j-j0] / a[j*lda+j]
			x[j] = yj
			for k := j + 1; k < j1; k++ {
				acc[k-j0] -= float64(a[j*lda+k] * yj)
			}
		}
	}
}

// TrsvUpperBatch solves R_b·y_b = x_b in place for every b, as TrsvUpper
// does each (the same bits), for matrices of one size n and stride lda.
// The back substitution is one chain of dependent additions per row; four
// systems at a time are stepped side by side, so that their four chains
// overlap instead of each waiting on its own.
func TrsvUpperBatch(n int, as [][]float64, lda int, xs [][]float64) {
	b := 0
	for ; b+3 < len(as); b += 4 {
		trsvUpper4(n, lda, as[b:b+4], xs[b:b+4])
	}
	for ; b < len(as); b++ {
		TrsvUpper(n, as[b], lda, xs[b])
	}
}

// trsvUpper4 is TrsvUpper on four systems at once.
func trsvUpper4(n, lda int, as, xs [][]float64) {
	if n == 0 {
		return
	}
	a0, a1, a2, a3 := as[0], as[1], as[2], as[3]
	x0, x1, x2, x3 := xs[0][:n], xs[1][:n], xs[2][:n], xs[3][:n]
	for _, a := range as {
		if len(a) < (n-1)*lda+n {
			panic("dense: TrsvUpperBatch: slice too short")
		}
	}
	for i := n - 1; i >= 0; i-- {
		lo, hi := i*lda+i+1, i*lda+n
		r0, r1, r2, r3 := a0[lo:hi], a1[lo:hi], a2[lo:hi], a3[lo:hi]
		y0, y1, y2, y3 := x0[i+1:], x1[i+1:], x2[i+1:], x3[i+1:]
		m := len(r0)
		r1, r2, r3 = r1[:m], r2[:m], r3[:m]
		y0, y1, y2, y3 = y0[:m], y1[:m], y2[:m], y3[:m]
		var s0, s1, s2, s3 float64
		for j := 0; j < m; j++ {
			s0 += float64(y0[j] * r0[j])
			s1 += float64(y1[j] * r1[j])
			s2 += float64(y2[j] * r2[j])
			s3 += float64(y3[j] * r3[j])
		}
		x0[i] -= s0
		x0[i] /= a0[i*lda+i]
		x1[i] -= s1
		x1[i] /= a1[i*lda+i]
		x2[i] -= s2
		x2[i] /= a2[i*lda+i]
		x3[i] -= s3
		x3[i] /= a3[i*lda+i]
	}
}

// TrsvUpperTransBatch is TrsvUpperTrans on every (R_b, x_b), the same bits.
func TrsvUpperTransBatch(n int, as [][]float64, lda int, xs [][]float64) {
	for b := range as {
		TrsvUpperTrans(n, as[b], lda, xs[b])
	}
}

// cornerZerosHarmless reports whether adding x_i·0 to the running sums acc
// leaves them as they are: the products are ±0 (every x_i finite), and no
// sum is −0 (which +0 would turn into +0; a sum that is not −0 never becomes
// −0 by adding ±0, and one that is nonzero stays unchanged).
func cornerZerosHarmless(acc, x []float64) bool {
	for _, v := range x {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return false
		}
	}
	for _, v := range acc {
		if v == 0 && math.Signbit(v) {
			return false
		}
	}
	return true
}

// cornerAdd16 adds, for rows i = j0+14 down to j0, x_i·r_ij to acc[j−j0]
// for the columns j0 < j < j0+16 right of row i, as TrmvUpperTrans's corner
// does, with the AVX2 column kernel on a copy of the corner whose entries on
// and left of the diagonal are zero (cornerZerosHarmless makes their
// products no-ops).
func cornerAdd16(a []float64, lda, j0 int, x []float64, acc *[colBlock]float64) {
	var tri [(colBlock - 1) * colBlock]float64
	for r := 0; r < colBlock-1; r++ {
		i := j0 + r
		copy(tri[r*colBlock+r+1:(r+1)*colBlock], a[i*lda+i+1:i*lda+j0+colBlock])
	}
	colAdd16AVX2(colBlock-1, &tri[(colBlock-2)*colBlock], -8*colBlock, &x[j0+colBlock-2], -8, acc)
}
