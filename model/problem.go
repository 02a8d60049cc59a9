package model

import (
	"math"
	"sync"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/internal/parallel"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Problem is a federation prepared for the linear model: every statistic that
// an algorithm or a metric needs, computed once and shared, read-only, by all
// racers and every re-run on the same data (PAPERS.md §1, paper 000).
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

	curvOnce   sync.Once
	curvPooled float64 // λ_max(XᵀX/N)
	curvClient float64 // max_i λ_max(X_iᵀX_i/n_i)

	proxMu sync.Mutex
	prox   map[float64][]ProxFactor

	specOnce sync.Once
	spectra  []*Spectrum
}

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
		s := &p.Clients[i]
		w := float64(s.N) / float64(p.N)
		p.Weights[i] = w
		floatsAxpy(w, s.XtY, p.XtY)
		if s.Gram != nil {
			floatsAxpy(w, s.Gram, p.Gram)
		} else if s.N > 0 {
			// X_iᵀX_i/N added directly from the rows.
			blas64.Syrk(blas.Trans, 1/float64(p.N), s.design(), 1,
				blas64.Symmetric{Uplo: blas.Upper, N: d, Stride: d, Data: p.Gram})
		}
	}
	// Raw clients wrote only the upper triangle; symmetrise from it (the
	// Gram clients kept both triangles identical, so this changes nothing there).
	mirrorUpper(p.Gram, d)
	p.LeastSquares = MinNormSolve(p.Gram, p.XtY, d)
	p.LSError = Distance(p.LeastSquares, fed.Truth)
	return p
}

// MinNormSolve returns the minimum-norm solution of A x = b for a symmetric
// positive semi-definite d×d matrix A (row-major): a Cholesky solve when A is
// positive definite, otherwise the pseudo-inverse solution from an SVD with
// relative rank tolerance 1e-12 (PAPERS.md §1.6: "restricted to the reachable
// subspace" when XᵀX is singular).
func MinNormSolve(a, b []float64, d int) []float64 {
	sym := mat.NewSymDense(d, append([]float64(nil), a...))
	x := mat.NewVecDense(d, nil)
	var ch mat.Cholesky
	if ch.Factorize(sym) && ch.Cond() < 1e12 {
		if err := ch.SolveVecTo(x, mat.NewVecDense(d, append([]float64(nil), b...))); err == nil {
			return x.RawVector().Data
		}
	}
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(d, d, append([]float64(nil), a...)), mat.SVDThin) {
		return make([]float64, d)
	}
	rank := svd.Rank(1e-12)
	if rank == 0 {
		return make([]float64, d)
	}
	var xm mat.Dense
	svd.SolveTo(&xm, mat.NewDense(d, 1, append([]float64(nil), b...)), rank)
	return mat.Col(nil, 0, &xm)
}

// GradNormScratch is the scratch length GradNorm needs.
func (p *Problem) GradNormScratch() int { return p.Dim }

// GradNorm returns ‖∇l(θ)‖ for the loss of the paper's plots,
// l(θ) = (1/N) Σ_i ‖y_i − X_i θ‖² (no factor ½), whose gradient is
// (2/N) Xᵀ(Xθ − y) = 2(Gθ − b) with the pooled statistics (PAPERS.md §1.2,
// §7: exactly twice the gradient of the 1/(2N) objective).
func (p *Problem) GradNorm(theta, scratch []float64) float64 {
	g := scratch[:p.Dim]
	blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: p.Dim, Cols: p.Dim, Stride: p.Dim, Data: p.Gram}, vec(theta), 0, vec(g))
	var s float64
	for k, b := range p.XtY {
		t := 2 * (g[k] - b)
		s += t * t
	}
	return math.Sqrt(s)
}

// EstError returns ‖θ − θ*‖, the estimation error against the common truth
// (PAPERS.md §6).
func (p *Problem) EstError(theta []float64) float64 { return Distance(theta, p.Fed.Truth) }

// ClientError returns Σ_i w_i ‖θ − θ_i*‖, the error against each client's own
// truth weighted by n_i/N; NaN when all clients share one truth, since it
// then equals EstError.
func (p *Problem) ClientError(theta []float64) float64 {
	if !p.Fed.Heterogeneous() {
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
