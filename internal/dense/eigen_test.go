package dense

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// symRandom returns a random symmetric n×n matrix: a kernel matrix of
// rank min(n, k) (k < n leaves exact zero eigenvalues, as a client with
// fewer rows than coordinates does) scaled by scale.
func symRandom(rng *rand.Rand, n, k int, scale float64) []float64 {
	x := randSlice(rng, n*k)
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			var s float64
			for l := 0; l < k; l++ {
				s += x[i*k+l] * x[j*k+l]
			}
			a[i*n+j], a[j*n+i] = scale*s, scale*s
		}
	}
	return a
}

// TestSymEigenGonum checks SymEigen against gonum's Dsyev(EVCompute,
// Upper) with its optimal workspace bit for bit — eigenvalues and
// eigenvectors — on both paths, for sizes 1…12 and some larger ones, of
// full and deficient rank, and scaled far up and down (where Dsyev and the
// QL/QR iteration rescale).
func TestSymEigenGonum(t *testing.T) {
	paths(t, func(t *testing.T, _ bool) {
		rng := rand.New(rand.NewPCG(21, 22))
		var ws EigenWork
		for _, n := range append(seq(1, 12), 17, 33, 50, 65) {
			for _, k := range []int{n, max(1, n/2), 2 * n} {
				for _, scale := range []float64{1, 1e-160, 1e160} {
					a := symRandom(rng, n, k, scale)
					want, wantW := append([]float64(nil), a...), make([]float64, n)
					sym := blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: want}
					var query [1]float64
					lapack64.Syev(lapack.EVCompute, sym, wantW, query[:], -1)
					work := make([]float64, int(query[0]))
					wantOK := lapack64.Syev(lapack.EVCompute, sym, wantW, work, len(work))
					got, gotW := append([]float64(nil), a...), make([]float64, n)
					if ok := SymEigen(n, got, n, gotW, &ws); ok != wantOK {
						t.Fatalf("n=%d k=%d scale=%g: ok = %v, gonum %v", n, k, scale, ok, wantOK)
					}
					if i, ok := sameBits(gotW, wantW); !ok {
						t.Fatalf("n=%d k=%d scale=%g: eigenvalue %d = %v, gonum %v", n, k, scale, i, gotW[i], wantW[i])
					}
					if i, ok := sameBits(got, want); !ok {
						t.Fatalf("n=%d k=%d scale=%g: vector entry %d = %v, gonum %v", n, k, scale, i, got[i], want[i])
					}
				}
			}
		}
	})
}

// TestSymEigenResidual checks A·v = λ·v and the orthonormality of the
// eigenvectors within relative bounds (independent of gonum).
func TestSymEigenResidual(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	n := 30
	a := symRandom(rng, n, n, 1)
	v, w := append([]float64(nil), a...), make([]float64, n)
	if !SymEigen(n, v, n, w, &EigenWork{}) {
		t.Fatal("no convergence")
	}
	for j := 0; j < n; j++ {
		if j > 0 && w[j] < w[j-1] {
			t.Fatalf("eigenvalues not ascending at %d", j)
		}
		for i := 0; i < n; i++ {
			var av float64
			for l := 0; l < n; l++ {
				av += a[i*n+l] * v[l*n+j]
			}
			if math.Abs(av-w[j]*v[i*n+j]) > 1e-11*w[n-1] {
				t.Fatalf("residual of pair %d at row %d: %g", j, i, av-w[j]*v[i*n+j])
			}
		}
		for k := 0; k <= j; k++ {
			var d float64
			for i := 0; i < n; i++ {
				d += v[i*n+j] * v[i*n+k]
			}
			want := 0.0
			if k == j {
				want = 1
			}
			if math.Abs(d-want) > 1e-12 {
				t.Fatalf("vᵀv (%d,%d) = %v", j, k, d)
			}
		}
	}
}

func BenchmarkSymEigen50(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 50
	a := symRandom(rng, n, 100, 0.01)
	v, w := make([]float64, n*n), make([]float64, n)
	b.Run("dense", func(b *testing.B) {
		var ws EigenWork
		for b.Loop() {
			copy(v, a)
			SymEigen(n, v, n, w, &ws)
		}
	})
	b.Run("gonum", func(b *testing.B) {
		sym := blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: v}
		var query [1]float64
		lapack64.Syev(lapack.EVCompute, sym, w, query[:], -1)
		work := make([]float64, int(query[0]))
		for b.Loop() {
			copy(v, a)
			lapack64.Syev(lapack.EVCompute, sym, w, work, len(work))
		}
	})
}

// TestTridiagEigenLast checks the eigenvalues and the eigenvectors' last
// components against gonum's Dsteqr(EVTridiag) bit for bit, on random
// tridiagonal matrices of sizes 1…40 and 200 (the Lanczos matrices of Υ),
// including one that splits (a zero off-diagonal entry).
func TestTridiagEigenLast(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	for _, n := range append(seq(1, 40), 200) {
		d, e := randSlice(rng, n), randSlice(rng, max(n-1, 1))
		if n > 5 {
			e[n/2] = 0
		}
		wd, we := append([]float64(nil), d...), append([]float64(nil), e...)
		z := make([]float64, n*n)
		wantOK := lapackImpl.Dsteqr(lapack.EVTridiag, n, wd, we, z, n, make([]float64, max(1, 2*n-2)))
		gd, ge := append([]float64(nil), d...), append([]float64(nil), e...)
		last := make([]float64, n)
		if ok := TridiagEigenLast(n, gd, ge, last, make([]float64, 2*n)); ok != wantOK {
			t.Fatalf("n=%d: ok = %v, gonum %v", n, ok, wantOK)
		}
		if i, ok := sameBits(gd, wd); !ok {
			t.Fatalf("n=%d: eigenvalue %d = %v, gonum %v", n, i, gd[i], wd[i])
		}
		if i, ok := sameBits(last, z[(n-1)*n:]); !ok {
			t.Fatalf("n=%d: last component %d = %v, gonum %v", n, i, last[i], z[(n-1)*n+i])
		}
	}
}
