package dense

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// TestMultiColumnGonum checks the four multi-column triangular kernels
// against gonum's Dtrmm and Dtrsm (Left, Upper, alpha 1) bit for bit, on
// both paths, for column counts around the padding (multiples of four) and
// the sixteen-column chunks, with a stride wider than the rows of B and a
// diagonal entry equal to one (which gonum's Rᵀ·B does not scale).
func TestMultiColumnGonum(t *testing.T) {
	impl := blas64.Implementation()
	paths(t, func(t *testing.T, _ bool) {
		rng := rand.New(rand.NewPCG(27, 28))
		for _, m := range []int{1, 2, 3, 17, 70} {
			for _, c := range []int{1, 2, 3, 4, 5, 10, 16, 17, 33} {
				lda, ldb := m+1, c+2
				a := upper(rng, m, lda)
				a[(m/2)*lda+m/2] = 1
				b := randSlice(rng, m*ldb)
				for _, k := range []struct {
					name  string
					f     func(m, c int, a []float64, lda int, b []float64, ldb int)
					tA    blas.Transpose
					solve bool
				}{
					{"TrmmUpper", TrmmUpper, blas.NoTrans, false},
					{"TrmmUpperTrans", TrmmUpperTrans, blas.Trans, false},
					{"TrsmUpper", TrsmUpper, blas.NoTrans, true},
					{"TrsmUpperTrans", TrsmUpperTrans, blas.Trans, true},
				} {
					want := append([]float64(nil), b...)
					if k.solve {
						impl.Dtrsm(blas.Left, blas.Upper, k.tA, blas.NonUnit, m, c, 1, a, lda, want, ldb)
					} else {
						impl.Dtrmm(blas.Left, blas.Upper, k.tA, blas.NonUnit, m, c, 1, a, lda, want, ldb)
					}
					got := append([]float64(nil), b...)
					k.f(m, c, a, lda, got, ldb)
					if i, ok := sameBits(got, want); !ok {
						t.Fatalf("%s m=%d c=%d: entry (%d,%d) = %v, gonum %v", k.name, m, c, i/ldb, i%ldb, got[i], want[i])
					}
				}
			}
		}
	})
}
