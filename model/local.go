package model

import (
	"fmt"

	"github.com/fedscope/fedscope/internal/dense"
	"github.com/fedscope/fedscope/internal/parallel"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/gonum"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// lapackImpl is the pure-Go LAPACK, used directly for the unblocked Cholesky
// factorisation of the minibatch proximal step (see ProxEpoch).
var lapackImpl gonum.Implementation

// Workspace holds the scratch memory of the local solvers so that the local
// steps allocate nothing. One workspace serves one goroutine.
type Workspace struct {
	dvec []float64 // d
	nvec []float64 // max n_i (or batch size)
	kmat []float64 // batch×batch, for the minibatch proximal step
}

// NewWorkspace sizes a workspace for the problem and batch size (0 = full batch).
func NewWorkspace(p *Problem, batch int) *Workspace {
	maxN := 0
	for i := range p.Clients {
		maxN = max(maxN, p.Clients[i].N)
	}
	return &Workspace{dvec: make([]float64, p.Dim), nvec: make([]float64, max(maxN, batch)),
		kmat: make([]float64, batch*batch)}
}

// GDSteps runs `steps` full-batch gradient steps on l_i in place:
// u ← u − η ∇l_i(u) = u − (η/n_i) X_iᵀ(X_i u − y_i) (docs/papers.md §1.3, FedAvg
// local update, paper 000).
func (s *Stats) GDSteps(u []float64, eta float64, steps int, ws *Workspace) {
	g := ws.dvec[:s.Dim]
	for t := 0; t < steps; t++ {
		s.GradientTo(g, u, ws.nvec)
		blas64.Axpy(-eta, vec(g), vec(u))
	}
}

// BatchNorm is how a minibatch step weighs its batch (docs/papers.md §1.5,
// CORRECTED): the factor c in u ← u − η c X_bᵀ(X_b u − y_b). Its zero value
// is the paper's reading.
type BatchNorm int

const (
	// NormLocal is c = 1/n_i: each step descends the batch's share
	// 1/(2n_i)‖y_b − X_b u‖² of the local loss 1/(2n_i)‖y_i − X_i u‖², so one
	// pass over the batches sums to one full-batch step (incremental
	// gradient). It reproduces paper 000's Figs 2–3 and is the default.
	NormLocal BatchNorm = iota
	// NormBatch is c = 1/|b|, the per-batch mean 1/(2|b|)‖y_b − X_b u‖²: one
	// pass is about n_i/B full-batch steps (the convention docs/papers.md §1.5
	// recommended before its correction; kept as an option).
	NormBatch
)

// String names the convention as the batch_norm knob spells it.
func (n BatchNorm) String() string {
	if n == NormBatch {
		return "batch"
	}
	return "local"
}

// ParseBatchNorm reads "local" (1/n_i) or "batch" (1/B).
func ParseBatchNorm(s string) (BatchNorm, error) {
	switch s {
	case "local":
		return NormLocal, nil
	case "batch":
		return NormBatch, nil
	}
	return NormLocal, fmt.Errorf("must be local (1/n_i, the batch's share of the local loss) or batch (1/B, the per-batch mean)")
}

// Scale returns the factor c of a batch of b rows of a client with n rows:
// 1/n (NormLocal) or 1/b (NormBatch).
func (n BatchNorm) Scale(clientRows, b int) float64 {
	if n == NormBatch {
		return 1 / float64(b)
	}
	return 1 / float64(clientRows)
}

// MinibatchEpoch runs one pass of minibatch gradient steps in place, over the
// rows in the order of perm split into consecutive batches of size batch (the
// last one shorter when batch does not divide n_i):
// u ← u − η c X_bᵀ(X_b u − y_b), with c = 1/n_i (NormLocal: the gradient of
// the batch's share of the local loss, so a pass is an incremental-gradient
// version of one full step) or c = 1/|b| (NormBatch: the per-batch mean)
// (docs/papers.md §1.5 CORRECTED and §8, E000-2).
func (s *Stats) MinibatchEpoch(u []float64, eta float64, perm []int, batch int, norm BatchNorm, ws *Workspace) {
	uv := vec(u)
	r := ws.nvec
	for lo := 0; lo < len(perm); lo += batch {
		idx := perm[lo:min(lo+batch, len(perm))]
		for j, row := range idx {
			r[j] = blas64.Dot(vec(s.Row(row)), uv) - s.Y[row]
		}
		f := -eta * norm.Scale(s.N, len(idx))
		for j, row := range idx {
			blas64.Axpy(f*r[j], vec(s.Row(row)), uv)
		}
	}
}

// ProxEpoch runs one pass of incremental proximal steps in place, one per
// batch, each centred at the current local iterate (docs/papers.md §1.5 and §8),
// with the batch weight c of norm (1/n_i by default, 1/|b| with NormBatch):
// u ← argmin_v (c/2)‖y_b − X_b v‖² + ‖v − u‖²/(2η)
//
//	= (I + η c X_bᵀX_b)⁻¹ (u + η c X_bᵀ y_b)
//	= u − η c X_bᵀ (I_B + η c X_b X_bᵀ)⁻¹ (X_b u − y_b),
//
// the last (Woodbury) form needing only a B×B Cholesky factorisation.
func (s *Stats) ProxEpoch(u []float64, eta float64, perm []int, batch int, norm BatchNorm, ws *Workspace) {
	uv := vec(u)
	kern := s.Kernel() // X Xᵀ once per client, when it fits; else inner products per batch
	for lo := 0; lo < len(perm); lo += batch {
		idx := perm[lo:min(lo+batch, len(perm))]
		b := len(idx)
		c := eta * norm.Scale(s.N, b)
		k := ws.kmat[:b*b]
		r := ws.nvec[:b]
		for j, rj := range idx {
			xj := vec(s.Row(rj))
			r[j] = blas64.Dot(xj, uv) - s.Y[rj]
			if kern != nil {
				row := kern[rj*s.N : (rj+1)*s.N]
				k[j*b+j] = 1 + c*row[rj]
				for l := j + 1; l < b; l++ {
					k[j*b+l] = c * row[idx[l]]
				}
				continue
			}
			k[j*b+j] = 1 + c*blas64.Dot(xj, xj)
			for l := j + 1; l < b; l++ {
				k[j*b+l] = c * blas64.Dot(xj, vec(s.Row(idx[l])))
			}
		}
		// I + c X_b X_bᵀ is positive definite for c > 0, so the factorisation cannot
		// fail. It calls the unblocked Dpotf2 rather than lapack64.Potrf: for
		// B > 320 the blocked Dpotrf (block size 64) hands trailing updates of
		// four or more blocks to Dgemm, which then goes parallel and allocates
		// goroutines and channels on every batch, breaking the allocation-free
		// local step (for B ≤ 64 Dpotrf calls Dpotf2 itself, so results are
		// unchanged there).
		lapackImpl.Dpotf2(blas.Upper, b, k, b)
		t := blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: b, Stride: b, Data: k}
		lapack64.Potrs(t, blas64.General{Rows: b, Cols: 1, Stride: 1, Data: r})
		for j, rj := range idx {
			blas64.Axpy(-c*r[j], vec(s.Row(rj)), uv)
		}
	}
}

