package model

// IntegratedSquare returns ∫_{−1}^{1} (Σ_a δ_a x^a)² dx, the integrated
// squared error of a polynomial fit whose monomial coefficients differ from
// the truth's by δ (docs/papers.md §6, "integrated MSE", and §8, E000-5):
//
//	∫_{−1}^{1} x^{a+b} dx = 2/(a+b+1) for a+b even, 0 for a+b odd,
//
// so the integral is the exact quadratic form Σ_{a,b} δ_a δ_b · 2/(a+b+1)
// over even a+b; it is twice the mean of the squared error under U[−1, 1].
func IntegratedSquare(delta []float64) float64 {
	var s float64
	for a, da := range delta {
		for b := a % 2; b < len(delta); b += 2 {
			s += da * delta[b] * 2 / float64(a+b+1)
		}
	}
	return s
}
