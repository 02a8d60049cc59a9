package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestProxEpochKernelPath: the minibatch proximal epoch gives the same
// iterate whether the batch systems are gathered from the cached kernel
// X Xᵀ or built from inner products of the rows (the path of clients too
// large to cache), and the cache holds X Xᵀ.
func TestProxEpochKernelPath(t *testing.T) {
	const n, d, batch, eta = 60, 7, 8, 0.3
	rng := rand.New(rand.NewPCG(3, 4))
	x, y := make([]float64, n*d), make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	cached := NewStats(x, y, n, d)
	plain := cached
	plain.kernel = nil // the fallback path
	k := cached.Kernel()
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var dot float64
			for c := 0; c < d; c++ {
				dot += x[i*d+c] * x[j*d+c]
			}
			if math.Abs(k[i*n+j]-dot) > 1e-12*(1+math.Abs(dot)) {
				t.Fatalf("kernel[%d,%d] = %v, want %v", i, j, k[i*n+j], dot)
			}
		}
	}
	perm := rng.Perm(n)
	u1, u2 := make([]float64, d), make([]float64, d)
	for c := range u1 {
		u1[c] = rng.NormFloat64()
		u2[c] = u1[c]
	}
	ws := &Workspace{dvec: make([]float64, d), nvec: make([]float64, n), kmat: make([]float64, batch*batch)}
	for _, norm := range []BatchNorm{NormLocal, NormBatch} {
		cached.ProxEpoch(u1, eta, perm, batch, norm, ws)
		plain.ProxEpoch(u2, eta, perm, batch, norm, ws)
		for c := range u1 {
			if math.Abs(u1[c]-u2[c]) > 1e-12*(1+math.Abs(u2[c])) {
				t.Fatalf("batch_norm=%v coordinate %d: kernel path %v, inner-product path %v", norm, c, u1[c], u2[c])
			}
		}
	}
}
