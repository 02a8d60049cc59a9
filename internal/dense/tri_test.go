package dense

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// upper returns a random n×n upper triangular matrix (stride lda) with a
// diagonal away from zero, and garbage below the diagonal that the kernels
// must not read.
func upper(rng *rand.Rand, n, lda int) []float64 {
	a := make([]float64, max(0, (n-1)*lda+n))
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			switch {
			case j < i:
				a[i*lda+j] = math.NaN()
			case j == i:
				a[i*lda+j] = 1 + rng.Float64()
			default:
				a[i*lda+j] = rng.NormFloat64() / math.Sqrt(float64(n))
			}
		}
	}
	return a
}

// TestTriangularGonum checks the four triangular kernels against gonum's
// Dtrmv and Dtrsv bit for bit, on both paths, for every size up to 40 and
// some larger ones (around the 16-column blocks and the 16-row groups),
// with a stride wider than n.
func TestTriangularGonum(t *testing.T) {
	impl := blas64.Implementation()
	type kernel struct {
		name  string
		dense func(n int, a []float64, lda int, x []float64)
		tA    blas.Transpose
		solve bool
	}
	kernels := []kernel{
		{"TrmvUpper", TrmvUpper, blas.NoTrans, false},
		{"TrmvUpperTrans", TrmvUpperTrans, blas.Trans, false},
		{"TrsvUpper", TrsvUpper, blas.NoTrans, true},
		{"TrsvUpperTrans", TrsvUpperTrans, blas.Trans, true},
	}
	paths(t, func(t *testing.T, _ bool) {
		rng := rand.New(rand.NewPCG(13, 14))
		for _, n := range append(seq(0, 40), 47, 48, 49, 63, 64, 65, 200) {
			lda := n + 3
			a := upper(rng, n, lda)
			x := randSlice(rng, n)
			for _, k := range kernels {
				want := append([]float64(nil), x...)
				if k.solve {
					impl.Dtrsv(blas.Upper, k.tA, blas.NonUnit, n, a, max(1, lda), want, 1)
				} else {
					impl.Dtrmv(blas.Upper, k.tA, blas.NonUnit, n, a, max(1, lda), want, 1)
				}
				got := append([]float64(nil), x...)
				k.dense(n, a, lda, got)
				if i, ok := sameBits(got, want); !ok {
					t.Fatalf("%s n=%d: x[%d] = %v, gonum %v", k.name, n, i, got[i], want[i])
				}
			}
		}
	})
}

// TestTriangularNaive checks the products against plain loops and the
// solves by multiplying back, within relative bounds.
func TestTriangularNaive(t *testing.T) {
	paths(t, func(t *testing.T, _ bool) {
		rng := rand.New(rand.NewPCG(15, 16))
		n := 37
		a := upper(rng, n, n)
		x := randSlice(rng, n)
		y := append([]float64(nil), x...)
		TrmvUpper(n, a, n, y)
		yt := append([]float64(nil), x...)
		TrmvUpperTrans(n, a, n, yt)
		for i := 0; i < n; i++ {
			var s, st float64
			for j := 0; j < n; j++ {
				if j >= i {
					s += a[i*n+j] * x[j]
				}
				if j <= i {
					st += a[j*n+i] * x[j]
				}
			}
			if math.Abs(y[i]-s) > 1e-13*(1+math.Abs(s)) || math.Abs(yt[i]-st) > 1e-13*(1+math.Abs(st)) {
				t.Fatalf("row %d: Rx = %v (want %v), Rᵀx = %v (want %v)", i, y[i], s, yt[i], st)
			}
		}
		// Solving and multiplying back returns x.
		z := append([]float64(nil), x...)
		TrsvUpper(n, a, n, z)
		TrmvUpper(n, a, n, z)
		zt := append([]float64(nil), x...)
		TrsvUpperTrans(n, a, n, zt)
		TrmvUpperTrans(n, a, n, zt)
		for i := range x {
			if math.Abs(z[i]-x[i]) > 1e-12*(1+math.Abs(x[i])) || math.Abs(zt[i]-x[i]) > 1e-12*(1+math.Abs(x[i])) {
				t.Fatalf("entry %d: R·R⁻¹x = %v, Rᵀ·R⁻ᵀx = %v, want %v", i, z[i], zt[i], x[i])
			}
		}
	})
}

