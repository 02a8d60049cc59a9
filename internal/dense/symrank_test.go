package dense

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// goRunner runs the calls on separate goroutines in reverse order, so that
// a result that depended on the schedule would show.
func goRunner(n int, f func(int)) {
	var wg sync.WaitGroup
	for i := n - 1; i >= 0; i-- {
		wg.Add(1)
		go func() { defer wg.Done(); f(i) }()
	}
	wg.Wait()
}

// naiveSymRank is SymRank's definition written out: beta, then per stripe
// alpha times the stripe's dot product summed in order.
func naiveSymRank(c []float64, ldc int, a []float64, lda, r, n int, alpha, beta float64) {
	for k := 0; k < r; k++ {
		for l := k; l < r; l++ {
			v := c[k*ldc+l]
			switch beta {
			case 0:
				v = 0
			case 1:
			default:
				v *= beta
			}
			for lo := 0; lo < n; lo += Stripe {
				var s float64
				for i := lo; i < min(lo+Stripe, n); i++ {
					s += float64(a[k*lda+i] * a[l*lda+i])
				}
				v += float64(alpha * s)
			}
			c[k*ldc+l] = v
		}
	}
}

// TestSymRank checks SymRank bit for bit against its definition written
// as plain loops, on both paths, serial and on goroutines in reverse order,
// for sizes around the tile (4×8), task (64 rows) and stripe (256 columns)
// boundaries, strides wider than the rows, and beta 0, 1 and another; the
// strict lower triangle must stay as it was.
func TestSymRank(t *testing.T) {
	paths(t, func(t *testing.T, _ bool) {
		rng := rand.New(rand.NewPCG(7, 8))
		for _, r := range []int{1, 2, 3, 4, 5, 7, 8, 9, 12, 63, 64, 65, 130} {
			for _, n := range []int{0, 1, 5, 255, 256, 257, 600} {
				if r*n > 40000 && r > 64 {
					continue
				}
				for _, ab := range [][2]float64{{1, 0}, {-1, 1}, {1.0 / 7, 0.3}} {
					lda, ldc := n+1, r+2
					a := randSlice(rng, r*lda)
					c0 := randSlice(rng, r*ldc)
					want := append([]float64(nil), c0...)
					naiveSymRank(want, ldc, a, lda, r, n, ab[0], ab[1])
					for _, run := range []Runner{nil, goRunner} {
						got := append([]float64(nil), c0...)
						SymRank(got, ldc, a, lda, r, n, ab[0], ab[1], run)
						if i, ok := sameBits(got, want); !ok {
							t.Fatalf("r=%d n=%d alpha,beta=%v: entry (%d,%d) = %v, want %v", r, n, ab, i/ldc, i%ldc, got[i], want[i])
						}
					}
				}
			}
		}
	})
}

// TestSymRankNaive checks SymRank against the textbook product within a
// relative bound (independent of the summation order).
func TestSymRankNaive(t *testing.T) {
	paths(t, func(t *testing.T, _ bool) {
		rng := rand.New(rand.NewPCG(9, 10))
		r, n := 21, 700
		a := randSlice(rng, r*n)
		c := make([]float64, r*r)
		SymRank(c, r, a, n, r, n, 2, 0, nil)
		for k := 0; k < r; k++ {
			for l := k; l < r; l++ {
				var s float64
				for i := 0; i < n; i++ {
					s += a[k*n+i] * a[l*n+i]
				}
				if math.Abs(c[k*r+l]-2*s) > 1e-12*(1+math.Abs(s)) {
					t.Fatalf("(%d,%d) = %v, want %v", k, l, c[k*r+l], 2*s)
				}
			}
		}
	})
}

// TestGemm4x8 checks the AVX2 micro-kernel against its Go twin bit for bit.
func TestGemm4x8(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, kc := range []int{1, 2, 3, 17, 256} {
		pa, pb := randSlice(rng, kc*8), randSlice(rng, kc*8)
		var got, want [32]float64
		gemm4x8AVX2(kc, &pa[0], 64, &pb[0], 64, &got)
		gemm4x8Go(kc, pa, 8, pb, 8, &want)
		if i, ok := sameBits(got[:], want[:]); !ok {
			t.Fatalf("kc=%d: acc[%d] = %v, Go %v", kc, i, got[i], want[i])
		}
	}
}

func BenchmarkSymRank(b *testing.B) {
	for _, sz := range [][2]int{{200, 500}, {2000, 7494}} {
		r, n := sz[0], sz[1]
		if r == 2000 && testing.Short() {
			continue
		}
		rng := rand.New(rand.NewPCG(1, 1))
		a := randSlice(rng, r*n)
		c := make([]float64, r*r)
		for _, asm := range []bool{true, false} {
			name := fmtSize(r, n) + "/go"
			if asm {
				name = fmtSize(r, n) + "/avx2"
			}
			b.Run(name, func(b *testing.B) {
				saved := useAVX2
				defer func() { useAVX2 = saved }()
				useAVX2 = useAVX2 && asm
				for b.Loop() {
					SymRank(c, r, a, n, r, n, 1, 0, nil)
				}
			})
		}
	}
}
