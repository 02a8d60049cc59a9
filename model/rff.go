package model

import (
	"math"
	"math/rand/v2"
	"sync"

	"github.com/fedscope/fedscope/internal/dense"
)

// RFF is the random Fourier feature map of the FedNewton experiments
// (docs/papers.md §4.4, paper 003):
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

	tOnce  sync.Once
	omegaT []float64 // Ωᵀ, In×Out, for MapTo's products (built on first use)
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
	f.tOnce.Do(func() {
		f.omegaT = make([]float64, f.In*f.Out)
		transposeTo(f.omegaT, f.Omega, f.Out, f.In)
	})
	// gonum's Dgemm(NoTrans, Trans) of x and Ω, bit for bit.
	dense.GemmNT(n, f.Out, f.In, x, f.In, f.omegaT, f.Out, dst, f.Out)
	scale := 1 / math.Sqrt(float64(f.Out))
	for i := 0; i < n; i++ {
		row := dst[i*f.Out : (i+1)*f.Out]
		done := dense.CosScale(row, f.B, scale, &cosConsts)
		for k := done; k < len(row); k++ {
			row[k] = scale * cosine(row[k]+f.B[k])
		}
	}
}

// cosConsts are cosine's Taylor coefficients and reduction constants in
// the layout of dense.CosScale, which vectorises the same operations.
var cosConsts = func() (c [20]float64) {
	copy(c[:16], cosTaylor[:])
	c[16], c[17], c[18], c[19] = invTwoPi, roundMagic, twoPiHi, twoPiLo
	return c
}()

// Constants of cosine: 2π split so that k·twoPiHi is exact for |k| < 2^20
// (Cody–Waite reduction), rounding by the 1.5·2⁵² trick, and the Taylor
// coefficients (−1)^j/(2j)! of cos up to t³⁰.
const (
	twoPiHi    = 0x1.921fb544p+2       // 2π cut to 33 significant bits
	twoPiLo    = 2.430840202602477e-10 // 2π − twoPiHi
	invTwoPi   = 1 / (2 * math.Pi)
	roundMagic = 0x1.8p52
)

var cosTaylor = func() (c [16]float64) {
	f := 1.0
	for j := range c {
		if j > 0 {
			f *= float64(2*j-1) * float64(2*j)
		}
		c[j] = 1 / f
		if j%2 == 1 {
			c[j] = -c[j]
		}
	}
	return c
}()

// cosine is cos(x) to within 1e-15 for the phases of random features
// (|x| below 2²⁰; larger ones fall back to math.Cos), four times faster
// than math.Cos, which guards against arguments up to 2⁶³ and dominated the
// feature map: x is reduced to r ∈ [−π, π] by subtracting k·2π in two
// parts, and cos r is its Taylor series to r³⁰ (remainder below 3e-16 on
// [−π, π]), evaluated by Horner's rule without a branch.
func cosine(x float64) float64 {
	if !(math.Abs(x) < 1<<20) {
		return math.Cos(x)
	}
	k := (x*invTwoPi + roundMagic) - roundMagic
	r := (x - k*twoPiHi) - k*twoPiLo
	z := r * r
	c := &cosTaylor
	p := c[15]
	p = p*z + c[14]
	p = p*z + c[13]
	p = p*z + c[12]
	p = p*z + c[11]
	p = p*z + c[10]
	p = p*z + c[9]
	p = p*z + c[8]
	p = p*z + c[7]
	p = p*z + c[6]
	p = p*z + c[5]
	p = p*z + c[4]
	p = p*z + c[3]
	p = p*z + c[2]
	p = p*z + c[1]
	return p*z + c[0]
}
