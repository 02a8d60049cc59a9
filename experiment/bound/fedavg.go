package bound

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fedscope/fedscope/algorithms"
)

// round is what the FedAvg of paper 002 reports after one round t.
type round struct {
	index    int
	x        []float64 // x⁽ᵗ⁾, the global model after the round
	subopt   float64   // F(x⁽ᵗ⁾) − F*
	avg      float64   // (1/(τt)) Σ_{s<t} Σ_{k=1..τ} F(x̄^(s,k)) − F*, Thm 2.1's left side
	drift    float64   // max over the round's local steps k of (1/M) Σ_i ‖x_i^(t,k) − x̄^(t,k)‖²
	accuracy float64   // fraction of all training points with sign(xᵀw) = y
}

// samplingStream offsets the clients' sampling streams from their data
// streams (0..M−1).
const samplingStream = 1 << 40

// fedAvg is Algorithm 1 of paper 002 (docs/papers.md §3.1): every round, each
// client starts from x⁽ᵗ⁾ and runs τ SGD steps x ← x − η g_i(x), g_i one
// stochastic gradient 2(xᵀx_j − y_j)x_j at a point j drawn uniformly from
// its data (batch 1, docs/papers.md §8); the server adds the uniform average of
// the updates, Δ = (1/M) Σ_i (x_i^(t,τ) − x⁽ᵗ⁾), so x⁽ᵗ⁺¹⁾ = x̄^(t,τ). The
// shadow average x̄^(t,k) = (1/M) Σ_i x_i^(t,k) is measured at every local
// step (the loop runs k = 1..τ: the notes' "k ∈ {0..τ}" is the off-by-one
// of docs/papers.md §7). Client i samples with its own stream, so the run is
// deterministic in the seed.
func fedAvg(ctx context.Context, d *Data, eta float64, tau, rounds int, seed uint64, emit func(round)) error {
	m := len(d.Clients)
	rngs := make([]*rand.Rand, m)
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(seed, samplingStream+uint64(i)))
	}
	x := make([]float64, dim)
	u := make([][]float64, m)
	for i := range u {
		u[i] = make([]float64, dim)
	}
	xbar := make([]float64, dim)
	var sum float64 // Σ of F(x̄^(s,k)) − F* so far
	for t := 1; t <= rounds; t++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := range u {
			copy(u[i], x)
		}
		drift := 0.0
		for k := 1; k <= tau; k++ {
			for i := range d.Clients {
				c := &d.Clients[i]
				j := rngs[i].IntN(len(c.Y))
				row := c.X[j*dim : (j+1)*dim]
				r := 2 * eta * (dot(row, u[i]) - c.Y[j])
				for a := range row {
					u[i][a] -= r * row[a]
				}
			}
			clear(xbar)
			for i := range u {
				for a := range xbar {
					xbar[a] += u[i][a] / float64(m)
				}
			}
			var dr float64
			for i := range u {
				for a := range xbar {
					e := u[i][a] - xbar[a]
					dr += e * e / float64(m)
				}
			}
			drift = math.Max(drift, dr)
			sum += d.F(xbar) - d.FStar
		}
		copy(x, xbar)
		if !finite(x) || !(math.Abs(sum) < 1e300) {
			return &algorithms.DivergedError{Round: t, Eta: eta, Limit: 1 / d.MaxRowSq, Of: "the single-sample steps"}
		}
		emit(round{index: t, x: append([]float64(nil), x...), subopt: d.F(x) - d.FStar,
			avg: sum / float64(tau*t), drift: drift, accuracy: d.accuracy(x)})
	}
	return nil
}

// accuracy is the fraction of training points the linear classifier
// sign(xᵀw) labels correctly.
func (d *Data) accuracy(w []float64) float64 {
	right, n := 0, 0
	for i := range d.Clients {
		c := &d.Clients[i]
		for j, y := range c.Y {
			if dot(c.X[j*dim:(j+1)*dim], w)*y > 0 {
				right++
			}
			n++
		}
	}
	return float64(right) / float64(n)
}

// Bound is the right-hand side of Thm 2.1 (docs/papers.md §3.2) after T rounds:
//
//	D²/(2ητT) + ησ²/M + 4τη²Lσ² + 18τ²η²Lζ².
//
// Only the first term falls with T: with a constant η the bound has the
// floor ησ²/M + 4τη²Lσ² + 18τ²η²Lζ² (the notes' closing "= O(1/(τT))"
// ignores it, docs/papers.md §7).
func Bound(d *Data, eta float64, tau, T, m int) float64 {
	return d.D*d.D/(2*eta*float64(tau*T)) + BoundFloor(d, eta, tau, m)
}

// BoundFloor is the part of Bound that does not fall with T.
func BoundFloor(d *Data, eta float64, tau, m int) float64 {
	t := float64(tau)
	return eta*d.Sigma2/float64(m) + 4*t*eta*eta*d.L*d.Sigma2 + 18*t*t*eta*eta*d.L*d.Zeta*d.Zeta
}

// DriftBound is the client-drift lemma's bound (docs/papers.md §3.2):
// E‖x_i^(t,k) − x̄^(t,k)‖² ≤ 18τ²η²ζ² + 4τη²σ².
func DriftBound(d *Data, eta float64, tau int) float64 {
	t := float64(tau)
	return 18*t*t*eta*eta*d.Zeta*d.Zeta + 4*t*eta*eta*d.Sigma2
}

func finite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// stepLimit is the largest step of Thm 2.1, 1/(4L).
func (d *Data) stepLimit() float64 { return 1 / (4 * d.L) }

func (d *Data) String() string {
	return fmt.Sprintf("L=%.3g, D=%.3g, σ²=%.3g, ζ=%.3g", d.L, d.D, d.Sigma2, d.Zeta)
}
