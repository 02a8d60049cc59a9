package dense

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// paths runs f with the assembly kernels (when the CPU has them) and with
// the pure-Go ones.
func paths(t *testing.T, f func(t *testing.T, asm bool)) {
	t.Helper()
	saved := useAVX2
	defer func() { useAVX2 = saved }()
	for _, asm := range []bool{false, true} {
		if asm && !saved {
			continue
		}
		useAVX2 = asm
		name := "go"
		if asm {
			name = "avx2"
		}
		t.Run(name, func(t *testing.T) { f(t, asm) })
	}
}

func randSlice(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

// sameBits reports the first index where a and b differ as bit patterns.
func sameBits(a, b []float64) (int, bool) {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return i, false
		}
	}
	return -1, true
}

// TestDotGonum checks Dot against gonum's DotUnitary (through blas64.Dot)
// bit for bit, for every length up to 41 and some long ones: the four
// partial sums, the tail and their combination must match exactly.
func TestDotGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range append(seq(0, 41), 100, 255, 256, 1001) {
		x, y := randSlice(rng, n), randSlice(rng, n)
		want := blas64.Dot(blas64.Vector{N: n, Inc: 1, Data: x}, blas64.Vector{N: n, Inc: 1, Data: y})
		if got := Dot(x, y); math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("n=%d: Dot = %v, gonum %v", n, got, want)
		}
	}
}

func seq(lo, hi int) []int {
	var s []int
	for i := lo; i <= hi; i++ {
		s = append(s, i)
	}
	return s
}

// TestSyrkUpperGonum checks SyrkUpper against gonum's Dsyrk(Upper, NoTrans)
// bit for bit (both paths), on odd and even sizes, strides larger than the
// rows, beta 0, 1 and another, alpha 0 and negative; the lower triangle
// must stay untouched.
func TestSyrkUpperGonum(t *testing.T) {
	paths(t, func(t *testing.T, _ bool) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 13, 50} {
			for _, k := range []int{0, 1, 3, 4, 5, 17, 100} {
				for _, ab := range [][2]float64{{1, 0}, {0.02, 0}, {-1, 1}, {1.0 / 3, 0.7}, {0, 0.5}, {0, 0}} {
					lda, ldc := k+2, n+3
					a := randSlice(rng, n*lda)
					c0 := randSlice(rng, n*ldc)
					want := append([]float64(nil), c0...)
					blas64.Implementation().Dsyrk(blas.Upper, blas.NoTrans, n, k, ab[0], a, lda, ab[1], want, ldc)
					got := append([]float64(nil), c0...)
					SyrkUpper(n, k, ab[0], a, lda, ab[1], got, ldc)
					if i, ok := sameBits(got, want); !ok {
						t.Fatalf("n=%d k=%d alpha,beta=%v: entry %d = %v, gonum %v", n, k, ab, i, got[i], want[i])
					}
				}
			}
		}
	})
}

// TestSyrkUpperNaive checks SyrkUpper against a naive triple loop within a
// relative bound (an independent truth: a wrong kernel is off by O(1)).
func TestSyrkUpperNaive(t *testing.T) {
	paths(t, func(t *testing.T, _ bool) {
		rng := rand.New(rand.NewPCG(5, 6))
		n, k := 11, 37
		a := randSlice(rng, n*k)
		c := make([]float64, n*n)
		SyrkUpper(n, k, 0.5, a, k, 0, c, n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if j < i {
					if c[i*n+j] != 0 {
						t.Fatalf("lower entry (%d,%d) written", i, j)
					}
					continue
				}
				var s float64
				for l := 0; l < k; l++ {
					s += a[i*k+l] * a[j*k+l]
				}
				if want := 0.5 * s; math.Abs(c[i*n+j]-want) > 1e-13*(1+math.Abs(want)) {
					t.Fatalf("(%d,%d) = %v, naive %v", i, j, c[i*n+j], want)
				}
			}
		}
	})
}

func BenchmarkSyrkUpper(b *testing.B) {
	for _, sz := range [][2]int{{50, 100}, {100, 500}} {
		n, k := sz[0], sz[1]
		rng := rand.New(rand.NewPCG(1, 1))
		a := randSlice(rng, n*k)
		c := make([]float64, n*n)
		b.Run(fmtSize(n, k)+"/dense", func(b *testing.B) {
			for b.Loop() {
				SyrkUpper(n, k, 1, a, k, 0, c, n)
			}
		})
		b.Run(fmtSize(n, k)+"/gonum", func(b *testing.B) {
			for b.Loop() {
				blas64.Implementation().Dsyrk(blas.Upper, blas.NoTrans, n, k, 1, a, k, 0, c, n)
			}
		})
	}
}

