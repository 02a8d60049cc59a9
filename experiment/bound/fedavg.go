package bound

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
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

// Setting is one racer's resolved parameters: its step η, its local steps
// τ, and whether its local steps use the client's full gradient instead of
// one sampled point (`fedavg:batch=full`: no sampling noise, so its drift
// is the heterogeneity's alone, docs/papers.md §8, 002).
type Setting struct {
	Label string
	Spec  experiment.RacerSpec
	Eta   float64
	Tau   int
	Full  bool
}

// Trace is one racer's run: its rounds 1…T (or up to a divergence, Err),
// and what its local iterates visited: the largest distance from x* and
// the largest variance and dissimilarity at them.
type Trace struct {
	Setting
	Rounds []round
	Err    error // a *algorithms.DivergedError, or nil
	Seen
}

// Seen is what a run's local iterates x_i^(t,k) (k = 0…τ, every client)
// visited: the radius max ‖x_i^(t,k) − x*‖, and the largest values there of
// the quantities Thm 2.1 bounds — the variance of client i's single-sample
// gradient at its own iterate, and ‖∇F_i − ∇F‖ at it (docs/papers.md §3.2).
type Seen struct {
	Radius, Sigma2, Zeta float64
}

func (s *Seen) merge(o Seen) {
	s.Radius, s.Sigma2, s.Zeta = math.Max(s.Radius, o.Radius), math.Max(s.Sigma2, o.Sigma2), math.Max(s.Zeta, o.Zeta)
}

// visitor measures Seen at the local iterates.
type visitor struct {
	d     *Data
	vars  []quadratic // per client: variance of its single-sample gradient
	diss  []quadratic // per client: ‖∇F_i − ∇F‖²
	seen  Seen
	sigma bool // measure the variance (a sampling racer)
}

func newVisitor(d *Data, sampling bool) *visitor {
	v := &visitor{d: d, sigma: sampling}
	for i := range d.Clients {
		v.vars = append(v.vars, d.Clients[i].variance())
		v.diss = append(v.diss, d.dissimilarity(i))
	}
	return v
}

// visit records client i's iterate u.
func (v *visitor) visit(i int, u []float64) {
	var r float64
	for a := range u {
		e := u[a] - v.d.Star[a]
		r += e * e
	}
	v.seen.Radius = math.Max(v.seen.Radius, math.Sqrt(r))
	if v.sigma {
		v.seen.Sigma2 = math.Max(v.seen.Sigma2, v.vars[i].at(u))
	}
	v.seen.Zeta = math.Max(v.seen.Zeta, math.Sqrt(math.Max(v.diss[i].at(u), 0)))
}

// fedAvg is Algorithm 1 of paper 002 (docs/papers.md §3.1): every round, each
// client starts from x⁽ᵗ⁾ and runs τ SGD steps x ← x − η g_i(x), g_i one
// stochastic gradient 2(xᵀx_j − y_j)x_j at a point j drawn uniformly from
// its data (batch 1, docs/papers.md §8) — or, with s.Full, its full gradient
// ∇F_i(x); the server adds the uniform average of the updates,
// Δ = (1/M) Σ_i (x_i^(t,τ) − x⁽ᵗ⁾), so x⁽ᵗ⁺¹⁾ = x̄^(t,τ). The shadow average
// x̄^(t,k) = (1/M) Σ_i x_i^(t,k) is measured at every local step (the loop
// runs k = 1..τ: the notes' "k ∈ {0..τ}" is the off-by-one of docs/papers.md
// §7). Client i samples with its own stream, so the run is deterministic
// in the seed. Every local iterate is shown to the visitor.
func fedAvg(ctx context.Context, d *Data, s Setting, rounds int, seed uint64) (Trace, error) {
	tr := Trace{Setting: s}
	run := newFedAvgRun(d, s, seed)
	for t := 1; t <= rounds; t++ {
		if err := ctx.Err(); err != nil {
			return tr, err
		}
		drift := run.round()
		if !finite(run.x) || !(math.Abs(run.sum) < 1e300) {
			tr.Err = diverged(d, s, t)
			return tr, nil
		}
		x := run.x
		tr.Rounds = append(tr.Rounds, round{index: t, x: append([]float64(nil), x...), subopt: d.F(x) - d.FStar,
			avg: run.sum / float64(s.Tau*t), drift: drift, accuracy: d.accuracy(x)})
	}
	tr.Seen = run.vis.seen
	return tr, nil
}

// fedAvgRun is one FedAvg run's state between rounds, kept together so a
// round and a client's local step can each be a method.
type fedAvgRun struct {
	d    *Data
	s    Setting
	vis  *visitor
	rngs []*rand.Rand // client i's sampling stream
	x    []float64    // x⁽ᵗ⁾
	u    [][]float64  // client i's local iterate x_i^(t,k)
	xbar []float64    // the shadow average x̄^(t,k)
	g    []float64    // scratch for a full gradient
	sum  float64      // Σ of F(x̄^(s,k)) − F* so far
}

