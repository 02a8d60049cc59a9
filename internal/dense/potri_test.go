package dense

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack/gonum"
)

// spdFactor returns the upper Cholesky factor (gonum's Dpotrf, stride lda)
// of I + η·XᵀX/rows for a random X, as FedProx's maps factorise; with
// sparse, about a third of X's entries are zero and no row of X has nonzero
// entries in both even and odd columns, so that the factor and its inverse
// have zero entries (the skipped terms of gonum's Dtrmm and Dtrsm).
func spdFactor(rng *rand.Rand, n, lda int, sparse bool) []float64 {
	rows := n + 7
	x := make([]float64, rows*n)
	for i := range x {
		x[i] = rng.NormFloat64()
		if sparse && (rng.IntN(3) == 0 || (i/n)%2 != (i%n)%2) {
			x[i] = 0
		}
	}
	a := make([]float64, (n-1)*lda+n+3)
	for i := range a {
		a[i] = math.NaN() // the strict lower triangle and the padding
	}
	eta := 0.1 + rng.Float64()
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			var s float64
			for k := 0; k < rows; k++ {
				s += x[k*n+i] * x[k*n+j]
			}
			a[i*lda+j] = eta * s / float64(rows)
		}
		a[i*lda+i]++
	}
	if !(gonum.Implementation{}).Dpotrf(blas.Upper, n, a, lda) {
		panic("not positive definite")
	}
	return a
}

func potriSame(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
			t.Fatalf("%s: entry %d: %v, gonum %v", what, i, got[i], want[i])
		}
	}
}

// TestPotriGonum compares PotriUpper and PotrsUpper1 with gonum's Dpotri
// and Dpotrs bit for bit, on both sides of the block size 64 and of the
// 128 beyond which PotriUpper calls gonum, with the AVX2 and the pure-Go
// kernels.
func TestPotriGonum(t *testing.T) {
	paths(t, testPotriGonum)
}

func testPotriGonum(t *testing.T, _ bool) {
	rng := rand.New(rand.NewPCG(5, 20))
	impl := gonum.Implementation{}
	for n := 0; n <= 140; n++ {
		if n > 20 && n%7 != 0 && n != 63 && n != 64 && n != 65 && n != 100 && n != 127 && n != 128 && n != 129 {
			continue
		}
		for _, lda := range []int{max(n, 1), n + 3} {
			for _, sparse := range []bool{false, true} {
				if n == 0 {
					if !PotriUpper(0, nil, 1) {
						t.Fatal("n = 0")
					}
					continue
				}
				a := spdFactor(rng, n, lda, sparse)
				want := append([]float64(nil), a...)
				got := append([]float64(nil), a...)
				if !impl.Dpotri(blas.Upper, n, want, lda) || !PotriUpper(n, got, lda) {
					t.Fatalf("n = %d: not invertible", n)
				}
				potriSame(t, "PotriUpper", got, want)

				b := make([]float64, n)
				for i := range b {
					b[i] = rng.NormFloat64()
					if sparse && i%5 == 0 {
						b[i] = 0
					}
				}
				wb := append([]float64(nil), b...)
				impl.Dpotrs(blas.Upper, n, 1, a, lda, wb, 1)
				PotrsUpper1(n, a, lda, b)
				potriSame(t, "PotrsUpper1", b, wb)
			}
		}
	}
	// A zero on the diagonal: false, as gonum.
	a := []float64{1, 2, 0, 0}
	if PotriUpper(2, a, 2) {
		t.Fatal("singular factor inverted")
	}
}

// BenchmarkPotri is FedProx's map of a 100-coordinate client: the inverse
// and one solve from its Cholesky factor, gonum against this package.
func BenchmarkPotri(b *testing.B) {
	const n = 100
	rng := rand.New(rand.NewPCG(1, 2))
	a := spdFactor(rng, n, n, false)
	w := make([]float64, len(a))
	v := make([]float64, n)
	impl := gonum.Implementation{}
	b.Run("potrs/gonum", func(b *testing.B) {
		for b.Loop() {
			impl.Dpotrs(blas.Upper, n, 1, a, n, v, 1)
		}
	})
	b.Run("potrs/dense", func(b *testing.B) {
		for b.Loop() {
			PotrsUpper1(n, a, n, v)
		}
	})
	b.Run("potri/gonum", func(b *testing.B) {
		for b.Loop() {
			copy(w, a)
			impl.Dpotri(blas.Upper, n, w, n)
		}
	})
	b.Run("potri/dense", func(b *testing.B) {
		for b.Loop() {
			copy(w, a)
			PotriUpper(n, w, n)
		}
	})
}