func fmtSize(n, k int) string { return strconv.Itoa(n) + "x" + strconv.Itoa(k) }

// TestGemmTNGonum checks GemmTN against gonum's Dgemm(Trans, NoTrans)
// with alpha 1 and beta 0 bit for bit, on both paths, on sizes around the
// 4×8 tiles and gonum's 64-blocks (where gonum goes parallel), with some
// zero entries in A (which gonum skips).
func TestGemmTNGonum(t *testing.T) {
	paths(t, func(t *testing.T, _ bool) {
		rng := rand.New(rand.NewPCG(19, 20))
		for _, m := range []int{1, 3, 4, 5, 9, 100, 130} {
			for _, n := range []int{1, 7, 8, 9, 50, 70} {
				for _, k := range []int{0, 1, 2, 50, 65} {
					lda, ldb, ldc := m+1, n+2, n+3
					a, b := randSlice(rng, max(k, 1)*lda), randSlice(rng, max(k, 1)*ldb)
					for i := 0; i < len(a); i += 7 {
						a[i] = 0
					}
					want := randSlice(rng, m*ldc)
					got := append([]float64(nil), want...)
					blas64.Implementation().Dgemm(blas.Trans, blas.NoTrans, m, n, k, 1, a, lda, b, ldb, 0, want, ldc)
					GemmTN(m, n, k, a, lda, b, ldb, got, ldc)
					if i, ok := sameBits(got, want); !ok {
						t.Fatalf("m=%d n=%d k=%d: entry (%d,%d) = %v, gonum %v", m, n, k, i/ldc, i%ldc, got[i], want[i])
					}
				}
			}
		}
	})
}

// TestGemmNNGonum checks GemmNN against gonum's Dgemm(NoTrans, NoTrans)
// with alpha 1 and beta 0 bit for bit, on both paths, on sizes around the
// tiles and gonum's 64-blocks, strides wider than the rows, with zeros in A.
func TestGemmNNGonum(t *testing.T) {
	paths(t, func(t *testing.T, _ bool) {
		rng := rand.New(rand.NewPCG(25, 26))
		for _, m := range []int{1, 3, 4, 5, 50, 100, 130} {
			for _, n := range []int{1, 7, 8, 9, 50, 70} {
				for _, k := range []int{0, 1, 2, 50, 65} {
					lda, ldb, ldc := k+1, n+2, n+3
					a, b := randSlice(rng, m*lda), randSlice(rng, max(k, 1)*ldb)
					for i := 0; i < len(a); i += 5 {
						a[i] = 0
					}
					want := randSlice(rng, m*ldc)
					got := append([]float64(nil), want...)
					blas64.Implementation().Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, lda, b, ldb, 0, want, ldc)
					GemmNN(m, n, k, a, lda, b, ldb, got, ldc)
					if i, ok := sameBits(got, want); !ok {
						t.Fatalf("m=%d n=%d k=%d: entry (%d,%d) = %v, gonum %v", m, n, k, i/ldc, i%ldc, got[i], want[i])
					}
				}
			}
		}
	})
}

// TestGemmTNAccGonum checks GemmTNAcc against gonum's Dgemm(Trans,
// NoTrans) bit for bit, on both paths, with alpha and beta as the ridge
// operators use them (1/n and λ, −1/λ and 1/λ) and 0 and 1, on sizes that
// need the moved-back tiles.
func TestGemmTNAccGonum(t *testing.T) {
	paths(t, func(t *testing.T, _ bool) {
		rng := rand.New(rand.NewPCG(29, 30))
		for _, m := range []int{1, 4, 5, 13, 66, 70, 129} {
			for _, n := range []int{1, 8, 10, 19} {
				for _, k := range []int{0, 1, 7, 70} {
					for _, ab := range [][2]float64{{1, 0}, {1.0 / 750, 1e-4}, {-1e4, 1e4}, {0.3, 1}, {0, 0.5}} {
						lda, ldb, ldc := m+1, n+2, n+3
						a, b := randSlice(rng, max(k, 1)*lda), randSlice(rng, max(k, 1)*ldb)
						want := randSlice(rng, m*ldc)
						got := append([]float64(nil), want...)
						blas64.Implementation().Dgemm(blas.Trans, blas.NoTrans, m, n, k, ab[0], a, lda, b, ldb, ab[1], want, ldc)
						GemmTNAcc(m, n, k, ab[0], a, lda, b, ldb, ab[1], got, ldc)
						if i, ok := sameBits(got, want); !ok {
							t.Fatalf("m=%d n=%d k=%d alpha,beta=%v: entry (%d,%d) = %v, gonum %v", m, n, k, ab, i/ldc, i%ldc, got[i], want[i])
						}
					}
				}
			}
		}
	})
}