// TestColumnKernels checks the AVX2 column kernels against their Go loops
// bit for bit, walking rows up and down.
func TestColumnKernels(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	rng := rand.New(rand.NewPCG(17, 18))
	const lda, rows = 21, 9
	a := randSlice(rng, rows*lda)
	x := randSlice(rng, rows)
	for _, down := range []bool{false, true} {
		acc0 := randSlice(rng, 16)
		var add, sub, wantAdd, wantSub [16]float64
		copy(add[:], acc0)
		copy(sub[:], acc0)
		copy(wantAdd[:], acc0)
		copy(wantSub[:], acc0)
		first, stride, step := 0, lda, 1
		if down {
			first, stride, step = rows-1, -lda, -1
		}
		colAdd16AVX2(rows, &a[first*lda+2], 8*stride, &x[first], 8*step, &add)
		colSub16AVX2(rows, &a[first*lda+2], 8*stride, &x[first], 8*step, &sub)
		for t := 0; t < rows; t++ {
			i := first + t*step
			for j := 0; j < 16; j++ {
				wantAdd[j] += float64(x[i] * a[i*lda+2+j])
				wantSub[j] -= float64(a[i*lda+2+j] * x[i])
			}
		}
		if i, ok := sameBits(add[:], wantAdd[:]); !ok {
			t.Fatalf("colAdd16 down=%v: acc[%d] = %v, Go %v", down, i, add[i], wantAdd[i])
		}
		if i, ok := sameBits(sub[:], wantSub[:]); !ok {
			t.Fatalf("colSub16 down=%v: acc[%d] = %v, Go %v", down, i, sub[i], wantSub[i])
		}
	}
}

func BenchmarkTriangular(b *testing.B) {
	const n = 200
	rng := rand.New(rand.NewPCG(1, 1))
	a := upper(rng, n, n)
	x0 := randSlice(rng, n)
	x := make([]float64, n)
	impl := blas64.Implementation()
	for _, k := range []struct {
		name string
		f    func()
	}{
		{"TrmvUpper/dense", func() { TrmvUpper(n, a, n, x) }},
		{"TrmvUpper/gonum", func() { impl.Dtrmv(blas.Upper, blas.NoTrans, blas.NonUnit, n, a, n, x, 1) }},
		{"TrmvUpperTrans/dense", func() { TrmvUpperTrans(n, a, n, x) }},
		{"TrmvUpperTrans/gonum", func() { impl.Dtrmv(blas.Upper, blas.Trans, blas.NonUnit, n, a, n, x, 1) }},
		{"TrsvUpper/dense", func() { TrsvUpper(n, a, n, x) }},
		{"TrsvUpper/gonum", func() { impl.Dtrsv(blas.Upper, blas.NoTrans, blas.NonUnit, n, a, n, x, 1) }},
		{"TrsvUpperTrans/dense", func() { TrsvUpperTrans(n, a, n, x) }},
		{"TrsvUpperTrans/gonum", func() { impl.Dtrsv(blas.Upper, blas.Trans, blas.NonUnit, n, a, n, x, 1) }},
	} {
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				copy(x, x0) // no growth into infinities or denormals
				k.f()
			}
		})
	}
}

// TestTrsvUpperBatch checks the batched back substitution against
// TrsvUpper on each system bit for bit, for batches of one to nine.
func TestTrsvUpperBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	for _, n := range []int{1, 2, 5, 33} {
		for nb := 1; nb <= 9; nb++ {
			lda := n + 2
			as, xs, want := make([][]float64, nb), make([][]float64, nb), make([][]float64, nb)
			for b := range as {
				as[b] = upper(rng, n, lda)
				xs[b] = randSlice(rng, n)
				want[b] = append([]float64(nil), xs[b]...)
				TrsvUpper(n, as[b], lda, want[b])
			}
			TrsvUpperBatch(n, as, lda, xs)
			for b := range xs {
				if i, ok := sameBits(xs[b], want[b]); !ok {
					t.Fatalf("n=%d batch %d of %d: x[%d] = %v, alone %v", n, b, nb, i, xs[b][i], want[b][i])
				}
			}
		}
	}
}
