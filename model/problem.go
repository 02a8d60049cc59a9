package model

import (
	"math"
	"sync"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/internal/parallel"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"
)

// Problem is a federation prepared for the linear model: every statistic that
// an algorithm or a metric needs, computed once and shared, read-only, by all
// racers and every re-run on the same data (docs/papers.md §1, paper 000).
type Problem struct {
	Fed     *datasets.Federation
	Dim     int
	N       int       // Σ n_i
	Clients []Stats   // one per client, same order as Fed.Clients
	Weights []float64 // aggregation weights w_i = n_i/N

	// Pooled statistics of the global objective l(θ) = 1/(2N)‖y − Xθ‖²:
	// Gram = XᵀX/N = Σ w_i X_iᵀX_i/n_i and XtY = Xᵀy/N.
	Gram, XtY []float64

	// LeastSquares is the pooled (minimum-norm) least-squares estimate, the
	// centralised optimum drawn as the reference line; LSError its distance
	// to θ*.
	LeastSquares []float64
	LSError      float64

	heterogeneous bool // some client's truth differs from θ* (Fed.Heterogeneous)

	curvOnce   sync.Once
	curvPooled float64 // λ_max(XᵀX/N)
	curvClient float64 // max_i λ_max(X_iᵀX_i/n_i)

	proxMu sync.Mutex
	prox   map[float64][]ProxFactor

	localOnce sync.Once
	locals    []Local

	derived derived // round maps and power chains of the racers (Lookup, Keep)
}

// pooledChunk is how many clients one task adds to the pooled statistics.
const pooledChunk = 64

// NewProblem computes the statistics of every client (in parallel, one
// client per task, so the result does not depend on scheduling), the pooled
// statistics and the least-squares reference.
func NewProblem(fed *datasets.Federation) *Problem {
	d := fed.Dim
	p := &Problem{Fed: fed, Dim: d, N: fed.N(), Clients: make([]Stats, len(fed.Clients)),
		Weights: make([]float64, len(fed.Clients)), prox: map[float64][]ProxFactor{}}
	parallel.For(len(fed.Clients), func(i int) {
		c := &fed.Clients[i]
		p.Clients[i] = NewStats(c.X, c.Y, c.N, d)
	})
	p.Gram = make([]float64, d*d)
	p.XtY = make([]float64, d)
	for i := range p.Clients {
		p.Weights[i] = float64(p.Clients[i].N) / float64(p.N)
	}
	// The pooled sums run over fixed chunks of clients in parallel, each
	// chunk in client order, and the chunks are added in order: the same
	// bits on any number of CPUs.
	chunks := (len(p.Clients) + pooledChunk - 1) / pooledChunk
	type partial struct{ gram, xty []float64 }
	parts := make([]partial, parallel.Workers(chunks))
	parallel.Ordered(chunks, func(c, slot int) {
		pt := &parts[slot]
		if pt.gram == nil {
			pt.gram, pt.xty = make([]float64, d*d), make([]float64, d)
		}
		clear(pt.gram)
		clear(pt.xty)
		for i := c * pooledChunk; i < min(len(p.Clients), (c+1)*pooledChunk); i++ {
			s := &p.Clients[i]
			w := p.Weights[i]
			floatsAxpy(w, s.XtY, pt.xty)
			if s.Gram != nil {
				floatsAxpy(w, s.Gram, pt.gram)
			} else if s.N > 0 {
				// X_iᵀX_i/N added directly from the rows.
				gramUpperPooled(pt.gram, s.X, s.N, d, 1/float64(p.N), 1)
			}
		}
	}, func(_, slot int) {
		floatsAxpy(1, parts[slot].xty, p.XtY)
		floatsAxpy(1, parts[slot].gram, p.Gram)
	})
	// Raw clients wrote only the upper triangle; symmetrise from it (the
	// Gram clients kept both triangles identical, so this changes nothing there).
	mirrorUpper(p.Gram, d)
	p.LeastSquares = MinNormSolve(p.Gram, p.XtY, d)
	p.LSError = Distance(p.LeastSquares, fed.Truth)
	p.heterogeneous = fed.Heterogeneous()
	return p
}

