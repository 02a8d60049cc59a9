package model

import (
	"math"
	"math/bits"
	"sync"

	"github.com/fedscope/fedscope/internal/dense"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// Local is one client's statistics in the form the affine round maps of
// full-batch FedAvg and FedProx need (docs/papers.md §1.3, §1.4, §1.6), on the
// coordinates E its rows use and in the smaller of its two spaces:
//
//	Gram form   (n_i ≥ r):  G = X_EᵀX_E/n_i, r×r
//	kernel form (n_i < r):  the thin eigendecomposition of G through the
//	                        n_i×n_i kernel X_E X_Eᵀ/n_i (SubspaceSpectrum)
//
// with r = |E| (= d without a covariate subspace). A client with 50 rows in
// d = 100 thus costs 50·100 numbers, not 100², and a client on r of the d
// coordinates costs r², not d².
//
// In Gram form the local map of s gradient steps is assembled by repeated
// squaring (GDChain) and the proximal map by a Cholesky factorisation
// (ProxTerm), so no eigendecomposition is needed; in kernel form the n_i×n_i
// eigendecomposition is cheap and serves every η and s.
type Local struct {
	Coords []int // the support E, ascending; nil means all d coordinates
	R, N   int   // r = |E| and n_i
	// Gram is X_EᵀX_E/n_i (r×r row-major, both triangles) in Gram form, nil
	// in kernel form.
	Gram []float64
	B    []float64 // X_Eᵀy_i/n_i
	// Spec is the thin eigendecomposition in kernel form, nil in Gram form.
	Spec *SubspaceSpectrum
}

// LocalWork is scratch memory for building Locals; one serves one
// goroutine, and reusing it across clients and trials allocates nothing
// once it has grown to the largest client.
type LocalWork struct {
	xe, xt, kern, mu []float64
	eig              dense.EigenWork
}

func grow(buf []float64, n int) []float64 {
	if cap(buf) < n {
		return make([]float64, n)
	}
	return buf[:n]
}

// Set fills l with the statistics of a client with n rows x and responses
// y. x is either n×d row-major with rows that are zero outside support (nil:
// all d coordinates), or, when compact, n×|support| holding only the support
// columns (datasets.Linear.GenerateCompact). l's slices are reused when they
// are large enough; ws may be nil.
func (l *Local) Set(x, y []float64, n, d int, support []int, compact bool, ws *LocalWork) {
	if ws == nil {
		ws = &LocalWork{}
	}
	r := d
	xe := x
	if support != nil {
		r = len(support)
		if !compact {
			ws.xe = grow(ws.xe, n*r)
			gatherTo(ws.xe, x, n, d, support)
			xe = ws.xe
		}
	}
	l.Coords, l.R, l.N = support, r, n
	l.B = grow(l.B, r)
	clear(l.B)
	if n == 0 || r == 0 {
		l.Gram, l.Spec = l.Gram[:0], nil
		return
	}
	xm := blas64.General{Rows: n, Cols: r, Stride: r, Data: xe}
	inv := 1 / float64(n)
	gemv(blas.Trans, inv, xm, y, 0, l.B)
	if n >= r {
		l.Gram = grow(l.Gram, r*r)
		ws.xt = gramUpper(l.Gram, xe, n, r, inv, 0, ws.xt)
		mirrorUpper(l.Gram, r)
		l.Spec = nil
		return
	}
	l.Gram = l.Gram[:0]
	if l.Spec == nil {
		l.Spec = &SubspaceSpectrum{}
	}
	l.Spec.setKernel(xe, l.B, n, r, support, ws)
}

// IsGram reports whether l is in Gram form.
func (l *Local) IsGram() bool { return l.Spec == nil && len(l.Gram) > 0 }

// setKernel decomposes G = X_EᵀX_E/n through K = X_E X_Eᵀ/n (n < r): an
// eigenvector u of K with eigenvalue μ > 0 gives the unit eigenvector
// X_Eᵀu/√(nμ) of G. Eigenvalues below 1e-13 of the largest belong to the
// null space of X_E and are dropped. b is X_Eᵀy/n.
func (sp *SubspaceSpectrum) setKernel(xe, b []float64, n, r int, support []int, ws *LocalWork) {
	sp.Coords, sp.R = support, r
	ws.kern = grow(ws.kern, n*n)
	ws.mu = grow(ws.mu, n)
	dense.SyrkUpper(n, r, 1/float64(n), xe, r, 0, ws.kern, n)
	if !symEigen(ws.kern, ws.mu, n, ws) {
		panic("model: eigendecomposition of a client kernel failed")
	}
	mu := ws.mu
	tol := 1e-13 * math.Max(mu[n-1], 0)
	first := 0
	for first < n && !(mu[first] > tol) {
		first++
	}
	k := n - first
	sp.K = k
	sp.Lambda = append(sp.Lambda[:0], mu[first:]...)
	sp.Q = grow(sp.Q, r*k)
	sp.QtB = grow(sp.QtB, k)
	if k == 0 {
		return
	}
	// Q = X_Eᵀ U_kept diag(1/√(nμ)).
	dense.GemmTN(r, k, n, xe, r, ws.kern[first:], n, sp.Q, k)
	scale := ws.mu[:k] // μ is copied into Lambda; reuse its storage
	for j, lam := range sp.Lambda {
		scale[j] = math.Sqrt(float64(n) * lam)
	}
	for a := 0; a < r; a++ {
		row := sp.Q[a*k : (a+1)*k]
		for j := range row {
			row[j] /= scale[j]
		}
	}
	gemv(blas.Trans, 1, sp.q(), b, 0, sp.QtB)
}

// symEigen replaces the upper triangle of the symmetric n×n matrix a by its
// eigenvectors (as columns, row-major) and sets w to the eigenvalues in
// ascending order: gonum's Dsyev with its optimal blocking (as gonum's
// mat.EigenSym), bit for bit, with the eigenvector rotations vectorised
// (dense.SymEigen).
func symEigen(a, w []float64, n int, ws *LocalWork) bool {
	return dense.SymEigen(n, a, n, w, &ws.eig)
}

// gatherTo copies the support columns of the n×d row-major x into dst (n×r).
func gatherTo(dst, x []float64, n, d int, support []int) {
	r := len(support)
	for j := 0; j < n; j++ {
		row := x[j*d : (j+1)*d]
		out := dst[j*r : (j+1)*r]
		for a, k := range support {
			out[a] = row[k]
		}
	}
}

// A local map is written u ↦ u − D u + v: D = I − T and v = t for the
// affine local update u ↦ T u + t of docs/papers.md §1.3–§1.4. Composing two
// commuting maps (first a, then b) gives
//
//	D_{a+b} = D_a + D_b − D_b D_a,   v_{a+b} = v_a + v_b − D_b v_a,
//
// and one gradient step of size η on a Gram-form client is D_1 = ηG,
// v_1 = ηb. Working with D rather than T = I − D keeps D accurate to
// relative precision when ηλ is tiny (no 1 − (1 − ηλ)^s cancellation).

// GDChain holds one Gram-form client's local maps of 2^j full-batch
// gradient steps with step size Eta, j = 0, 1, …: D[j] (r×r) and V[j] (r).
// Any s steps are then the composition of the levels of the binary digits
// of s (Combine), so a chain serves every s below 2^len(D) and a change of
// s costs popcount(s) − 1 products per client.
type GDChain struct {
	Eta  float64
	D, V [][]float64
}

// Reset empties the chain, keeping its memory for the next client.
func (c *GDChain) Reset() {
	c.Eta = math.NaN()
	c.D, c.V = c.D[:0], c.V[:0]
}

// Levels returns the number of levels s steps need: the bit length of s.
func Levels(s int) int { return bits.Len(uint(s)) }

// Extend computes the chain of l (Gram form) for step size eta up to
// `levels` levels, keeping the levels it has when eta is unchanged. Level
// j+1 doubles level j: D ← 2D − D², v ← 2v − D v, D² by a symmetric rank-r
// update.
func (c *GDChain) Extend(l *Local, eta float64, levels int) {
	r := l.R
	if c.Eta != eta || len(c.D) > 0 && len(c.D[0]) != r*r {
		c.Eta = eta
		c.D, c.V = c.D[:0], c.V[:0]
	}
	for j := len(c.D); j < levels; j++ {
		var d, v []float64
		if j < cap(c.D) {
			d, v = c.D[:j+1][j], c.V[:j+1][j]
		}
		d, v = grow(d, r*r), grow(v, r)
		if j == 0 {
			for k, g := range l.Gram {
				d[k] = eta * g
			}
			for k, b := range l.B {
				v[k] = eta * b
			}
		} else {
			pd, pv := c.D[j-1], c.V[j-1]
			dense.SyrkUpper(r, r, 1, pd, r, 0, d, r)
			mirrorUpper(d, r)
			for k, p := range pd {
				d[k] = 2*p - d[k]
			}
			gemv(blas.NoTrans, -1, general(r, r, pd), pv, 0, v)
			for k, p := range pv {
				v[k] += 2 * p
			}
		}
		c.D, c.V = append(c.D, d), append(c.V, v)
	}
}

// Combine sets dst (r×r) and v (r) to the local map of s gradient steps,
// composing the chain's levels of the binary digits of s from the lowest.
// work must hold r² numbers. The chain must have Levels(s) levels.
func (c *GDChain) Combine(s, r int, dst, v, work []float64) {
	first := true
	for j := 0; s>>j != 0; j++ {
		if s>>j&1 == 0 {
			continue
		}
		if first {
			copy(dst, c.D[j])
			copy(v, c.V[j])
			first = false
			continue
		}
		dj, vj := c.D[j], c.V[j]
		// v ← v + v_j − D_j v (needs the old v), then D ← D + D_j − D D_j.
		tmp := work[:r]
		gemv(blas.NoTrans, 1, general(r, r, dj), v, 0, tmp)
		for k := range v {
			v[k] += vj[k] - tmp[k]
		}
		prod := work[:r*r]
		symProduct(prod, dst, dj, r)
		for k := range dst {
			dst[k] += dj[k] - prod[k]
		}
	}
}

// symProduct sets c = a·b for symmetric r×r matrices a and b that commute
// (powers of one local map), whose product is therefore symmetric: only the
// blocks on and above the diagonal of a 2×2 blocking are multiplied (¾ of
// the work of a general product) and mirrored below it.
func symProduct(c, a, b []float64, r int) {
	if r < 64 {
		dense.GemmNN(r, r, r, a, r, b, r, c, r) // gonum's Dgemm(NoTrans, NoTrans), bit for bit
		return
	}
	h := r / 2
	for _, blk := range [3][2]int{{0, 0}, {0, 1}, {1, 1}} {
		i0, rows := 0, h
		if blk[0] == 1 {
			i0, rows = h, r-h
		}
		j0, cols := 0, h
		if blk[1] == 1 {
			j0, cols = h, r-h
		}
		dense.GemmNN(rows, cols, r, a[i0*r:], r, b[j0:], r, c[i0*r+j0:], r)
	}
	for i := h; i < r; i++ {
		for j := 0; j < h; j++ {
			c[i*r+j] = c[j*r+i]
		}
	}
}

// ProxTerm sets dst (r×r) and v (r) to the exact proximal map of a
// Gram-form client with parameter eta (docs/papers.md §1.4):
// T = (I + ηG)⁻¹, t = η (I + ηG)⁻¹ b, written D = I − T, v = t. One Cholesky
// factorisation serves both; work must hold r² numbers.
func (l *Local) ProxTerm(eta float64, dst, v, work []float64) {
	r := l.R
	a := work[:r*r]
	for k, g := range l.Gram {
		a[k] = eta * g
	}
	for k := 0; k < r; k++ {
		a[k*r+k]++
	}
	// I + ηG is positive definite for η > 0, so the factorisation cannot fail.
	t, _ := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: r, Stride: r, Data: a})
	for k, b := range l.B {
		v[k] = eta * b
	}
	// gonum's Dpotrs and Dpotri, bit for bit, without its BLAS calls on
	// rows of one number.
	dense.PotrsUpper1(r, t.Data, r, v)
	dense.PotriUpper(r, t.Data, r)
	for i := 0; i < r; i++ {
		dst[i*r+i] = 1 - a[i*r+i]
		for j := i + 1; j < r; j++ {
			dst[i*r+j], dst[j*r+i] = -a[i*r+j], -a[i*r+j]
		}
	}
}

