package model

import (
	"math"

	"github.com/fedscope/fedscope/internal/parallel"
)

// SampleLoss is a loss f(x; θ) of one sample x (features and label, as one
// row) and a parameter θ ∈ R^p (paper 001, docs/papers.md §2.1).
type SampleLoss interface {
	Params() int                      // p
	Value(x, theta []float64) float64 // f(x; θ)
	GradTo(dst, x, theta []float64)   // dst = ∇_θ f(x; θ)
	Smoothness() float64              // L1, a Lipschitz constant of ∇_θ f
}

// Logistic is the l2-regularised logistic loss with soft labels of paper
// 001, Appendix A (docs/papers.md §2.8), for samples x = (x_1..x_d, y) with
// y ∈ [0,1] and no bias:
//
//	f(x, y; θ) = y log(1 + e^{−θᵀx}) + (1−y) log(1 + e^{θᵀx}) + (μ/2)‖θ‖²,
//	∇_θ f = (sigmoid(θᵀx) − y) x + μθ.
type Logistic struct {
	Dim int     // d = p
	Mu  float64 // μ, the strong-convexity constant
}

// Params implements SampleLoss.
func (l Logistic) Params() int { return l.Dim }

// Smoothness returns L1 = d/2 + μ, the paper's constant (§2.8, with d − 1
// there equal to the feature count d here).
func (l Logistic) Smoothness() float64 { return float64(l.Dim)/2 + l.Mu }

// Value implements SampleLoss.
func (l Logistic) Value(x, theta []float64) float64 {
	z := dotN(theta, x, l.Dim)
	y := x[l.Dim]
	return y*softplus(-z) + (1-y)*softplus(z) + l.Mu/2*dotN(theta, theta, l.Dim)
}

// GradTo implements SampleLoss.
func (l Logistic) GradTo(dst, x, theta []float64) {
	z := dotN(theta, x, l.Dim)
	r := sigmoid(z) - x[l.Dim]
	for k := 0; k < l.Dim; k++ {
		dst[k] = r*x[k] + l.Mu*theta[k]
	}
}

// softplus(z) = log(1 + e^z), computed without overflow.
func softplus(z float64) float64 { return math.Max(z, 0) + math.Log1p(math.Exp(-math.Abs(z))) }

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

func dotN(a, b []float64, n int) float64 {
	var s float64
	for k := 0; k < n; k++ {
		s += a[k] * b[k]
	}
	return s
}

// Federated is the empirical risk of paper 001 (docs/papers.md §2.1),
// F(θ) = (1/n)[Σ_j f(x^(0,j); θ) + Σ_c Σ_j f(x^(c,j); θ)], n = ms + r,
// over the server's samples and the clients' samples (rows of length Q).
type Federated struct {
	Loss    SampleLoss
	Q       int         // length of one sample row
	Server  []float64   // server samples, rows of length Q
	Clients [][]float64 // each client's samples
	N       int         // n, all samples
	// Box, when > 0, is the parameter space [−Box, Box]^p of the paper's
	// Appendix A ([−1,1]^p); descents project onto it.
	Box float64

	Optimum []float64 // θ*, from a long exact gradient descent
	FStar   float64   // F(θ*)
}

// NewFederated prepares the problem on the parameter space [−box, box]^p
// (box 0: all of R^p) and computes F* by projected gradient descent with
// step 1/L1 until the step is below 1e-13 (at most 20,000 steps; the loss is
// μ-strongly convex, so this converges linearly).
func NewFederated(loss SampleLoss, q int, server []float64, clients [][]float64, box float64) *Federated {
	f := &Federated{Loss: loss, Q: q, Server: server, Clients: clients, N: len(server) / q, Box: box}
	for _, c := range clients {
		f.N += len(c) / q
	}
	p := loss.Params()
	theta, g := make([]float64, p), make([]float64, p)
	step := 1 / loss.Smoothness()
	for it := 0; it < 20000; it++ {
		f.GradTo(g, theta)
		var moved float64
		for k := range theta {
			old := theta[k]
			theta[k] = f.Project(theta[k] - step*g[k])
			moved += (theta[k] - old) * (theta[k] - old)
		}
		if math.Sqrt(moved) <= 1e-13 {
			break
		}
	}
	f.Optimum = theta
	f.FStar = f.Value(theta)
	return f
}

// Project clips one coordinate onto [−Box, Box] (unchanged when Box = 0).
func (f *Federated) Project(v float64) float64 {
	if f.Box > 0 {
		return math.Max(-f.Box, math.Min(f.Box, v))
	}
	return v
}

// Value returns F(θ), summing the clients in parallel and then in order.
func (f *Federated) Value(theta []float64) float64 {
	parts := make([]float64, len(f.Clients)+1)
	parallel.For(len(parts), func(c int) {
		rows := f.Server
		if c > 0 {
			rows = f.Clients[c-1]
		}
		var s float64
		for i := 0; i+f.Q <= len(rows); i += f.Q {
			s += f.Loss.Value(rows[i:i+f.Q], theta)
		}
		parts[c] = s
	})
	var s float64
	for _, v := range parts {
		s += v
	}
	return s / float64(f.N)
}

// GradTo sets dst = ∇F(θ).
func (f *Federated) GradTo(dst, theta []float64) {
	p := f.Loss.Params()
	g := make([]float64, p)
	clear(dst)
	add := func(rows []float64) {
		for i := 0; i+f.Q <= len(rows); i += f.Q {
			f.Loss.GradTo(g, rows[i:i+f.Q], theta)
			for k, v := range g {
				dst[k] += v
			}
		}
	}
	add(f.Server)
	for _, c := range f.Clients {
		add(c)
	}
	for k := range dst {
		dst[k] /= float64(f.N)
	}
}

// LeanValue returns F(θ) as Value does, faster for the logistic loss: its
// two softplus terms are one, y·softplus(−z) + (1−y)·softplus(z) =
// softplus(z) − y·z, so one exp and one log1p per sample instead of two
// each. The two agree to rounding (not bit for bit), so the runs keep Value
// and only the sweeps, which compare F − F* with a target, use this.
func (f *Federated) LeanValue(theta []float64) float64 {
	l, ok := f.Loss.(Logistic)
	if !ok {
		return f.Value(theta)
	}
	parts := make([]float64, len(f.Clients)+1)
	parallel.For(len(parts), func(c int) {
		rows := f.Server
		if c > 0 {
			rows = f.Clients[c-1]
		}
		var s float64
		for i := 0; i+f.Q <= len(rows); i += f.Q {
			z := dotN(theta, rows[i:], l.Dim)
			s += softplus(z) - rows[i+l.Dim]*z
		}
		parts[c] = s
	})
	var s float64
	for _, v := range parts {
		s += v
	}
	return s/float64(f.N) + l.Mu/2*dotN(theta, theta, l.Dim)
}
