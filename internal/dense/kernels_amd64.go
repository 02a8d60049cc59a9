package dense

// useAVX2 selects the assembly kernels; tests turn it off to run the
// pure-Go kernels on the same inputs.
var useAVX2 = hasAVX2()

// gemm4x8AVX2 sets acc[q·8+p] = Σ_{i<kc} pa[i·lda+q]·pb[i·ldb+p] for
// q < 4, p < 8 (lda and ldb in bytes here), each sum taken in increasing i
// from zero (gemm4x8Go).
//
//go:noescape
func gemm4x8AVX2(kc int, pa *float64, lda int, pb *float64, ldb int, acc *[32]float64)

// dot2x4AVX2 adds to acc[(r·4+c)·4+q] the products a_r[i]·b_c[i] with
// i ≡ q (mod 4), i < 4·n4, in increasing i (dot2x4Go).
//
//go:noescape
func dot2x4AVX2(n4 int, a0, a1, b0, b1, b2, b3 *float64, acc *[32]float64)

// dot1x4AVX2 is dot2x4AVX2 for one row a0: acc[c·4+q].
//
//go:noescape
func dot1x4AVX2(n4 int, a0, b0, b1, b2, b3 *float64, acc *[16]float64)

// colAdd16AVX2 adds, for rows = 0, …, rows−1 in turn, x[t]·a[t][0:16] to
// acc, where row t of a starts stride bytes after row t−1 and x[t] xstep
// bytes after x[t−1] (either may be negative).
//
//go:noescape
func colAdd16AVX2(rows int, a *float64, stride int, x *float64, xstep int, acc *[16]float64)

// colSub16AVX2 is colAdd16AVX2 subtracting: acc −= a[t][0:16]·x[t].
//
//go:noescape
func colSub16AVX2(rows int, a *float64, stride int, x *float64, xstep int, acc *[16]float64)

// rotAVX2 applies one plane rotation to the first 4·n4 numbers of x and y:
// with t = y[i], t2 = x[i], y[i] = c·t − s·t2 and x[i] = s·t + c·t2.
//
//go:noescape
func rotAVX2(n4 int, x, y *float64, c, s float64)

// gemm4x8AccAVX2 is gemm4x8AVX2 with each sum starting from acc's number
// instead of zero.
//
//go:noescape
func gemm4x8AccAVX2(kc int, pa *float64, lda int, pb *float64, ldb int, acc *[32]float64)

// colAdd4AVX2 is colAdd16AVX2 for 4 sums: for rows t in turn it adds x[t]·a[t][0:4] to acc.
//
//go:noescape
func colAdd4AVX2(rows int, a *float64, stride int, x *float64, xstep int, acc *[4]float64)

// colSub4AVX2 is colAdd16AVX2 for 4 sums: for rows t in turn it subtracts a[t][0:4]·x[t] from acc.
//
//go:noescape
func colSub4AVX2(rows int, a *float64, stride int, x *float64, xstep int, acc *[4]float64)

// colAdd8AVX2 is colAdd16AVX2 for 8 sums: for rows t in turn it adds x[t]·a[t][0:8] to acc.
//
//go:noescape
func colAdd8AVX2(rows int, a *float64, stride int, x *float64, xstep int, acc *[8]float64)

// colSub8AVX2 is colAdd16AVX2 for 8 sums: for rows t in turn it subtracts a[t][0:8]·x[t] from acc.
//
//go:noescape
func colSub8AVX2(rows int, a *float64, stride int, x *float64, xstep int, acc *[8]float64)

// colAdd12AVX2 is colAdd16AVX2 for 12 sums: for rows t in turn it adds x[t]·a[t][0:12] to acc.
//
//go:noescape
func colAdd12AVX2(rows int, a *float64, stride int, x *float64, xstep int, acc *[12]float64)

// colSub12AVX2 is colAdd16AVX2 for 12 sums: for rows t in turn it subtracts a[t][0:12]·x[t] from acc.
//
//go:noescape
func colSub12AVX2(rows int, a *float64, stride int, x *float64, xstep int, acc *[12]float64)

// lanesDot8AVX2 sets out[p] to gonum's DotUnitary of x[0:k] with column p
// of the 8 columns at wt (row l of them at wt + l·ldw bytes): the products
// of index l < 4·n4 go to partial sum l mod 4, the rest to partial sum 0,
// each in increasing l, and out[p] = (s0 + s2) + (s1 + s3).
//
//go:noescape
func lanesDot8AVX2(k, n4 int, x *float64, wt *float64, ldw int, out *[8]float64)

// cosineAVX2 sets dst[i] = scale·cos(dst[i] + phase[i]) for i < 4·n4 with
// the operations of model's cosine (Cody–Waite reduction by 2π in two parts,
// the Taylor series to t³⁰ by Horner's rule), for arguments below 2²⁰ in
// magnitude; coef holds the 16 Taylor coefficients and the constants
// [invTwoPi, roundMagic, twoPiHi, twoPiLo].
//
//go:noescape
func cosineAVX2(n4 int, dst, phase *float64, scale float64, coef *[20]float64)

// dotStagedAVX2 is dot1x4AVX2 for four rows whose dot products with x start
// one block of four further along each: row q (at r_q) joins at x block q.
// It adds to acc[q·4+lane] the products of x blocks 0, …, nc+2 (row q from
// block q on) in increasing index, each row's products in its own four
// lanes.
//
//go:noescape
func dotStagedAVX2(nc int, x, r0, r1, r2, r3 *float64, acc *[16]float64)

// gemvN8AVX2 adds to acc[r·4+lane] the products of row r < 8 of a (row r at
// a + r·lda bytes) with x over n2 pairs of columns: lane 0 and 1 (row r's
// even and odd columns) in registers paired with row r+1's in lanes 2 and 3,
// each in increasing column — gonum's GemvN keeps a row's even and odd sums
// in one SSE2 register the same way.
//
//go:noescape
func gemvN8AVX2(n2 int, a *float64, lda int, x *float64, acc *[32]float64)

// gemvTBlockAVX2 adds, for chunks c < nchunks of sixteen columns and rows
// t < rows in order, coef[t]·a[t][16c : 16c+16] to y[16c : 16c+16] (row t of
// a at a + t·lda bytes): gonum's GemvT order, one chunk of y in registers
// while the block's rows pass.
//
//go:noescape
func gemvTBlockAVX2(rows, nchunks int, a *float64, lda int, coef, y *float64)