// AddTerm adds w·P D Pᵀ to the d×d row-major matrix a and w·P v to c, where
// P selects the client's coordinates and D is r×r (r = l.R).
func (l *Local) AddTerm(a, c []float64, d int, w float64, dm, v []float64) {
	r := l.R
	if w == 0 || r == 0 {
		return
	}
	for i := 0; i < r; i++ {
		src := dm[i*r : (i+1)*r]
		if l.Coords == nil {
			blas64.Axpy(w, vec(src), vec(a[i*d:i*d+r]))
			c[i] += w * v[i]
			continue
		}
		ri := l.Coords[i]
		dst := a[ri*d : (ri+1)*d]
		for j, x := range src {
			dst[l.Coords[j]] += w * x
		}
		c[ri] += w * v[i]
	}
}

// gramUpper sets the upper triangle of the d×d matrix c to
// alpha·XᵀX + beta·c for the n×d row-major x. It transposes x into scratch
// (grown as needed and returned) so that the rank-n update runs as inner
// products of length n, which gonum's Syrk does several times faster than
// the n rank-1 updates of its transposed form when d is small.
func gramUpper(c, x []float64, n, d int, alpha, beta float64, scratch []float64) []float64 {
	scratch = grow(scratch, n*d)
	for j := 0; j < n; j++ {
		row := x[j*d : (j+1)*d]
		for k, v := range row {
			scratch[k*n+j] = v
		}
	}
	dense.SyrkUpper(d, n, alpha, scratch, n, beta, c, d)
	return scratch
}

// transposeScratch keeps the scratch of gramUpper between calls on any
// goroutine.
var transposeScratch = sync.Pool{New: func() any { return new([]float64) }}

// gramUpperPooled is gramUpper with pooled scratch.
func gramUpperPooled(c, x []float64, n, d int, alpha, beta float64) {
	buf := transposeScratch.Get().(*[]float64)
	*buf = gramUpper(c, x, n, d, alpha, beta, *buf)
	transposeScratch.Put(buf)
}
