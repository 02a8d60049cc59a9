package datasets

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestUnitTo: draws have norm 1 and, averaged, no direction: the mean of
// many draws in d = 3 is near 0 (each coordinate has variance 1/d, so the
// mean of n draws has standard deviation 1/√(dn)).
func TestUnitTo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, d = 20000, 3
	v, mean := make([]float64, d), make([]float64, d)
	for range n {
		UnitTo(v, rng)
		var s float64
		for a, x := range v {
			s += x * x
			mean[a] += x / n
		}
		if math.Abs(s-1) > 1e-14 {
			t.Fatalf("‖v‖² = %v, want 1", s)
		}
	}
	for a, m := range mean {
		if math.Abs(m) > 5/math.Sqrt(d*n) {
			t.Errorf("mean coordinate %d = %v: more than 5 standard deviations from 0", a, m)
		}
	}
}