// Locals returns every client's statistics in the form the round maps need
// (Local), computed once on first use, in parallel, and shared by every
// racer and re-run. A client with a Gram matrix and no covariate subspace
// shares its Stats; a covariate-subspace client keeps the r×r block of its
// support; a client with fewer rows than coordinates is decomposed through
// its n_i×n_i kernel.
func (p *Problem) Locals() []Local {
	p.localOnce.Do(func() {
		p.locals = make([]Local, len(p.Clients))
		parallel.For(len(p.Clients), func(i int) {
			s, c := &p.Clients[i], &p.Fed.Clients[i]
			l := &p.locals[i]
			switch {
			case c.Support == nil && s.Gram != nil:
				*l = Local{R: p.Dim, N: s.N, Gram: s.Gram, B: s.XtY}
			case c.Support != nil && s.Gram != nil && s.N >= len(c.Support):
				// The support block of the d×d Gram matrix; the rows are zero elsewhere.
				r := len(c.Support)
				*l = Local{Coords: c.Support, R: r, N: s.N, Gram: make([]float64, r*r), B: make([]float64, r)}
				for a, ka := range c.Support {
					l.B[a] = s.XtY[ka]
					for b, kb := range c.Support {
						l.Gram[a*r+b] = s.Gram[ka*p.Dim+kb]
					}
				}
			default:
				ws := localWork.Get().(*LocalWork)
				l.Set(c.X, c.Y, c.N, p.Dim, c.Support, false, ws)
				localWork.Put(ws)
			}
		})
	})
	return p.locals
}

// localWork keeps the scratch of Local.Set between clients.
var localWork = sync.Pool{New: func() any { return &LocalWork{} }}

// MinNormSolve returns the minimum-norm solution of A x = b for a symmetric
// positive semi-definite d×d matrix A (row-major): a Cholesky solve when A is
// positive definite, otherwise the pseudo-inverse solution from an SVD with
// relative rank tolerance 1e-12 (docs/papers.md §1.6: "restricted to the reachable
// subspace" when XᵀX is singular).
func MinNormSolve(a, b []float64, d int) []float64 {
	x := make([]float64, d)
	MinNormSolveTo(x, a, b, d, nil)
	return x
}

// SolveWork is scratch memory for MinNormSolveTo; one serves one goroutine.
type SolveWork struct {
	a, work []float64
	iwork   []int
}

// MinNormSolveTo is MinNormSolve into x, reusing ws (which may be nil) so
// that the common positive definite case allocates nothing. A is
// positive definite when its Cholesky factorisation succeeds with a
// condition number (1-norm estimate, as gonum's mat.Cholesky) below 1e12.
func MinNormSolveTo(x, a, b []float64, d int, ws *SolveWork) {
	if ws == nil {
		ws = &SolveWork{}
	}
	ws.a = grow(ws.a, d*d)
	copy(ws.a, a[:d*d])
	ws.work = grow(ws.work, 3*d)
	if cap(ws.iwork) < d {
		ws.iwork = make([]int, d)
	}
	sym := blas64.Symmetric{Uplo: blas.Upper, N: d, Stride: d, Data: ws.a}
	norm := lapack64.Lansy(lapack.MaxRowSum, sym, ws.work)
	if t, ok := lapack64.Potrf(sym); ok {
		if rcond := lapack64.Pocon(sym, norm, ws.work, ws.iwork[:d]); 1/rcond < condLimit {
			copy(x, b[:d])
			lapack64.Potrs(t, blas64.General{Rows: d, Cols: 1, Stride: 1, Data: x})
			return
		}
	}
	clear(x[:d])
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(d, d, append([]float64(nil), a[:d*d]...)), mat.SVDThin) {
		return
	}
	rank := svd.Rank(1e-12)
	if rank == 0 {
		return
	}
	var xm mat.Dense
	svd.SolveTo(&xm, mat.NewDense(d, 1, append([]float64(nil), b[:d]...)), rank)
	mat.Col(x[:d], 0, &xm)
}

// GradNormScratch is the scratch length GradNorm needs.
func (p *Problem) GradNormScratch() int { return p.Dim }

