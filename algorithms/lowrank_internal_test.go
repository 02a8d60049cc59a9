package algorithms

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/mat"
)

// chebLoss has per-coordinate partial derivatives of exact rank k in
// (sample, parameter): f(x; θ) = Σ_i Σ_{a<k} x_a ∫T_a(θ_i), so
// g_i(x; θ) = Σ_{a<k} x_a T_a(θ_i) with T_a the Chebyshev polynomials,
// which stay well separated on [−1,1] (G⁽ⁱ⁾ well conditioned).
type chebLoss struct{ p, k int }

func cheb(a int, t float64) float64 {
	return math.Cos(float64(a) * math.Acos(math.Max(-1, math.Min(1, t))))
}

func (l chebLoss) Params() int         { return l.p }
func (l chebLoss) Smoothness() float64 { return float64(l.k * l.k) }
func (l chebLoss) Value(x, th []float64) float64 {
	panic("not needed")
}
func (l chebLoss) GradTo(dst, x, th []float64) {
	for i, t := range th {
		var s float64
		for a := 0; a < l.k; a++ {
			s += x[a] * cheb(a, t)
		}
		dst[i] = s
	}
}

// interpolated evaluates FedLRGD's approximate gradient directly from its
// definition (docs/papers.md §2.4), with gonum's LU solve for (G⁽ⁱ⁾)⁻¹ instead
// of the truncated SVD: an independent implementation of
//
//	F̂_i(θ) = (1/n) Σ_k g_i(x⁽⁰ᵏ⁾; θ) (1 + Σ_c v_k^(i,c)),
//	v^(i,c) = (Σ_j [g_i(x^(c,j); ϑ^(1..r))]) (G⁽ⁱ⁾)⁻¹.
func interpolated(t *testing.T, l model.SampleLoss, q int, server []float64, clients [][]float64, n int, anchors [][]float64, theta []float64) []float64 {
	t.Helper()
	p, r := l.Params(), len(anchors)
	grad := func(x, th []float64) []float64 { g := make([]float64, p); l.GradTo(g, x, th); return g }
	out := make([]float64, p)
	for i := 0; i < p; i++ {
		gm := mat.NewDense(r, r, nil)
		for j := 0; j < r; j++ {
			for k := 0; k < r; k++ {
				gm.Set(j, k, grad(server[j*q:(j+1)*q], anchors[k])[i])
			}
		}
		// Σ over every non-node sample of its row at the anchors.
		sum := mat.NewVecDense(r, nil)
		var rows [][]float64
		for j := r; j*q < len(server); j++ {
			rows = append(rows, server[j*q:(j+1)*q])
		}
		for _, c := range clients {
			for j := 0; j*q < len(c); j++ {
				rows = append(rows, c[j*q:(j+1)*q])
			}
		}
		for _, x := range rows {
			for k := 0; k < r; k++ {
				sum.SetVec(k, sum.AtVec(k)+grad(x, anchors[k])[i])
			}
		}
		// v = sum·G⁻¹, i.e. Gᵀ vᵀ = sumᵀ.
		var v mat.VecDense
		if err := v.SolveVec(gm.T(), sum); err != nil {
			t.Fatal(err)
		}
		for k := 0; k < r; k++ {
			out[i] += grad(server[k*q:(k+1)*q], theta)[i] * (1 + v.AtVec(k))
		}
		out[i] /= float64(n)
	}
	return out
}

// TestFedLRGDInterpolation checks FedLRGD's approximate gradient against
// the independent evaluation of its formula (interpolated) and against the
// true gradient, with r = 4 interpolation nodes, on a loss whose gradient
// matrices have exactly rank 4 (F̂ = ∇F to machine precision) and rank 5
// (F̂ ≠ ∇F, but still the formula's value to machine precision), with the
// default SVD cut-off and server samples beyond the nodes.
func TestFedLRGDInterpolation(t *testing.T) {
	const p, q, r = 3, 6, 4
	rng := rand.New(rand.NewPCG(4, 4))
	rows := func(n int) []float64 {
		out := make([]float64, n*q)
		for k := range out {
			out[k] = rng.Float64()
		}
		return out
	}
	server := rows(r + 3)
	var clients [][]float64
	n := r + 3
	for c := 0; c < 5; c++ {
		clients = append(clients, rows(8))
		n += 8
	}
	for _, k := range []int{r, r + 1} {
		l := chebLoss{p: p, k: k}
		fp := &model.Federated{Loss: l, Q: q, Server: server, Clients: clients, N: n}
		a := FedLRGD{Rank: r, Iters: 1, Seed: 9}
		anchors := a.anchors(p)
		for _, theta := range [][]float64{{0.3, -0.7, 0.9}, {-0.2, 0.5, 0.05}} {
			got, cond, err := a.ApproxGrad(fp, theta)
			if err != nil {
				t.Fatal(err)
			}
			if cond > 1/DefaultSVDTol {
				t.Fatalf("cond %g: the cut-off would drop a direction; pick better-conditioned anchors", cond)
			}
			want := interpolated(t, l, q, server, clients, n, anchors, theta)
			truth := make([]float64, p)
			fp.GradTo(truth, theta)
			for i := range got {
				if d := math.Abs(got[i] - want[i]); d > 1e-12*(1+math.Abs(want[i]))*cond {
					t.Errorf("rank %d, θ=%v: F̂_%d = %.17g, formula %.17g (cond %.3g)", k, theta, i, got[i], want[i], cond)
				}
			}
			err2 := model.Distance(got, truth) / model.Norm(truth)
			switch {
			case k == r && err2 > 1e-12*cond:
				t.Errorf("rank %d = r: ‖F̂ − ∇F‖/‖∇F‖ = %.3g, want machine precision (cond %.3g)", k, err2, cond)
			case k > r && err2 < 1e-3:
				t.Errorf("rank %d > r: ‖F̂ − ∇F‖/‖∇F‖ = %.3g, want a visible approximation error", k, err2)
			}
			t.Logf("rank %d, r=%d: relative error of F̂ %.3g (cond %.3g)", k, r, err2, cond)
		}
	}
}
