package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLeanValue: the one-softplus form of the logistic loss,
// softplus(z) − y·z, is the two-softplus form y·softplus(−z) +
// (1−y)·softplus(z) (softplus(−z) = softplus(z) − z), so LeanValue equals
// Value to rounding at any θ, including large |θᵀx|.
func TestLeanValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const d = 4
	rows := func(n int) []float64 {
		out := make([]float64, n*(d+1))
		for k := range out {
			out[k] = rng.Float64()
		}
		return out
	}
	f := &Federated{Loss: Logistic{Dim: d, Mu: 0.3}, Q: d + 1, Server: rows(7), Clients: [][]float64{rows(5), rows(9)}, N: 21}
	for _, scale := range []float64{0, 1, 30, 300} {
		theta := make([]float64, d)
		for k := range theta {
			theta[k] = scale * rng.NormFloat64()
		}
		if a, b := f.Value(theta), f.LeanValue(theta); math.Abs(a-b) > 1e-12*math.Max(1, math.Abs(a)) {
			t.Errorf("scale %v: Value %v, LeanValue %v", scale, a, b)
		}
	}
}