func newFedAvgRun(d *Data, s Setting, seed uint64) *fedAvgRun {
	m := len(d.Clients)
	run := &fedAvgRun{d: d, s: s, vis: newVisitor(d, !s.Full), rngs: make([]*rand.Rand, m),
		x: make([]float64, dim), u: make([][]float64, m), xbar: make([]float64, dim), g: make([]float64, dim)}
	for i := range run.rngs {
		run.rngs[i] = rand.New(rand.NewPCG(seed, samplingStream+uint64(i)))
	}
	for i := range run.u {
		run.u[i] = make([]float64, dim)
	}
	return run
}

// round runs one round from x⁽ᵗ⁾: τ local steps on every client, the
// shadow average measured after each, and x⁽ᵗ⁺¹⁾ = x̄^(t,τ). It returns
// the round's largest drift.
func (run *fedAvgRun) round() float64 {
	d := run.d
	for i := range run.u {
		copy(run.u[i], run.x)
		run.vis.visit(i, run.u[i])
	}
	drift := 0.0
	for k := 1; k <= run.s.Tau; k++ {
		for i := range d.Clients {
			run.localStep(i)
			run.vis.visit(i, run.u[i])
		}
		drift = math.Max(drift, run.shadowAverage())
		run.sum += d.F(run.xbar) - d.FStar
	}
	copy(run.x, run.xbar)
	return drift
}

// localStep takes client i's step x ← x − η g_i(x), with its full gradient
// or one sampled point's.
func (run *fedAvgRun) localStep(i int) {
	c, u, eta := &run.d.Clients[i], run.u[i], run.s.Eta
	if run.s.Full {
		g := run.g
		c.GradTo(g, u)
		for a := range g {
			u[a] -= eta * g[a]
		}
		return
	}
	j := run.rngs[i].IntN(len(c.Y))
	row := c.X[j*dim : (j+1)*dim]
	r := 2 * eta * (dot(row, u) - c.Y[j])
	for a := range row {
		u[a] -= r * row[a]
	}
}

// shadowAverage sets xbar to (1/M) Σ_i x_i and returns the drift
// (1/M) Σ_i ‖x_i − x̄‖².
func (run *fedAvgRun) shadowAverage() float64 {
	m := len(run.u)
	clear(run.xbar)
	for i := range run.u {
		for a := range run.xbar {
			run.xbar[a] += run.u[i][a] / float64(m)
		}
	}
	var dr float64
	for i := range run.u {
		for a := range run.xbar {
			e := run.u[i][a] - run.xbar[a]
			dr += e * e / float64(m)
		}
	}
	return dr
}

// diverged names the step-size limit a run that blew up in round t broke:
// the single-sample steps' 1/max‖x_j‖², or the full-gradient steps' 2/L.
func diverged(d *Data, s Setting, t int) *algorithms.DivergedError {
	limit, of := 1/d.MaxRowSq, "the single-sample steps"
	if s.Full {
		limit, of = 2/d.L, "the local full-gradient steps"
	}
	return &algorithms.DivergedError{Round: t, Eta: s.Eta, Limit: limit, Of: of}
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

// Terms are the four terms of the right-hand side of Thm 2.1
// (docs/papers.md §3.2) after T rounds of a racer with step η and τ local
// steps, with the constants of d's region:
//
//	D²/(2ητT),  ησ²/M,  4τη²Lσ²,  18τ²η²Lζ².
//
// A full-gradient racer has no sampling noise: its σ² is 0. Only the first
// term falls with T: with a constant η the bound has a floor (the notes'
// closing "= O(1/(τT))" ignores it, docs/papers.md §7, §8).
func Terms(d *Data, eta float64, tau, T, m int, full bool) [4]float64 {
	t, s2 := float64(tau), d.Sigma2
	if full {
		s2 = 0
	}
	return [4]float64{d.D * d.D / (2 * eta * t * float64(T)), eta * s2 / float64(m),
		4 * t * eta * eta * d.L * s2, 18 * t * t * eta * eta * d.L * d.Zeta * d.Zeta}
}

// termNames name the four Terms.
var termNames = [4]string{"D²/(2ητT)", "ησ²/M", "4τη²Lσ²", "18τ²η²Lζ²"}

// Bound is the right-hand side of Thm 2.1, the sum of the Terms.
func Bound(d *Data, eta float64, tau, T, m int, full bool) float64 {
	b := Terms(d, eta, tau, T, m, full)
	return b[0] + b[1] + b[2] + b[3]
}

// BoundFloor is the part of Bound that does not fall with T.
func BoundFloor(d *Data, eta float64, tau, m int, full bool) float64 {
	b := Terms(d, eta, tau, 1, m, full)
	return b[1] + b[2] + b[3]
}

// DriftBound is the client-drift lemma's bound (docs/papers.md §3.2):
// E‖x_i^(t,k) − x̄^(t,k)‖² ≤ 18τ²η²ζ² + 4τη²σ² (σ² = 0 for full gradients).
func DriftBound(d *Data, eta float64, tau int, full bool) float64 {
	t, s2 := float64(tau), d.Sigma2
	if full {
		s2 = 0
	}
	return 18*t*t*eta*eta*d.Zeta*d.Zeta + 4*t*eta*eta*s2
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
	return fmt.Sprintf("L=%.3g, D=%.3g, R=%.3g, σ²=%.3g, ζ=%.3g", d.L, d.D, d.Radius, d.Sigma2, d.Zeta)
}
