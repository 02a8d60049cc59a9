package dense

import "sync"

// Stripe is the number of columns of A that SymRank sums at a time: an
// entry of C receives alpha times the dot product over each stripe of
// Stripe columns in turn. It is part of the result (the order of the
// sums), not only of the speed.
const Stripe = 256

// symTask is the number of rows of C in one task of SymRank.
const symTask = 64

// Runner runs f(0), …, f(n−1), in any order and possibly in parallel; the
// calls write disjoint parts of the output. internal/parallel.For is one.
type Runner func(n int, f func(i int))

// Serial is the Runner of one goroutine.
func Serial(n int, f func(i int)) {
	for i := 0; i < n; i++ {
		f(i)
	}
}

// SymRank sets the upper triangle of the r×r row-major C (stride ldc) to
// alpha·A·Aᵀ + beta·C for the r×n row-major A (stride lda): entry (k, l),
// l ≥ k, is first multiplied by beta (set to zero when beta is 0, left
// alone when beta is 1); then for each stripe of Stripe columns of A in
// turn, c_kl += alpha·s with s the dot product of rows k and l over the
// stripe summed in increasing column index from zero. It is the Gram matrix
// ΦᵀΦ of features stored feature-major (A = Φᵀ) and the kernel matrix ΦΦᵀ
// of features stored sample-major (A = Φ). The strict lower triangle of C
// is not touched; the result does not depend on run or on the CPU.
//
// With AVX2, each stripe of A is first packed into panels of eight rows
// (column by column, eight numbers at a time) and C is computed in tiles of
// 4×8 entries whose 32 sums stay in registers; the pure-Go path sums 2×4
// blocks of dot products straight from the rows of A.
func SymRank(c []float64, ldc int, a []float64, lda, r, n int, alpha, beta float64, run Runner) {
	if r == 0 {
		return
	}
	if len(a) < (r-1)*lda+n || len(c) < (r-1)*ldc+r {
		panic("dense: SymRank: slice too short")
	}
	if run == nil {
		run = Serial
	}
	tasks := (r + symTask - 1) / symTask
	if beta != 1 {
		run(tasks, func(t int) {
			k0, k1 := symTaskRows(t, r)
			scaleUpperRows(c, ldc, r, k0, k1, beta)
		})
	}
	if n == 0 {
		return
	}
	if !useAVX2 {
		run(tasks, func(t int) {
			k0, k1 := symTaskRows(t, r)
			symRankGo(c, ldc, a, lda, r, n, k0, k1, alpha)
		})
		return
	}
	symRankAVX2(c, ldc, a, lda, r, n, alpha, run)
}

// symTaskRows returns the rows k0…k1−1 of C of task t of SymRank.
func symTaskRows(t, r int) (k0, k1 int) { return t * symTask, min((t+1)*symTask, r) }

