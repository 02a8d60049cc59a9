package model

import (
	"github.com/fedscope/fedscope/internal/parallel"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Spectrum is the eigendecomposition X_iᵀX_i/n_i = Q Λ Qᵀ of a client's
// Hessian, with Qᵀ(X_iᵀy_i/n_i) precomputed.
//
// In this basis every local update of the linear model is a scalar map per
// eigen-direction, whatever η and s are (PAPERS.md §1.3, closed form of the
// local map; §1.4):
//
//	s GD steps:  z_k ← (1 − ηλ_k)^s z_k + (1 − (1 − ηλ_k)^s)/λ_k · b̃_k
//	prox step:   z_k ← (z_k + η b̃_k) / (1 + ηλ_k)
//
// so a client's whole round costs two d×d products instead of s, and a
// change of η or s needs no new factorisation.
type Spectrum struct {
	Dim    int
	Q      []float64 // eigenvectors as columns, d×d row-major
	Lambda []float64 // eigenvalues, ascending
	QtB    []float64 // Qᵀ X_iᵀy_i/n_i
}

// newSpectrum decomposes a client's Gram matrix; nil for raw clients.
func newSpectrum(s *Stats) *Spectrum {
	if s.Gram == nil {
		return nil
	}
	d := s.Dim
	var es mat.EigenSym
	if !es.Factorize(mat.NewSymDense(d, append([]float64(nil), s.Gram...)), true) {
		return nil
	}
	var q mat.Dense
	es.VectorsTo(&q)
	sp := &Spectrum{Dim: d, Q: make([]float64, d*d), Lambda: es.Values(nil), QtB: make([]float64, d)}
	for i := 0; i < d; i++ {
		copy(sp.Q[i*d:(i+1)*d], q.RawRowView(i))
	}
	blas64.Gemv(blas.Trans, 1, sp.q(), vec(s.XtY), 0, vec(sp.QtB))
	return sp
}

func (sp *Spectrum) q() blas64.General {
	return blas64.General{Rows: sp.Dim, Cols: sp.Dim, Stride: sp.Dim, Data: sp.Q}
}

// DiagonalMap is a local update in the eigenbasis of one client:
// z_k ← Mult_k z_k + Add_k.
type DiagonalMap struct {
	Mult, Add []float64
}

// GDMap returns the map of s full-batch gradient steps with step η
// (PAPERS.md §1.3): A = I − ηΛ, u ← A^s u + Σ_{τ<s} A^τ η b̃.
func (sp *Spectrum) GDMap(eta float64, s int) DiagonalMap {
	m := DiagonalMap{Mult: make([]float64, sp.Dim), Add: make([]float64, sp.Dim)}
	for k, lam := range sp.Lambda {
		pow, _, geo := GDCoefficients(lam, eta, s)
		m.Mult[k], m.Add[k] = pow, geo*sp.QtB[k]
	}
	return m
}

// ProxMap returns the exact proximal map with parameter η (PAPERS.md §1.4):
// u ← (I + ηΛ)⁻¹ (u + η b̃).
func (sp *Spectrum) ProxMap(eta float64) DiagonalMap {
	m := DiagonalMap{Mult: make([]float64, sp.Dim), Add: make([]float64, sp.Dim)}
	for k, lam := range sp.Lambda {
		mult, _, geo := ProxCoefficients(lam, eta)
		m.Mult[k], m.Add[k] = mult, geo*sp.QtB[k]
	}
	return m
}

// Apply replaces u by Q (Mult ∘ Qᵀu + Add), allocating nothing.
func (sp *Spectrum) Apply(u []float64, m DiagonalMap, ws *Workspace) {
	z := ws.dvec[:sp.Dim]
	blas64.Gemv(blas.Trans, 1, sp.q(), vec(u), 0, vec(z))
	for k := range z {
		z[k] = m.Mult[k]*z[k] + m.Add[k]
	}
	blas64.Gemv(blas.NoTrans, 1, sp.q(), vec(z), 0, vec(u))
}

// Spectra returns the eigendecomposition of every client's Hessian (nil for
// clients without a Gram matrix), computed once on first use, in parallel,
// and shared by every racer and re-run.
func (p *Problem) Spectra() []*Spectrum {
	p.specOnce.Do(func() {
		p.spectra = make([]*Spectrum, len(p.Clients))
		parallel.For(len(p.Clients), func(i int) { p.spectra[i] = newSpectrum(&p.Clients[i]) })
	})
	return p.spectra
}
