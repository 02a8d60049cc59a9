package dense

// Dot returns Σ_i x_i·y_i over the len(x) entries in the order of gonum's
// DotUnitary on amd64 (SSE2): four partial sums s_q of the products whose
// index is ≡ q (mod 4), over the whole groups of four in increasing index;
// the last len(x) mod 4 products added to s_0 in order; then
// (s_0 + s_2) + (s_1 + s_3). y must be at least as long as x.
func Dot(x, y []float64) float64 {
	var s [4]float64
	n4 := len(x) / 4
	lanesGo(&s, x[:4*n4], y[:4*n4])
	return finishDot(&s, x[4*n4:], y[4*n4:len(x)])
}

// lanesGo adds to s[q] the products x[i]·y[i] with i ≡ q (mod 4), in
// increasing i; len(x) is a multiple of 4.
func lanesGo(s *[4]float64, x, y []float64) {
	s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
	y = y[:len(x)]
	for i := 0; i+3 < len(x); i += 4 {
		s0 += float64(x[i] * y[i])
		s1 += float64(x[i+1] * y[i+1])
		s2 += float64(x[i+2] * y[i+2])
		s3 += float64(x[i+3] * y[i+3])
	}
	s[0], s[1], s[2], s[3] = s0, s1, s2, s3
}

// finishDot adds the tail products x[i]·y[i] to s[0] in order and combines
// the partial sums as gonum's DotUnitary does.
func finishDot(s *[4]float64, x, y []float64) float64 {
	s0 := s[0]
	y = y[:len(x)]
	for i, v := range x {
		s0 += float64(v * y[i])
	}
	return (s0 + s[2]) + (s[1] + s[3])
}

// dot2x4Go is dot2x4AVX2 in Go: to acc[(r·4+c)·4+q] it adds the products
// a_r[i]·b_c[i] with i ≡ q (mod 4), for i < 4·n4 in increasing i.
func dot2x4Go(n4 int, a0, a1, b0, b1, b2, b3 []float64, acc *[32]float64) {
	m := 4 * n4
	a := [2][]float64{a0[:m], a1[:m]}
	b := [4][]float64{b0[:m], b1[:m], b2[:m], b3[:m]}
	for r := range a {
		for c := range b {
			s := (*[4]float64)(acc[(r*4+c)*4:])
			lanesGo(s, a[r], b[c])
		}
	}
}

// dot1x4Go is dot1x4AVX2 in Go.
func dot1x4Go(n4 int, a0, b0, b1, b2, b3 []float64, acc *[16]float64) {
	m := 4 * n4
	for c, b := range [4][]float64{b0, b1, b2, b3} {
		lanesGo((*[4]float64)(acc[c*4:]), a0[:m], b[:m])
	}
}

// dots2x4 sets out[r·4+c] = Dot(a_r, b_c) for the rows a0, a1 and b0…b3 of
// length k (the eight dot products at once).
func dots2x4(k int, a0, a1, b0, b1, b2, b3 []float64, out *[8]float64) {
	var acc [32]float64
	n4 := k / 4
	if useAVX2 && n4 > 0 {
		dot2x4AVX2(n4, &a0[0], &a1[0], &b0[0], &b1[0], &b2[0], &b3[0], &acc)
	} else {
		dot2x4Go(n4, a0, a1, b0, b1, b2, b3, &acc)
	}
	m := 4 * n4
	a := [2][]float64{a0[m:k], a1[m:k]}
	b := [4][]float64{b0[m:k], b1[m:k], b2[m:k], b3[m:k]}
	for r := range a {
		for c := range b {
			out[r*4+c] = finishDot((*[4]float64)(acc[(r*4+c)*4:]), a[r], b[c])
		}
	}
}

// dots1x4 sets out[c] = Dot(a0, b_c) for c < 4.
func dots1x4(k int, a0, b0, b1, b2, b3 []float64, out *[4]float64) {
	var acc [16]float64
	n4 := k / 4
	if useAVX2 && n4 > 0 {
		dot1x4AVX2(n4, &a0[0], &b0[0], &b1[0], &b2[0], &b3[0], &acc)
	} else {
		dot1x4Go(n4, a0, b0, b1, b2, b3, &acc)
	}
	m := 4 * n4
	for c, b := range [4][]float64{b0, b1, b2, b3} {
		out[c] = finishDot((*[4]float64)(acc[c*4:]), a0[m:k], b[m:k])
	}
}