// scaleUpperRows multiplies the upper-triangle part (l ≥ k) of rows
// k0…k1−1 of the r×r C by beta, zeroing it for beta = 0.
func scaleUpperRows(c []float64, ldc, r, k0, k1 int, beta float64) {
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

// symRankGo is the pure-Go path of SymRank for rows k0…k1−1 of C: stripe by
// stripe, in blocks of 128 columns of C.
func symRankGo(c []float64, ldc int, a []float64, lda, r, n, k0, k1 int, alpha float64) {
	for lo := 0; lo < n; lo += Stripe {
		hi := min(lo+Stripe, n)
		for l0 := k0; l0 < r; l0 += 128 {
			gramStripe(c, ldc, a, lda, r, k0, k1, l0, min(l0+128, r), lo, hi, alpha)
		}
	}
}

// symRankAVX2 is the AVX2 path of SymRank: stripe by stripe, A is packed
// into panels of eight rows, then every task adds the stripe to its rows of
// C in 4×8 tiles.
func symRankAVX2(c []float64, ldc int, a []float64, lda, r, n int, alpha float64, run Runner) {
	tasks := (r + symTask - 1) / symTask
	panels := (r + 7) / 8
	buf := packPool.Get().(*[]float64)
	defer packPool.Put(buf)
	if cap(*buf) < panels*8*Stripe {
		*buf = make([]float64, panels*8*Stripe)
	}
	p := (*buf)[:panels*8*Stripe]
	for lo := 0; lo < n; lo += Stripe {
		kc := min(Stripe, n-lo)
		run((panels+7)/8, func(t int) {
			for q := t * 8; q < min(t*8+8, panels); q++ {
				packPanel(p[q*8*kc:(q+1)*8*kc], a, lda, r, q*8, lo, kc)
			}
		})
		run(tasks, func(t int) {
			k0, k1 := symTaskRows(t, r)
			symRankPacked(c, ldc, p, r, kc, k0, k1, alpha)
		})
	}
}

// packPool recycles the packed stripes of SymRank.
var packPool = sync.Pool{New: func() any { return new([]float64) }}

// packPanel copies columns lo…lo+kc−1 of rows l0…l0+7 of A into dst
// (kc×8, column by column), zeros for rows at or past r.
func packPanel(dst, a []float64, lda, r, l0, lo, kc int) {
	for p := 0; p < 8; p++ {
		l := l0 + p
		if l >= r {
			for i := 0; i < kc; i++ {
				dst[i*8+p] = 0
			}
			continue
		}
		row := a[l*lda+lo : l*lda+lo+kc]
		for i, v := range row {
			dst[i*8+p] = v
		}
	}
}

// symRankPacked adds one packed stripe (kc columns) to rows k0…k1−1 of C,
// entries l ≥ k, in 4×8 tiles.
func symRankPacked(c []float64, ldc int, p []float64, r, kc, k0, k1 int, alpha float64) {
	var acc [32]float64
	for kq := k0; kq < k1; kq += 4 {
		pa := p[(kq/8)*8*kc+kq%8:]
		for lp := kq &^ 7; lp < r; lp += 8 {
			gemm4x8(kc, pa, 8, p[(lp/8)*8*kc:], 8, &acc)
			for q := 0; q < 4 && kq+q < k1; q++ {
				k := kq + q
				row := c[k*ldc : k*ldc+r]
				for j := max(lp, k) - lp; j < 8 && lp+j < r; j++ {
					row[lp+j] += float64(alpha * acc[q*8+j])
				}
			}
		}
	}
}

// gemm4x8 sets acc[q·8+p] = Σ_{i<kc} pa[i·lda+q]·pb[i·ldb+p] (q < 4,
// p < 8), each sum in increasing i from zero; kc ≥ 1.
func gemm4x8(kc int, pa []float64, lda int, pb []float64, ldb int, acc *[32]float64) {
	if useAVX2 {
		_ = pa[(kc-1)*lda+3]
		_ = pb[(kc-1)*ldb+7]
		gemm4x8AVX2(kc, &pa[0], 8*lda, &pb[0], 8*ldb, acc)
		return
	}
	gemm4x8Go(kc, pa, lda, pb, ldb, acc)
}

// gemm4x8Go is gemm4x8AVX2 in Go.
func gemm4x8Go(kc int, pa []float64, lda int, pb []float64, ldb int, acc *[32]float64) {
	*acc = [32]float64{}
	for i := 0; i < kc; i++ {
		b := pb[i*ldb : i*ldb+8]
		for q := 0; q < 4; q++ {
			x := pa[i*lda+q]
			s := acc[q*8 : q*8+8]
			for j, v := range b {
				s[j] += float64(x * v)
			}
		}
	}
}

// gramStripe adds alpha times the dot products over columns lo…hi−1 of rows
// k ∈ [k0, k1) with rows l ∈ [max(l0, k), l1) of A to c_kl: the pure-Go
// path of SymRank, a 2×4 register block of sums.
func gramStripe(c []float64, ldc int, a []float64, lda, r, k0, k1, l0, l1, lo, hi int, alpha float64) {
	row := func(i int) []float64 { return a[i*lda+lo : i*lda+hi] }
	k := k0
	for ; k+1 < k1 && k+1 < l1; k += 2 {
		a0, a1 := row(k), row(k+1)
		c0, c1 := c[k*ldc:k*ldc+r], c[(k+1)*ldc:(k+1)*ldc+r]
		l := max(l0, k)
		if l == k { // the diagonal block: (k,k), (k,k+1), (k+1,k+1)
			s00, s01, s11 := dot3(a0, a1)
			c0[k] += float64(alpha * s00)
			c0[k+1] += float64(alpha * s01)
			c1[k+1] += float64(alpha * s11)
			l += 2
		}
		for ; l+3 < l1; l += 4 {
			s00, s01, s02, s03, s10, s11, s12, s13 := dot24(a0, a1, row(l), row(l+1), row(l+2), row(l+3))
			c0[l] += float64(alpha * s00)
			c0[l+1] += float64(alpha * s01)
			c0[l+2] += float64(alpha * s02)
			c0[l+3] += float64(alpha * s03)
			c1[l] += float64(alpha * s10)
			c1[l+1] += float64(alpha * s11)
			c1[l+2] += float64(alpha * s12)
			c1[l+3] += float64(alpha * s13)
		}
		for ; l < l1; l++ {
			s0, s1 := dot12(a0, a1, row(l))
			c0[l] += float64(alpha * s0)
			c1[l] += float64(alpha * s1)
		}
	}
	for ; k < k1; k++ { // a last odd row
		a0 := row(k)
		c0 := c[k*ldc : k*ldc+r]
		for l := max(l0, k); l < l1; l++ {
			s0, _ := dot12(a0, a0, row(l))
			c0[l] += float64(alpha * s0)
		}
	}
}

// dot24 returns the eight dot products of x0, x1 with y0…y3 (equal
// lengths), each summed in index order.
func dot24(x0, x1, y0, y1, y2, y3 []float64) (s00, s01, s02, s03, s10, s11, s12, s13 float64) {
	n := len(x0)
	x1, y0, y1, y2, y3 = x1[:n], y0[:n], y1[:n], y2[:n], y3[:n]
	for i := 0; i < n; i++ {
		a, b := x0[i], x1[i]
		u0, u1, u2, u3 := y0[i], y1[i], y2[i], y3[i]
		s00 += float64(a * u0)
		s01 += float64(a * u1)
		s02 += float64(a * u2)
		s03 += float64(a * u3)
		s10 += float64(b * u0)
		s11 += float64(b * u1)
		s12 += float64(b * u2)
		s13 += float64(b * u3)
	}
	return
}

// dot3 returns x0·x0, x0·x1 and x1·x1, summed in index order.
func dot3(x0, x1 []float64) (s00, s01, s11 float64) {
	n := len(x0)
	x1 = x1[:n]
	for i := 0; i < n; i++ {
		a, b := x0[i], x1[i]
		s00 += float64(a * a)
		s01 += float64(a * b)
		s11 += float64(b * b)
	}
	return
}

// dot12 returns x0·y and x1·y, summed in index order.
func dot12(x0, x1, y []float64) (s0, s1 float64) {
	n := len(x0)
	x1, y = x1[:n], y[:n]
	for i := 0; i < n; i++ {
		s0 += float64(x0[i] * y[i])
		s1 += float64(x1[i] * y[i])
	}
	return
}
