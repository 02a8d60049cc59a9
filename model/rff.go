package model

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// RFF is the random Fourier feature map of the FedNewton experiments
// (PAPERS.md §4.4, paper 003):
//
//	φ(x) = (1/√M) cos(Ωᵀx + b),  Ω ∈ R^{d×M} with i.i.d. N(0, 1/σ²) entries, b_k ~ U[0, 2π],
//
// with σ² the kernel bandwidth. Note the 1/√M scaling of the paper (not the
// usual √(2/M)): E[φ(x)ᵀφ(y)] = ½·exp(−‖x − y‖²/(2σ²)), half the Gaussian
// kernel. One map, drawn once from the seed, is shared by every client,
// the server and the test set.
type RFF struct {
	In, Out   int
	Bandwidth float64   // σ²
	Omega     []float64 // Out×In row-major: row k is ω_k
	B         []float64 // phases b_k
}

// rffStream is the random stream of the feature map, apart from the data
// streams of package datasets.
const rffStream = 1 << 42

// NewRFF draws a feature map from R^in to R^out with bandwidth σ² > 0.
func NewRFF(in, out int, bandwidth float64, seed uint64) *RFF {
	rng := rand.New(rand.NewPCG(seed, rffStream))
	f := &RFF{In: in, Out: out, Bandwidth: bandwidth, Omega: make([]float64, in*out), B: make([]float64, out)}
	sd := 1 / math.Sqrt(bandwidth)
	for k := range f.Omega {
		f.Omega[k] = sd * rng.NormFloat64()
	}
	for k := range f.B {
		f.B[k] = 2 * math.Pi * rng.Float64()
	}
	return f
}

// MapTo sets dst (n×Out, row-major) to the features of the n rows of x
// (n×In, row-major): one matrix product, then the cosines.
func (f *RFF) MapTo(dst, x []float64, n int) {
	if n == 0 {
		return
	}
	blas64.Gemm(blas.NoTrans, blas.Trans, 1,
		blas64.General{Rows: n, Cols: f.In, Stride: f.In, Data: x},
		blas64.General{Rows: f.Out, Cols: f.In, Stride: f.In, Data: f.Omega},
		0, blas64.General{Rows: n, Cols: f.Out, Stride: f.Out, Data: dst})
	scale := 1 / math.Sqrt(float64(f.Out))
	for i := 0; i < n; i++ {
		row := dst[i*f.Out : (i+1)*f.Out]
		for k, v := range row {
			row[k] = scale * math.Cos(v+f.B[k])
		}
	}
}
