package datasets

import (
	"fmt"
	"math"
)

// ChebyshevU5 holds the monomial coefficients of the Chebyshev polynomial of
// the second kind of degree 5, U5(x) = 32x⁵ − 32x³ + 6x, in the basis
// [1, x, …, x⁵]: the target of E000-5 (docs/papers.md §1.9).
var ChebyshevU5 = []float64{0, 6, 0, -32, 0, 32}

// Polynomial describes the non-linear function-fitting federation of E000-5
// (docs/papers.md §1.9, paper 000, and §8): M clients, client i (0-based) only
// sees the disjoint interval [−1 + 2i/M, −1 + 2(i+1)/M), its n covariates
// are the cell midpoints x_ij = a_i + (j + ½)(2/M)/n of a uniform grid on it,
// the features are the monomials φ(x) = [1, x, …, x^Degree], and
// y = U5(x) + ξ with ξ ~ N(0, σ²).
type Polynomial struct {
	Clients int     // M
	Samples int     // n_i, the same for every client
	Degree  int     // degree of the monomial features, ≥ 5 so U5 is representable; d = Degree+1
	Noise   float64 // σ
}

// MaxDegree bounds the feature degree: beyond it the monomial Gram matrix
// on [−1, 1] is too ill-conditioned for double precision.
const MaxDegree = 11

// Validate reports the first inconsistency of the configuration.
func (c Polynomial) Validate() error {
	switch {
	case c.Clients < 1:
		return fmt.Errorf("clients=%d: need at least 1 client", c.Clients)
	case c.Samples < 1:
		return fmt.Errorf("samples=%d: need at least 1 sample per client", c.Samples)
	case c.Degree < len(ChebyshevU5)-1 || c.Degree > MaxDegree:
		return fmt.Errorf("dim=%d: the polynomial features need dim in %d..%d (degree %d..%d, so that U5 is representable)",
			c.Degree+1, len(ChebyshevU5), MaxDegree+1, len(ChebyshevU5)-1, MaxDegree)
	case !(c.Noise >= 0) || math.IsInf(c.Noise, 0):
		return fmt.Errorf("noise=%v: must be a finite number ≥ 0", c.Noise)
	}
	if n := c.Clients * c.Samples; float64(n)*float64(c.Degree+1) > MaxEntries {
		return fmt.Errorf("clients × samples × dim = %d × %d: over the limit of %d numbers", n, c.Degree+1, MaxEntries)
	}
	return nil
}

// Generate draws the federation for the given seed. The covariates are a
// fixed grid; only the label noise is random, client i drawing from its own
// stream (seed, i+1).
func (c Polynomial) Generate(seed uint64) (*Federation, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	d := c.Degree + 1
	truth := make([]float64, d)
	copy(truth, ChebyshevU5)
	fed := &Federation{Dim: d, Clients: make([]Client, c.Clients), Truth: truth, Noise: c.Noise}
	width := 2 / float64(c.Clients)
	for i := range fed.Clients {
		rng := stream(seed, uint64(i)+1)
		cl := &fed.Clients[i]
		cl.N, cl.Truth = c.Samples, append([]float64(nil), truth...)
		cl.X, cl.Y = make([]float64, c.Samples*d), make([]float64, c.Samples)
		lo := -1 + width*float64(i)
		for j := 0; j < c.Samples; j++ {
			x := lo + (float64(j)+0.5)*width/float64(c.Samples)
			row := cl.X[j*d : (j+1)*d]
			p := 1.0
			for a := range row {
				row[a] = p
				p *= x
			}
			cl.Y[j] = PolyEval(ChebyshevU5, x) + c.Noise*rng.NormFloat64()
		}
	}
	return fed, nil
}

// PolyEval returns Σ_a coef_a x^a by Horner's rule.
func PolyEval(coef []float64, x float64) float64 {
	var s float64
	for a := len(coef) - 1; a >= 0; a-- {
		s = s*x + coef[a]
	}
	return s
}
