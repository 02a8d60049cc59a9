package algorithms_test

import (
	"context"
	"math"
	"testing"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/mat"
)

// The reference implementations below work on the raw designs with gonum
// mat, independently of the sufficient statistics and workspaces of package
// model, so they can serve as truth for the round loops.

func newProblem(t testing.TB, c datasets.Linear, seed uint64) *model.Problem {
	t.Helper()
	fed, err := c.Generate(seed)
	if err != nil {
		t.Fatalf("Generate(%+v): %v", c, err)
	}
	return model.NewProblem(fed)
}

// run collects the rounds an algorithm emits.
func run(alg algorithms.Algorithm, p *model.Problem, rounds int) ([]algorithms.LinearRound, error) {
	var out []algorithms.LinearRound
	err := alg.Run(context.Background(), p, rounds, func(r algorithms.LinearRound) { out = append(out, r) })
	return out, err
}

// client is one client's raw data as gonum matrices.
type client struct {
	x *mat.Dense
	y *mat.VecDense
	n int
}

func clients(fed *datasets.Federation) []client {
	cs := make([]client, len(fed.Clients))
	for i, c := range fed.Clients {
		cs[i] = client{
			x: mat.NewDense(c.N, fed.Dim, append([]float64(nil), c.X...)),
			y: mat.NewVecDense(c.N, append([]float64(nil), c.Y...)),
			n: c.N,
		}
	}
	return cs
}

// stacked returns the pooled design X (N×d) and responses y.
func stacked(fed *datasets.Federation) client {
	var xs, ys []float64
	for _, c := range fed.Clients {
		xs = append(xs, c.X...)
		ys = append(ys, c.Y...)
	}
	n := len(ys)
	return client{x: mat.NewDense(n, fed.Dim, xs), y: mat.NewVecDense(n, ys), n: n}
}

// gradient returns (1/n) Xᵀ(Xθ − y), the gradient of 1/(2n)‖y − Xθ‖².
func (c client) gradient(theta []float64) []float64 {
	_, d := c.x.Dims()
	var r, g mat.VecDense
	r.MulVec(c.x, mat.NewVecDense(d, theta))
	r.SubVec(&r, c.y)
	g.MulVec(c.x.T(), &r)
	g.ScaleVec(1/float64(c.n), &g)
	return g.RawVector().Data
}

// gd returns θ after `steps` gradient steps θ ← θ − (η/n) Xᵀ(Xθ − y).
func (c client) gd(theta []float64, eta float64, steps int) []float64 {
	u := append([]float64(nil), theta...)
	for s := 0; s < steps; s++ {
		g := c.gradient(u)
		for k := range u {
			u[k] -= eta * g[k]
		}
	}
	return u
}

// prox returns argmin_u 1/(2n)‖y − Xu‖² + ‖u − θ‖²/(2η), by an LU solve of
// (I + ηXᵀX/n) u = θ + ηXᵀy/n (docs/papers.md §1.4).
func (c client) prox(theta []float64, eta float64) []float64 {
	_, d := c.x.Dims()
	var a mat.Dense
	a.Mul(c.x.T(), c.x)
	a.Scale(eta/float64(c.n), &a)
	for k := 0; k < d; k++ {
		a.Set(k, k, a.At(k, k)+1)
	}
	var rhs mat.VecDense
	rhs.MulVec(c.x.T(), c.y)
	rhs.AddScaledVec(mat.NewVecDense(d, append([]float64(nil), theta...)), eta/float64(c.n), &rhs)
	var u mat.VecDense
	if err := u.SolveVec(&a, &rhs); err != nil {
		panic(err)
	}
	return u.RawVector().Data
}

// gradNorm returns (2/N)‖Xᵀ(Xθ − y)‖, the gradient norm of the paper's loss
// (1/N) Σ‖y_i − X_iθ‖² (docs/papers.md §1.2), from the stacked raw data.
func (c client) gradNorm(theta []float64) float64 {
	g := c.gradient(theta)
	return 2 * mat.Norm(mat.NewVecDense(len(g), g), 2)
}

// lambdaMax returns λ_max(XᵀX/n) = σ_max(X)²/n from an SVD of the design.
func (c client) lambdaMax() float64 {
	var svd mat.SVD
	if !svd.Factorize(c.x, mat.SVDNone) {
		panic("SVD failed")
	}
	s := svd.Values(nil)[0]
	return s * s / float64(c.n)
}

// average returns Σ_i (n_i/N) local_i(θ).
func average(cs []client, theta []float64, local func(c client, theta []float64) []float64) []float64 {
	var total int
	for _, c := range cs {
		total += c.n
	}
	out := make([]float64, len(theta))
	for _, c := range cs {
		u := local(c, theta)
		w := float64(c.n) / float64(total)
		for k := range out {
			out[k] += w * u[k]
		}
	}
	return out
}

// within reports ‖got − want‖ ≤ tol·‖want‖ (or ≤ tol when want is tiny).
func within(got, want []float64, tol float64) bool {
	var diff, norm float64
	for k := range want {
		diff += (got[k] - want[k]) * (got[k] - want[k])
		norm += want[k] * want[k]
	}
	return math.Sqrt(diff) <= tol*math.Max(math.Sqrt(norm), 1)
}

// panics reports whether f panics.
func panics(f func()) (panicked bool) {
	defer func() {
		if recover() != nil {
			panicked = true
		}
	}()
	f()
	return false
}