// ProxFactor is the factorised exact proximal map of one client for one η
// (docs/papers.md §1.4, FedProx, paper 000):
// prox(θ) = argmin_u l_i(u) + ‖u − θ‖²/(2η) = (I + ηX_iᵀX_i/n_i)⁻¹ (θ + η X_iᵀy_i/n_i).
type ProxFactor struct {
	eta  float64
	chol blas64.Triangular // Cholesky factor Uᵀ U of I_d + ηG (n ≥ d) or I_n + (η/n) X Xᵀ (n < d)
	s    *Stats
}

// NewProxFactor factorises the proximal system of a client.
func NewProxFactor(s *Stats, eta float64) ProxFactor {
	var m int
	var a []float64
	if s.Gram != nil {
		m = s.Dim
		a = make([]float64, m*m)
		for k, g := range s.Gram {
			a[k] = eta * g
		}
	} else {
		m = s.N
		a = make([]float64, m*m)
		c := eta / float64(s.N)
		for j := 0; j < m; j++ {
			for l := j; l < m; l++ {
				a[j*m+l] = c * blas64.Dot(vec(s.Row(j)), vec(s.Row(l)))
			}
		}
	}
	for j := 0; j < m; j++ {
		a[j*m+j]++
	}
	t, _ := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: a})
	return ProxFactor{eta: eta, chol: t, s: s}
}

// Apply replaces u by the proximal point of the client's loss centred at u.
func (f *ProxFactor) Apply(u []float64, ws *Workspace) {
	s := f.s
	if s.Gram != nil {
		blas64.Axpy(f.eta, vec(s.XtY), vec(u))
		dense.TrsvUpperTrans(f.chol.N, f.chol.Data, f.chol.Stride, u)
		dense.TrsvUpper(f.chol.N, f.chol.Data, f.chol.Stride, u)
		return
	}
	// Woodbury form: u − (η/n) Xᵀ (I + (η/n) X Xᵀ)⁻¹ (X u − y).
	xm := s.design()
	r := ws.nvec[:s.N]
	copy(r, s.Y)
	gemv(blas.NoTrans, 1, xm, u, -1, r)
	dense.TrsvUpperTrans(f.chol.N, f.chol.Data, f.chol.Stride, r)
	dense.TrsvUpper(f.chol.N, f.chol.Data, f.chol.Stride, r)
	gemv(blas.Trans, -f.eta/float64(s.N), xm, r, 1, u)
}

// ProxFactors returns the factorised proximal maps of all clients for η,
// computed once per η and shared by every racer and re-run.
func (p *Problem) ProxFactors(eta float64) []ProxFactor {
	p.proxMu.Lock()
	defer p.proxMu.Unlock()
	if fs, ok := p.prox[eta]; ok {
		return fs
	}
	fs := make([]ProxFactor, len(p.Clients))
	parallel.For(len(fs), func(i int) { fs[i] = NewProxFactor(&p.Clients[i], eta) })
	if len(p.prox) >= 8 { // a handful of step sizes is all a session visits
		clear(p.prox)
	}
	p.prox[eta] = fs
	return fs
}
