package dense

import (
	"gonum.org/v1/gonum/blas"
	blasImpl "gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/lapack/gonum"
)

// The inverse of a symmetric positive definite matrix from its upper
// Cholesky factor, and the solve with one right-hand side, with the same
// bits as gonum's Dpotri and Dpotrs (v0.17, amd64). gonum spends most of its
// time there in calls of its BLAS on rows and columns of a few dozen
// numbers; these are the same operations in the same order as plain loops.
// Every product is written float64(x*y) so that no platform fuses it with
// the addition that follows.

// potriBlock is gonum's block size for Dtrtri and Dlauum (its Ilaenv).
const potriBlock = 64

// PotriUpper overwrites the upper triangle of the n×n row-major a (stride
// lda), which holds the upper Cholesky factor U of A = UᵀU, with the upper
// triangle of A⁻¹ = U⁻¹U⁻ᵀ, with the same bits as gonum's
// Dpotri(blas.Upper, n, a, lda): Dtrtri, then Dlauum, both blocked by 64.
// It reports false, with a untouched, when a diagonal entry of U is zero.
// For n > 128, where gonum's blocked algorithms reach its Dgemm, it calls
// gonum itself.
//
// Of the pieces of gonum's algorithm, Dtrti2 runs as plain loops, the
// Dtrmm of Dtrtri on the AVX2 column sums of TrmmUpper when no coefficient
// is zero (gonum skips zero coefficients), its Dtrsm on the same column
// sums over the transposed block row (trsmRightNeg), Dlauum's Dsyrk as
// SyrkUpper and its Dtrmm as dot products four rows at a time
// (trmmRightTrans); Dlauu2 is gonum's.
func PotriUpper(n int, a []float64, lda int) bool {
	if n > 2*potriBlock {
		return gonum.Implementation{}.Dpotri(blas.Upper, n, a, lda)
	}
	if n == 0 {
		return true
	}
	_ = a[(n-1)*lda+n-1]
	for i := 0; i < n; i++ {
		if a[i*lda+i] == 0 {
			return false
		}
	}
	var work [2 * potriBlock]float64
	impl := gonum.Implementation{}
	bi := blasImpl.Implementation{}
	// Dtrtri: the inverse of the leading block, then, for n > 64, the
	// block column beside it (Dtrmm by the inverted leading block, Dtrsm by
	// minus the trailing block of U) and the inverse of the trailing block.
	if n < potriBlock {
		trti2Upper(n, a, lda, work[:])
	} else {
		trti2Upper(potriBlock, a, lda, work[:])
		if jb := n - potriBlock; jb > 0 {
			b := a[potriBlock:]
			if noZeroAbove(potriBlock, a, lda) {
				TrmmUpper(potriBlock, jb, a, lda, b, lda)
			} else {
				bi.Dtrmm(blas.Left, blas.Upper, blas.NoTrans, blas.NonUnit, potriBlock, jb, 1, a, lda, b, lda)
			}
			trsmRightNeg(potriBlock, jb, a[potriBlock*lda+potriBlock:], lda, b, lda)
			trti2Upper(jb, a[potriBlock*lda+potriBlock:], lda, work[:])
		}
	}
	// Dlauum: U⁻¹U⁻ᵀ.
	if n <= potriBlock {
		impl.Dlauu2(blas.Upper, n, a, lda)
		return true
	}
	jb := n - potriBlock
	impl.Dlauu2(blas.Upper, potriBlock, a, lda)
	SyrkUpper(potriBlock, jb, 1, a[potriBlock:], lda, 1, a, lda)
	trmmRightTrans(potriBlock, jb, a[potriBlock*lda+potriBlock:], lda, a[potriBlock:], lda)
	impl.Dlauu2(blas.Upper, jb, a[potriBlock*lda+potriBlock:], lda)
	return true
}

// noZeroAbove reports whether the strict upper triangle of the m×m a has no
// zero entry (so that gonum's Dtrmm skips no coefficient).
func noZeroAbove(m int, a []float64, lda int) bool {
	for i := 0; i < m; i++ {
		for _, v := range a[i*lda+i+1 : i*lda+m] {
			if v == 0 {
				return false
			}
		}
	}
	return true
}

// trsmRightNeg is gonum's Dtrsm(Right, Upper, NoTrans, NonUnit, m, n, −1,
// a, lda, b, ldb), X·U = −B for the n×n upper triangular U: entry (r, c) of
// X is (−b_rc − x_r0·u_0c − … − x_r,c−1·u_c−1,c) / u_cc, subtracting in that
// order ((−x)·u added is x·u subtracted, the same bits). The sums of sixteen
// rows of B at a time run side by side on a transposed copy of B (rowSum).
// gonum skips the terms whose x is zero; when the result has a zero, B is
// solved again by gonum itself.
func trsmRightNeg(m, n int, a []float64, lda int, b []float64, ldb int) {
	ldt := (m + 3) &^ 3
	buf := padPool.Get().(*[]float64)
	defer padPool.Put(buf)
	if cap(*buf) < n*ldt {
		*buf = make([]float64, n*ldt)
	}
	t := (*buf)[:n*ldt]
	for r := 0; r < m; r++ {
		for c, v := range b[r*ldb : r*ldb+n] {
			t[c*ldt+r] = v
		}
	}
	for c := 0; c < n; c++ {
		row := t[c*ldt : (c+1)*ldt]
		clear(row[m:])
		for r := range row[:m] {
			row[r] = float64(-1 * row[r])
		}
	}
	var acc [16]float64
	zero := false
	for c := 0; c < n; c++ {
		d := a[c*lda+c]
		for r0 := 0; r0 < ldt; r0 += 16 {
			w := min(16, ldt-r0)
			s := acc[:w]
			copy(s, t[c*ldt+r0:c*ldt+r0+w])
			rowSum(true, c, t, r0, ldt, a, c, lda, s)
			for j, v := range s {
				x := v / d
				t[c*ldt+r0+j] = x
				if x == 0 && r0+j < m {
					zero = true
				}
			}
		}
	}
	if zero {
		blasImpl.Implementation{}.Dtrsm(blas.Right, blas.Upper, blas.NoTrans, blas.NonUnit, m, n, -1, a, lda, b, ldb)
		return
	}
	for r := 0; r < m; r++ {
		row := b[r*ldb : r*ldb+n]
		for c := range row {
			row[c] = t[c*ldt+r]
		}
	}
}

