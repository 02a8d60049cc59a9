package dense

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// TestGemmNTGonum checks GemmNT against gonum's Dgemm(NoTrans, Trans)
// with alpha 1 and beta 0 bit for bit, on both paths: k below and above
// gonum's block of 64 (where it sums block by block when it goes parallel,
// all of k at once when it does not), m around the eight-column panels.
func TestGemmNTGonum(t *testing.T) {
	paths(t, func(t *testing.T, _ bool) {
		rng := rand.New(rand.NewPCG(31, 32))
		for _, n := range []int{1, 3, 64, 65, 130} {
			for _, m := range []int{1, 7, 8, 13, 200} {
				for _, k := range []int{0, 1, 5, 10, 16, 64, 65, 150} {
					ldx, ldb := k+1, k+2
					x, b := randSlice(rng, n*ldx), randSlice(rng, m*ldb)
					bt := make([]float64, max(k, 1)*m)
					for j := 0; j < m; j++ {
						for l := 0; l < k; l++ {
							bt[l*m+j] = b[j*ldb+l]
						}
					}
					ldc := m + 3
					want := randSlice(rng, n*ldc)
					got := append([]float64(nil), want...)
					blas64.Implementation().Dgemm(blas.NoTrans, blas.Trans, n, m, k, 1, x, ldx, b, ldb, 0, want, ldc)
					GemmNT(n, m, k, x, ldx, bt, m, got, ldc)
					if i, ok := sameBits(got, want); !ok {
						t.Fatalf("n=%d m=%d k=%d: entry (%d,%d) = %v, gonum %v", n, m, k, i/ldc, i%ldc, got[i], want[i])
					}
				}
			}
		}
	})
}

// cosTest is the scalar cosine CosScale vectorises (model's cosine).
func cosTest(x float64, coef *[20]float64) float64 {
	k := (x*coef[16] + coef[17]) - coef[17]
	r := (x - k*coef[18]) - k*coef[19]
	z := r * r
	p := coef[15]
	for j := 14; j >= 0; j-- {
		p = p*z + coef[j]
	}
	return p
}

// TestCosScale checks the AVX2 cosine against the same operations in Go
// bit for bit, and the series against math.Cos within 1e-15.
func TestCosScale(t *testing.T) {
	var coef [20]float64
	f := 1.0
	for j := 0; j < 16; j++ {
		if j > 0 {
			f *= float64(2*j-1) * float64(2*j)
		}
		coef[j] = 1 / f
		if j%2 == 1 {
			coef[j] = -coef[j]
		}
	}
	coef[16], coef[17], coef[18], coef[19] = 1/(2*math.Pi), 0x1.8p52, 0x1.921fb544p+2, 2.430840202602477e-10
	rng := rand.New(rand.NewPCG(33, 34))
	n := 203
	v, ph := make([]float64, n), make([]float64, n)
	for i := range v {
		v[i] = 30 * rng.NormFloat64()
		ph[i] = 2 * math.Pi * rng.Float64()
	}
	got := append([]float64(nil), v...)
	done := CosScale(got, ph, 0.07, &coef)
	if useAVX2 && done != 200 {
		t.Fatalf("did %d of %d", done, n)
	}
	for i := 0; i < done; i++ {
		want := 0.07 * cosTest(v[i]+ph[i], &coef)
		if math.Float64bits(got[i]) != math.Float64bits(want) {
			t.Fatalf("entry %d: %v, Go %v", i, got[i], want)
		}
		if math.Abs(want-0.07*math.Cos(v[i]+ph[i])) > 1e-15 {
			t.Fatalf("entry %d: series %v, math.Cos %v", i, want, 0.07*math.Cos(v[i]+ph[i]))
		}
	}
	v[5] = 1 << 21 // beyond the reduction: nothing is done
	if got := append([]float64(nil), v...); CosScale(got, ph, 1, &coef) != 0 {
		t.Fatal("an argument of 2²¹ was reduced")
	}
}
