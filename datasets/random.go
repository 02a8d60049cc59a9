package datasets

import (
	"math"
	"math/rand/v2"
)

// stream returns the random stream of one purpose. Stream 0 is the shared
// truth; stream i+1 is client i.
func stream(seed uint64, id uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, id))
}

// GaussianTo fills v with independent standard normal draws, drawing again
// in the measure-zero case of the zero vector, and returns ‖v‖² > 0. The
// direction v/‖v‖ is uniform on the unit sphere: the generators' truths and
// perturbations and the algorithms' random starts all draw it here.
func GaussianTo(v []float64, rng *rand.Rand) float64 {
	for {
		var s float64
		for a := range v {
			v[a] = rng.NormFloat64()
			s += v[a] * v[a]
		}
		if s > 0 {
			return s
		}
	}
}

// UnitTo fills v with a draw from the uniform distribution on the unit
// sphere.
func UnitTo(v []float64, rng *rand.Rand) {
	f := 1 / math.Sqrt(GaussianTo(v, rng))
	for a := range v {
		v[a] *= f
	}
}
