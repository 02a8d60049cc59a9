package bound

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// dim is the model dimension of the toy problem: two features and a bias.
const dim = 3

// Data is the toy federation of docs/papers.md §8 (002) with the constants of
// Thm 2.1 estimated on it.
type Data struct {
	Clients []Client
	Star    []float64 // x* = argmin F, from the normal equations
	FStar   float64   // F(x*)

	// Constants of Thm 2.1 (docs/papers.md §3.2) that hold everywhere.
	L float64 // smoothness: max_i 2 λ_max(X_iᵀX_i/n_i)
	D float64 // ‖x⁽⁰⁾ − x*‖ = ‖x*‖ (x⁽⁰⁾ = 0)
	// MaxRowSq is max_j ‖x_j‖²: a single-sample step is stable iff η < 1/MaxRowSq.
	MaxRowSq float64

	// The run: every racer's rounds, and the constants σ², ζ over the
	// region its iterates visited (see Region).
	Traces []Trace
	Region
}

// Client is one client's data: rows x_j = (x1, x2, 1) and labels y_j = ±1.
type Client struct {
	X []float64 // n×3 row-major
	Y []float64
	H []float64 // Hessian of F_i, 2 X_iᵀX_i/n_i (3×3)
	B []float64 // 2 X_iᵀy_i/n_i, so ∇F_i(w) = H w − B
	C float64   // mean of y², so F_i(w) = wᵀHw/2 − Bᵀw + C
}

// generate draws the federation (without a run: Prepare adds the traces) (docs/papers.md §8, 002): two Gaussian classes
// in R² with means (+1,+1) (y = +1) and (−1,−1) (y = −1) and identity
// covariance, plus a constant feature for the bias; client i's share p_i of
// the +1 class is drawn from Dir(c, c) = Beta(c, c), and each of its points
// is +1 with probability p_i. Client i uses the random stream (seed, i).
func generate(clients, samples int, c float64, seed uint64) *Data {
	d := &Data{Clients: make([]Client, clients)}
	for i := range d.Clients {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		g := distuv.Gamma{Alpha: c, Beta: 1, Src: rng}
		a, b := g.Rand(), g.Rand()
		p := 0.5
		if a+b > 0 {
			p = a / (a + b)
		}
		cl := &d.Clients[i]
		cl.X, cl.Y = make([]float64, samples*dim), make([]float64, samples)
		for j := 0; j < samples; j++ {
			y := -1.0
			if rng.Float64() < p {
				y = 1
			}
			row := cl.X[j*dim : (j+1)*dim]
			row[0], row[1], row[2] = y+rng.NormFloat64(), y+rng.NormFloat64(), 1
			cl.Y[j] = y
			d.MaxRowSq = math.Max(d.MaxRowSq, dot(row, row))
		}
		cl.stats()
	}
	d.solve()
	d.D = math.Sqrt(dot(d.Star, d.Star))
	for i := range d.Clients {
		d.L = math.Max(d.L, maxEig(d.Clients[i].H))
	}
	return d
}

// stats computes H_i, B_i and C_i of F_i(w) = (1/n) Σ (wᵀx_j − y_j)²
// (docs/papers.md §3.3: mean squared error, no ½).
func (c *Client) stats() {
	n := len(c.Y)
	c.H, c.B = make([]float64, dim*dim), make([]float64, dim)
	for j := 0; j < n; j++ {
		x := c.X[j*dim : (j+1)*dim]
		for a := 0; a < dim; a++ {
			c.B[a] += 2 * c.Y[j] * x[a] / float64(n)
			for b := 0; b < dim; b++ {
				c.H[a*dim+b] += 2 * x[a] * x[b] / float64(n)
			}
		}
		c.C += c.Y[j] * c.Y[j] / float64(n)
	}
}

// solve finds x* of F = (1/M) Σ_i F_i from (Σ H_i) x = Σ B_i.
func (d *Data) solve() {
	h, b := d.meanH(), make([]float64, dim)
	for i := range d.Clients {
		for a := range b {
			b[a] += d.Clients[i].B[a] / float64(len(d.Clients))
		}
	}
	var x mat.VecDense
	if err := x.SolveVec(mat.NewDense(dim, dim, h), mat.NewVecDense(dim, b)); err != nil {
		d.Star = make([]float64, dim)
	} else {
		d.Star = x.RawVector().Data
	}
	d.FStar = d.F(d.Star)
}

// meanH is the Hessian (1/M) Σ H_i of F.
func (d *Data) meanH() []float64 {
	h := make([]float64, dim*dim)
	for i := range d.Clients {
		for k, v := range d.Clients[i].H {
			h[k] += v / float64(len(d.Clients))
		}
	}
	return h
}

// F returns F(w) = (1/M) Σ_i F_i(w).
func (d *Data) F(w []float64) float64 {
	var s float64
	for i := range d.Clients {
		s += d.Clients[i].F(w)
	}
	return s / float64(len(d.Clients))
}

// F returns F_i(w) = wᵀH_iw/2 − B_iᵀw + C_i.
func (c *Client) F(w []float64) float64 {
	var q float64
	for a := 0; a < dim; a++ {
		for b := 0; b < dim; b++ {
			q += w[a] * c.H[a*dim+b] * w[b]
		}
	}
	return q/2 - dot(c.B, w) + c.C
}

// meanB is (1/M) Σ B_i, so ∇F(w) = meanH·w − meanB.
func (d *Data) meanB() []float64 {
	b := make([]float64, dim)
	for i := range d.Clients {
		for a := range b {
			b[a] += d.Clients[i].B[a] / float64(len(d.Clients))
		}
	}
	return b
}

// GradTo sets dst = ∇F_i(w) = H_i w − B_i.
func (c *Client) GradTo(dst, w []float64) {
	for a := 0; a < dim; a++ {
		dst[a] = dot(c.H[a*dim:(a+1)*dim], w) - c.B[a]
	}
}

func dot(a, b []float64) float64 {
	var s float64
	for k := range a {
		s += a[k] * b[k]
	}
	return s
}

// maxEig returns λ_max of a symmetric 3×3 matrix.
func maxEig(a []float64) float64 {
	var es mat.EigenSym
	if !es.Factorize(mat.NewSymDense(dim, append([]float64(nil), a...)), false) {
		return math.NaN()
	}
	v := es.Values(nil)
	return v[len(v)-1]
}