// TestGemvGonum checks GemvN and GemvT against gonum's Dgemv bit for bit,
// on both paths, for every m and n up to 19 and some larger (odd and even,
// around the eight-row and sixteen-column blocks; the last row of an odd m
// is summed differently by gonum), with alpha and beta as the ridge
// operators use them and 0 and 1.
func TestGemvGonum(t *testing.T) {
	impl := blas64.Implementation()
	paths(t, func(t *testing.T, _ bool) {
		rng := rand.New(rand.NewPCG(39, 40))
		for _, m := range append(seq(1, 19), 33, 200) {
			for _, n := range append(seq(1, 19), 37, 200) {
				for _, ab := range [][2]float64{{1, 0}, {1.0 / 750, 1e-4}, {-1e4, 1e4}, {0.5, 1}, {0, 0.3}} {
					lda := n + 1
					a := randSlice(rng, m*lda)
					for _, trans := range []bool{false, true} {
						lx, ly := n, m
						tA := blas.NoTrans
						if trans {
							lx, ly, tA = m, n, blas.Trans
						}
						x, y := randSlice(rng, lx), randSlice(rng, ly)
						want := append([]float64(nil), y...)
						impl.Dgemv(tA, m, n, ab[0], a, lda, x, 1, ab[1], want, 1)
						got := append([]float64(nil), y...)
						if trans {
							GemvT(m, n, ab[0], a, lda, x, ab[1], got)
						} else {
							GemvN(m, n, ab[0], a, lda, x, ab[1], got)
						}
						if i, ok := sameBits(got, want); !ok {
							t.Fatalf("m=%d n=%d trans=%v alpha,beta=%v: y[%d] = %v, gonum %v", m, n, trans, ab, i, got[i], want[i])
						}
					}
				}
			}
		}
	})
}

func BenchmarkGemv(b *testing.B) {
	const m, n = 750, 2000 // a pendigits client's features
	rng := rand.New(rand.NewPCG(1, 1))
	a, x, y := randSlice(rng, m*n), randSlice(rng, n), make([]float64, n)
	impl := blas64.Implementation()
	b.Run("N/dense", func(b *testing.B) {
		for b.Loop() {
			GemvN(m, n, 1, a, n, x, 0, y)
		}
	})
	b.Run("N/gonum", func(b *testing.B) {
		for b.Loop() {
			impl.Dgemv(blas.NoTrans, m, n, 1, a, n, x, 1, 0, y, 1)
		}
	})
	b.Run("T/dense", func(b *testing.B) {
		for b.Loop() {
			GemvT(m, n, 1, a, n, x[:m], 0.5, y)
		}
	})
	b.Run("T/gonum", func(b *testing.B) {
		for b.Loop() {
			impl.Dgemv(blas.Trans, m, n, 1, a, n, x[:m], 1, 0.5, y, 1)
		}
	})
}

func BenchmarkGemmTNAcc(b *testing.B) {
	// model/ridge.go: the m×c right-hand sides of m features, c classes.
	const m, n, k = 256, 10, 500
	rng := rand.New(rand.NewPCG(1, 1))
	a, bm, c := randSlice(rng, k*m), randSlice(rng, k*n), make([]float64, m*n)
	b.Run("dense", func(b *testing.B) {
		for b.Loop() {
			GemmTNAcc(m, n, k, 0.5, a, m, bm, n, 0.25, c, n)
		}
	})
	b.Run("gonum", func(b *testing.B) {
		impl := blas64.Implementation()
		for b.Loop() {
			impl.Dgemm(blas.Trans, blas.NoTrans, m, n, k, 0.5, a, m, bm, n, 0.25, c, n)
		}
	})
}
