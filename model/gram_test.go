package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedscope/fedscope/internal/dense"
)

// TestSymRankTo checks the Gram kernel against plain dot products, for
// sizes that exercise every remainder of its register blocks, and against
// a serial reference that sums every entry in the order the kernel
// promises — stripe by stripe of dense.Stripe columns, index by index within
// a stripe — bit for bit, on sizes of several tasks and stripes: that
// order, the same whichever task computes an entry, is what makes the
// result independent of the number of CPUs (the test runs on however many
// there are, without changing GOMAXPROCS).
func TestSymRankTo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, sz := range [][2]int{{1, 1}, {2, 3}, {5, 7}, {67, 300}, {130, 513}, {131, 64}, {3 * 64, 2*dense.Stripe + 1}} {
		r, n := sz[0], sz[1]
		a := make([]float64, r*n)
		for k := range a {
			a[k] = rng.NormFloat64()
		}
		c := make([]float64, r*r)
		for k := range c {
			c[k] = 1 // beta = 0.5 halves the upper triangle; the lower stays 1
		}
		ref := serialSymRank(c, a, r, n, 2, 0.5)
		symRankTo(c, a, r, n, 2, 0.5)
		for k := 0; k < r; k++ {
			for l := 0; l < r; l++ {
				want := 1.0
				if l >= k {
					var dot float64
					for i := 0; i < n; i++ {
						dot += a[k*n+i] * a[l*n+i]
					}
					want = 2*dot + 0.5
				}
				got := c[k*r+l]
				if math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
					t.Fatalf("%d×%d: c[%d,%d] = %v, want %v", r, n, k, l, got, want)
				}
				if math.Float64bits(got) != math.Float64bits(ref[k*r+l]) {
					t.Fatalf("%d×%d: c[%d,%d] = %v, the serial sum in stripe order is %v", r, n, k, l, got, ref[k*r+l])
				}
			}
		}
	}
}

// serialSymRank is symRankTo written as one loop per entry: c's upper
// triangle scaled by beta, then alpha times each stripe's dot product
// added stripe by stripe; it returns a new matrix.
func serialSymRank(c, a []float64, r, n int, alpha, beta float64) []float64 {
	out := append([]float64(nil), c...)
	for k := 0; k < r; k++ {
		for l := k; l < r; l++ {
			v := beta * out[k*r+l]
			if beta == 0 {
				v = 0
			}
			for lo := 0; lo < n; lo += dense.Stripe {
				var s float64
				for i := lo; i < min(lo+dense.Stripe, n); i++ {
					s += a[k*n+i] * a[l*n+i]
				}
				v += alpha * s
			}
			out[k*r+l] = v
		}
	}
	return out
}
