package dense

import "math"

// GemmNT sets the n×m row-major C (stride ldc) to X·Bᵀ for the n×k X
// (stride ldx) and the m×k B, given as its transpose bt (k×m, stride ldbt),
// with the same bits as gonum's Dgemm(blas.NoTrans, blas.Trans, n, m, k, 1,
// x, ldx, b, ldb, 0, c, ldc) on amd64: c_ij = Σ over gonum's blocks of 64 of
// k (one block when gonum multiplies serially: fewer than four 64×64 blocks
// of C) of Dot(x_i, b_j) over the block, added in order to zero. Eight
// outputs of a row at a time keep the four partial sums of their dot
// products in AVX2 registers, reading eight numbers of bt per term.
func GemmNT(n, m, k int, x []float64, ldx int, bt []float64, ldbt int, c []float64, ldc int) {
	if n == 0 || m == 0 {
		return
	}
	if k > 0 && (len(x) < (n-1)*ldx+k || len(bt) < (k-1)*ldbt+m) || len(c) < (n-1)*ldc+m {
		panic("dense: GemmNT: slice too short")
	}
	const block, minParBlock = 64, 4
	kb := k
	if (n+block-1)/block*((m+block-1)/block) >= minParBlock {
		kb = block
	}
	var d [8]float64
	for i := 0; i < n; i++ {
		crow := c[i*ldc : i*ldc+m]
		clear(crow)
		xr := x[i*ldx : i*ldx+k]
		for l0 := 0; l0 < k; l0 += kb {
			l1 := min(l0+kb, k)
			xs := xr[l0:l1]
			if !useAVX2 || m < 8 {
				for j := range crow {
					var s [4]float64
					n4 := len(xs) / 4
					lanesStrided(&s, xs[:4*n4], bt, l0*ldbt+j, ldbt)
					crow[j] += finishStrided(&s, xs[4*n4:], bt, (l0+4*n4)*ldbt+j, ldbt)
				}
				continue
			}
			for j0 := 0; j0 < m; j0 += 8 {
				j := min(j0, m-8)
				lanesDot8AVX2(len(xs), len(xs)/4, &xs[0], &bt[l0*ldbt+j], 8*ldbt, &d)
				for p := j0 - j; p < 8; p++ {
					crow[j+p] += d[p]
				}
			}
		}
	}
}

// lanesStrided is lanesGo for y[off], y[off+stride], ….
func lanesStrided(s *[4]float64, x, y []float64, off, stride int) {
	for i := 0; i+3 < len(x); i += 4 {
		s[0] += float64(x[i] * y[off+i*stride])
		s[1] += float64(x[i+1] * y[off+(i+1)*stride])
		s[2] += float64(x[i+2] * y[off+(i+2)*stride])
		s[3] += float64(x[i+3] * y[off+(i+3)*stride])
	}
}

// finishStrided is finishDot for y[off], y[off+stride], ….
func finishStrided(s *[4]float64, x, y []float64, off, stride int) float64 {
	s0 := s[0]
	for i, v := range x {
		s0 += float64(v * y[off+i*stride])
	}
	return (s0 + s[2]) + (s[1] + s[3])
}

// CosScale sets dst[i] = scale·cos(dst[i] + phase[i]) with the operations
// of a cosine for random-feature phases below 2²⁰ in magnitude — the
// Cody–Waite reduction x − k·hi − k·lo with k = (x·inv + magic) − magic,
// then Horner's rule on the Taylor coefficients coef[0:16] in r² — for the
// leading entries it can do four at a time with AVX2, and returns how many
// it did (a multiple of four; zero without AVX2, or when some argument is
// not below 2²⁰). coef[16:20] are inv, magic, hi and lo. The caller
// computes the rest with the same operations.
func CosScale(dst, phase []float64, scale float64, coef *[20]float64) int {
	if !useAVX2 {
		return 0
	}
	n4 := len(dst) / 4
	phase = phase[:len(dst)]
	for i := 0; i < 4*n4; i++ {
		if !(math.Abs(dst[i]+phase[i]) < 1<<20) {
			return 0
		}
	}
	if n4 > 0 {
		cosineAVX2(n4, &dst[0], &phase[0], scale, coef)
	}
	return 4 * n4
}