// GradNorm returns ‖∇l(θ)‖ for the loss of the paper's plots,
// l(θ) = (1/N) Σ_i ‖y_i − X_i θ‖² (no factor ½), whose gradient is
// (2/N) Xᵀ(Xθ − y) = 2(Gθ − b) with the pooled statistics (docs/papers.md §1.2,
// §7: exactly twice the gradient of the 1/(2N) objective).
func (p *Problem) GradNorm(theta, scratch []float64) float64 {
	g := scratch[:p.Dim]
	gemv(blas.NoTrans, 1, blas64.General{Rows: p.Dim, Cols: p.Dim, Stride: p.Dim, Data: p.Gram}, theta, 0, g)
	var s float64
	for k, b := range p.XtY {
		t := 2 * (g[k] - b)
		s += t * t
	}
	return math.Sqrt(s)
}

// EstError returns ‖θ − θ*‖, the estimation error against the common truth
// (docs/papers.md §6).
func (p *Problem) EstError(theta []float64) float64 { return Distance(theta, p.Fed.Truth) }

// ClientError returns Σ_i w_i ‖θ − θ_i*‖, the error against each client's own
// truth weighted by n_i/N; NaN when all clients share one truth, since it
// then equals EstError.
func (p *Problem) ClientError(theta []float64) float64 {
	if !p.heterogeneous {
		return math.NaN()
	}
	var s float64
	for i := range p.Fed.Clients {
		s += p.Weights[i] * Distance(theta, p.Fed.Clients[i].Truth)
	}
	return s
}

// Curvature returns λ_max of the pooled Hessian XᵀX/N and the largest λ_max
// over the clients' local Hessians X_iᵀX_i/n_i, computed once on first use.
// Gradient descent with step η on a quadratic with curvature λ is stable iff
// η < 2/λ, which is how divergence is explained to the user.
func (p *Problem) Curvature() (pooled, client float64) {
	p.curvOnce.Do(func() {
		p.curvPooled = MaxEigenSym(p.Gram, p.Dim)
		for i := range p.Clients {
			p.curvClient = math.Max(p.curvClient, p.Clients[i].MaxCurvature())
		}
	})
	return p.curvPooled, p.curvClient
}

// MaxCurvature returns λ_max(X_iᵀX_i/n_i).
func (s *Stats) MaxCurvature() float64 {
	if s.N == 0 {
		return 0
	}
	if s.Gram != nil {
		return MaxEigenSym(s.Gram, s.Dim)
	}
	return RowsCurvature(s.X, s.Dim, nil)
}

// RowsCurvature returns λ_max(X_bᵀX_b/B) for the rows of x (row-major, d
// columns) listed in idx, or all rows when idx is nil, through the B×B
// matrix X_b X_bᵀ/B that has the same non-zero eigenvalues.
func RowsCurvature(x []float64, d int, idx []int) float64 {
	rows := len(x) / d
	if idx != nil {
		rows = len(idx)
	}
	if rows == 0 {
		return 0
	}
	row := func(j int) []float64 {
		if idx != nil {
			j = idx[j]
		}
		return x[j*d : (j+1)*d]
	}
	k := make([]float64, rows*rows)
	for a := 0; a < rows; a++ {
		for b := a; b < rows; b++ {
			v := blas64.Dot(vec(row(a)), vec(row(b))) / float64(rows)
			k[a*rows+b], k[b*rows+a] = v, v
		}
	}
	return MaxEigenSym(k, rows)
}

// MaxEigenSym returns the largest eigenvalue of a symmetric n×n matrix.
func MaxEigenSym(a []float64, n int) float64 {
	var es mat.EigenSym
	if !es.Factorize(mat.NewSymDense(n, append([]float64(nil), a...)), false) {
		return math.NaN()
	}
	vals := es.Values(nil)
	return vals[len(vals)-1]
}

// Distance returns ‖a − b‖.
func Distance(a, b []float64) float64 {
	var s float64
	for k := range a {
		t := a[k] - b[k]
		s += t * t
	}
	return math.Sqrt(s)
}

// Norm returns ‖a‖.
func Norm(a []float64) float64 { return blas64.Nrm2(vec(a)) }

func floatsAxpy(alpha float64, x, y []float64) {
	for k, v := range x {
		y[k] += alpha * v
	}
}