// trmmRightTrans is gonum's Dtrmm(Right, Upper, Trans, NonUnit, m, n, 1, a,
// lda, b, ldb), B·Uᵀ: in each row of B, in increasing j, b_j ← b_j·u_jj +
// Dot(u_j[j+1:], b[j+1:]) (the entries after j still the input). For each
// j the dot products of four rows of B share the row of U (dots1x4).
func trmmRightTrans(m, n int, a []float64, lda int, b []float64, ldb int) {
	var d [4]float64
	for j := 0; j < n; j++ {
		u := a[j*lda+j+1 : j*lda+n]
		k := len(u)
		ujj := a[j*lda+j]
		r := 0
		for ; r+3 < m; r += 4 {
			dots1x4(k, u, b[r*ldb+j+1:], b[(r+1)*ldb+j+1:], b[(r+2)*ldb+j+1:], b[(r+3)*ldb+j+1:], &d)
			for q := 0; q < 4; q++ {
				p := &b[(r+q)*ldb+j]
				*p = float64(*p*ujj) + d[q]
			}
		}
		for ; r < m; r++ {
			p := &b[r*ldb+j]
			*p = float64(*p*ujj) + Dot(u, b[r*ldb+j+1:r*ldb+n])
		}
	}
}

// trti2Upper is gonum's Dtrti2(blas.Upper, blas.NonUnit, n, a, lda): for
// each column j, a_jj ← 1/a_jj, the column above it ← −a_jj · (its Dtrmv by
// the inverted leading j×j block). work holds at least n numbers.
func trti2Upper(n int, a []float64, lda int, work []float64) {
	for j := 0; j < n; j++ {
		ajj := 1 / a[j*lda+j]
		a[j*lda+j] = ajj
		ajj = -ajj
		if j == 0 {
			continue
		}
		x := work[:j]
		for i := range x {
			x[i] = a[i*lda+j]
		}
		if j == 1 {
			// gonum's Dtrmv of order 1.
			x[0] = float64(x[0] * a[0])
		} else {
			// Dtrmv(Upper, NoTrans, NonUnit) on the strided column: the
			// dot products of its DotInc, in increasing i so that x[i+1:]
			// still holds the input.
			for i := 0; i < j; i++ {
				row := a[i*lda+i+1 : i*lda+j]
				tmp := float64(a[i*lda+i] * x[i])
				x[i] = tmp + dotInc(x[i+1:j], row)
			}
		}
		for i, v := range x {
			a[i*lda+j] = float64(v * ajj)
		}
	}
}

// dotInc is gonum's DotInc on amd64 (SSE2, two lanes): the products of even
// index summed in one lane and of odd index in the other, a last product of
// an odd count added to the odd lane, then the two lanes added.
func dotInc(x, y []float64) float64 {
	var even, odd float64
	n := len(x)
	y = y[:n]
	i := 0
	for ; i+1 < n; i += 2 {
		even += float64(x[i] * y[i])
		odd += float64(x[i+1] * y[i+1])
	}
	if i < n {
		odd += float64(x[i] * y[i])
	}
	return odd + even
}

// PotrsUpper1 solves UᵀU x = b in place for one right-hand side b, with
// the n×n upper Cholesky factor U in a (stride lda), with the same bits as
// gonum's Dpotrs(blas.Upper, n, 1, a, lda, b, 1): its two Dtrsm calls,
// whose axpys of one number are the scalar updates below (zero
// coefficients skipped, the diagonal applied as a product with its
// reciprocal).
func PotrsUpper1(n int, a []float64, lda int, b []float64) {
	if n == 0 {
		return
	}
	_ = a[(n-1)*lda+n-1]
	b = b[:n]
	// Uᵀy = b: Dtrsm(Left, Upper, Trans, NonUnit).
	for k := 0; k < n; k++ {
		bk := float64(b[k] * (1 / a[k*lda+k]))
		b[k] = bk
		row := a[k*lda+k+1 : k*lda+n]
		rest := b[k+1 : n]
		for c, va := range row {
			if va != 0 {
				rest[c] += float64(-va * bk)
			}
		}
	}
	// Ux = y: Dtrsm(Left, Upper, NoTrans, NonUnit), rows from the last.
	for i := n - 1; i >= 0; i-- {
		s := b[i]
		for k := i + 1; k < n; k++ {
			if va := a[i*lda+k]; va != 0 {
				s += float64(-va * b[k])
			}
		}
		b[i] = float64(s * (1 / a[i*lda+i]))
	}
}
