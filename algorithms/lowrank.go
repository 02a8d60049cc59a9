package algorithms

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/mat"
)

// FederatedAlgorithm is a racer on the smooth federated ERM of paper 001.
type FederatedAlgorithm interface {
	// Run emits one EpochRound per epoch (at most `rounds`).
	Run(ctx context.Context, p *model.Federated, rounds int, emit func(EpochRound)) error
}

// EpochRound is what a racer of paper 001 reports after one epoch.
type EpochRound struct {
	Index    int
	Theta    []float64 // θ_t
	Subopt   float64   // F(θ_t) − F_* (docs/papers.md §2.1)
	Oracle   float64   // cumulative federated oracle complexity Γ (Definition 1, §2.3)
	CommUp   float64   // cumulative numbers sent by clients to the server
	CommDown float64   // cumulative numbers sent by the server to clients
	GradNorm float64   // ‖∇F(θ_t)‖
	OptDist  float64   // ‖θ_t − θ_opt‖, the distance to the minimiser of F
	// Warning, when set, says why the racer stopped early (FedLRGD's
	// inexact descent when its gradient estimate stopped decreasing).
	Warning string
}

// FedLRGD is Algorithm 1 of paper 001 (docs/papers.md §2.4), τ = 1:
//
//	epoch 1 (server, b = r²): anchors ϑ^(1..r) ~ U[−1,1]^p; for every
//	  coordinate i, G^(i)_{jk} = g_i(x^(0,j); ϑ^(k)) over the first r server
//	  samples (the interpolation nodes), and its pseudo-inverse;
//	epoch 2 (clients, b = rs, upload): client c sends
//	  v^(i,c) = (Σ_j [g_i(x^(c,j); ϑ^(1..r))]) (G^(i))⁺, one p-vector now;
//	epochs 3..r+1 (upload only): the remaining r − 1 p-vectors;
//	then S inexact GD steps at the server, θ ← Π(θ − (1/L1) F̂(θ)) with
//	  F̂_i(θ) = (1/n) Σ_k g_i(x^(0,k); θ)(1 + Σ_c v^(i,c)_k), r gradients each.
//
// The paper's last epoch (b = rS) is emitted as S server epochs of b = r so
// the suboptimality can be drawn against the oracle complexity; the total
// Γ = r² + rs + rS + φmr is the paper's. Server samples beyond the first r
// (the server holds a fixed number R ≥ r, so that racers of different
// ranks share one objective) are weighted at the server like a client's,
// costing (R − r)r gradients in epoch 1 and no upload; with R = r the
// costs are exactly the paper's.
//
// Π projects onto the parameter space of the problem ([−1,1]^p in the
// paper's Appendix A, §2.8): with a small r, F̂ need not be the gradient of
// a convex function and unprojected iterates can run away.
//
// The matrices G^(i) are badly conditioned for smooth losses (§8), so they
// are inverted by truncated SVD: singular values below Tol times the
// largest are dropped. §8 suggests 1e-10; but a client row that is not in
// the span of the server rows (the loss is only approximately of rank r)
// has its residual amplified by 1/s_k along every kept direction, so a cut
// near machine precision turns a small approximation error into a large
// gradient error — the defect behind the poor plateaus of r = 10–40.
// Measured on the lowrank preset (seeds 1–5, geometric means of the final
// suboptimality), a cut of 1e-4 gives 6.3e-6, 6.3e-7, 3.1e-8 for r = 10,
// 20, 40 against 3.9e-5, 2.8e-5, 7.3e-7 at 1e-10, and leaves r = 3, 5 as
// they were; 1e-3 helps r = 10, 20 a little more but hurts r = 3, 5, 40
// (DefaultSVDTol). A loss of exactly rank r with ill-conditioned G^(i) needs
// a smaller Tol to be interpolated exactly.
//
// When the rank is too small for the loss, F̂ is a poor approximation of ∇F
// (relative error above 1 for r = 3, 5 on the preset) and the descent heads
// for the wrong point; that is inherent to the method, not a defect (the
// paper's r is astronomically large, §7). The server cannot evaluate F, but
// it can watch its own estimate: the inexact descent stops as soon as the
// norm of its projected gradient estimate ‖(θ − Π(θ − F̂(θ)/L1))·L1‖ grows
// from one step to the next — on a convergent descent it shrinks
// geometrically — returns the previous iterate, and says so in the last
// epoch's Warning. This cannot see a descent that converges cleanly to a
// wrong fixed point of F̂ (F̂ is not the gradient of anything), so a too
// small r can still end above its start: on the preset it happens for
// r = 3 at seed 4 (0.030 from 0.021). What does see it is the server's
// interpolation check on its R − r spare samples before the descent
// (InterpolationCheck: relative errors above InterpolationAlarm flag
// exactly the failing runs of the preset's seeds 1–5); the lowrank family
// reports it per racer and warns when a racer ends above its start.
type FedLRGD struct {
	Rank  int     // r, interpolation nodes = approximate rank
	Iters int     // S, inexact GD iterations (200)
	Phi   float64 // φ, cost of one upload relative to one gradient (100)
	Seed  uint64  // draws the anchors
	// Tol is the relative cut-off of the truncated SVD of G^(i); 0 means
	// DefaultSVDTol.
	Tol float64
	// Lean leaves out what a sweep does not read: the gradient norm
	// (GradNorm is NaN) and the re-evaluation of F while θ stays at θ⁰
	// (epochs 1…r+1 report the first epoch's value, which is the same),
	// and evaluates F by the faster model.Federated.LeanValue.
	Lean bool
}

// DefaultSVDTol is FedLRGD's default relative SVD cut-off (see FedLRGD).
const DefaultSVDTol = 1e-4

// lrgd is FedLRGD's state after the weight epochs: the interpolation nodes
// and the total weights 1 + Σ_c v^(i,c)_k of every coordinate i and node k.
type lrgd struct {
	nodes    []float64
	total    [][]float64
	cond     float64 // largest condition number of the G^(i), kept part
	serverN  int
	clientsS int // the largest client sample count s
}

// anchors draws the r parameter vectors ϑ^(k) ~ U[−1,1]^p (§8) from the
// seed; they depend on the seed and r only, so a racer's run does not
// depend on which other racers share the data.
func (a FedLRGD) anchors(p int) [][]float64 {
	rng := rand.New(rand.NewPCG(a.Seed, 1<<43+uint64(a.Rank)))
	out := make([][]float64, a.Rank)
	for k := range out {
		out[k] = make([]float64, p)
		for i := range out[k] {
			out[k][i] = 2*rng.Float64() - 1
		}
	}
	return out
}

// prepare runs epochs 1 and 2 (and the weights of any extra server samples).
func (a FedLRGD) prepare(ctx context.Context, p *model.Federated) (*lrgd, error) {
	pp, q, r := p.Loss.Params(), p.Q, a.Rank
	st := &lrgd{serverN: len(p.Server) / q}
	if r < 1 || r > st.serverN {
		return nil, fmt.Errorf("%w: rank r=%d must lie in 1..%d (server samples)", ErrBadParams, r, st.serverN)
	}
	anchors := a.anchors(pp)
	st.nodes = p.Server[:r*q]
	pinv, err := a.pseudoInverses(p, st, anchors)
	if err != nil {
		return nil, err
	}
	st.total = make([][]float64, pp)
	for i := range st.total {
		st.total[i] = make([]float64, r)
		for k := range st.total[i] {
			st.total[i][k] = 1 // the node itself
		}
	}
	wt := newWeigher(p, anchors, pinv)
	if extra := p.Server[r*q:]; len(extra) > 0 {
		wt.addTo(st.total, extra)
	}
	for _, c := range p.Clients {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		wt.addTo(st.total, c)
		st.clientsS = max(st.clientsS, len(c)/q)
	}
	return st, nil
}

// pseudoInverses returns G^(i)⁺ for every coordinate i, G^(i)_{jk} =
// g_i(x^(0,j); ϑ^(k)) at the nodes and anchors, and raises st.cond to the
// largest condition number of their kept parts.
func (a FedLRGD) pseudoInverses(p *model.Federated, st *lrgd, anchors [][]float64) ([]*mat.Dense, error) {
	pp, q, r := p.Loss.Params(), p.Q, a.Rank
	g := make([]float64, pp)
	gmat := make([]*mat.Dense, pp)
	for i := range gmat {
		gmat[i] = mat.NewDense(r, r, nil)
	}
	for j := 0; j < r; j++ {
		for k := 0; k < r; k++ {
			p.Loss.GradTo(g, st.nodes[j*q:(j+1)*q], anchors[k])
			for i := range gmat {
				gmat[i].Set(j, k, g[i])
			}
		}
	}
	pinv := make([]*mat.Dense, pp)
	for i := range pinv {
		var err error
		if pinv[i], st.cond, err = pseudoInverse(gmat[i], st.cond, a.tol()); err != nil {
			return nil, fmt.Errorf("FedLRGD r=%d: coordinate %d: %w", r, i, err)
		}
	}
	return pinv, nil
}

// weigher computes the interpolation weights of blocks of samples.
type weigher struct {
	p       *model.Federated
	anchors [][]float64
	pinv    []*mat.Dense
	g       []float64
	sum     [][]float64
}

func newWeigher(p *model.Federated, anchors [][]float64, pinv []*mat.Dense) *weigher {
	sum := make([][]float64, len(pinv))
	for i := range sum {
		sum[i] = make([]float64, len(anchors))
	}
	return &weigher{p: p, anchors: anchors, pinv: pinv, g: make([]float64, p.Loss.Params()), sum: sum}
}

// addTo adds v^(i) = (Σ_j [g_i(x_j; ϑ^(1..r))]) G^(i)⁺ of a block of
// samples (rows of p.Q numbers) to total.
func (wt *weigher) addTo(total [][]float64, rows []float64) {
	q, r := wt.p.Q, len(wt.anchors)
	for i := range wt.sum {
		clear(wt.sum[i])
	}
	for j := 0; j+q <= len(rows); j += q {
		for k := 0; k < r; k++ {
			wt.p.Loss.GradTo(wt.g, rows[j:j+q], wt.anchors[k])
			for i := range wt.sum {
				wt.sum[i][k] += wt.g[i]
			}
		}
	}
	for i := range wt.sum {
		for k := 0; k < r; k++ {
			var v float64
			for j := 0; j < r; j++ {
				v += wt.sum[i][j] * wt.pinv[i].At(j, k)
			}
			total[i][k] += v
		}
	}
}

func (a FedLRGD) tol() float64 {
	if a.Tol > 0 {
		return a.Tol
	}
	return DefaultSVDTol
}

// gradTo sets dst = F̂(θ) = (1/n) Σ_k g(x^(0,k); θ) ⊙ total_k.
func (st *lrgd) gradTo(dst, theta, g []float64, p *model.Federated) {
	q := p.Q
	clear(dst)
	for k := 0; k*q < len(st.nodes); k++ {
		p.Loss.GradTo(g, st.nodes[k*q:(k+1)*q], theta)
		for i := range dst {
			dst[i] += g[i] * st.total[i][k]
		}
	}
	for i := range dst {
		dst[i] /= float64(p.N)
	}
}

// ApproxGrad returns F̂(θ), the approximate gradient FedLRGD's server
// descends on, and the largest condition number of the G^(i).
func (a FedLRGD) ApproxGrad(p *model.Federated, theta []float64) ([]float64, float64, error) {
	st, err := a.prepare(context.Background(), p)
	if err != nil {
		return nil, 0, err
	}
	dst := make([]float64, p.Loss.Params())
	st.gradTo(dst, theta, make([]float64, len(dst)), p)
	return dst, st.cond, nil
}

// Run implements FederatedAlgorithm.
func (a FedLRGD) Run(ctx context.Context, p *model.Federated, rounds int, emit func(EpochRound)) error {
	if a.Iters < 1 || !(a.Phi >= 0) {
		return fmt.Errorf("%w: S=%d must be ≥ 1 and φ=%v ≥ 0", ErrBadParams, a.Iters, a.Phi)
	}
	st, err := a.prepare(ctx, p)
	if err != nil {
		return err
	}
	pp, r := p.Loss.Params(), a.Rank
	m := float64(len(p.Clients))
	ep := &epochs{ctx: ctx, p: p, rounds: rounds, emit: emit, lean: a.Lean,
		theta: make([]float64, pp), g: make([]float64, pp)} // θ^(0) = 0
	// Epoch 1 (server): r² gradients for G, (R − r)r for extra server samples.
	if !ep.record(float64(r*r+(st.serverN-r)*r), 0, 0) {
		return ctx.Err()
	}
	// Epoch 2: the server broadcasts anchors and G⁺ (rp + pr² numbers per
	// client); clients compute r·s gradients and upload one p-vector.
	if !ep.record(float64(r*st.clientsS)+a.Phi*m, m*float64(pp), m*float64(r*pp+pp*r*r)) {
		return ctx.Err()
	}
	for e := 3; e <= r+1; e++ { // uploads of the remaining r − 1 p-vectors
		if !ep.record(a.Phi*m, m*float64(pp), 0) {
			return ctx.Err()
		}
	}
	if err := a.descend(ep, st); err != nil {
		return err
	}
	return ctx.Err()
}

// descend is the server's inexact projected gradient descent on F̂, one
// epoch of r gradients per step, which stops early (with a warning) when
// its gradient estimate grows.
func (a FedLRGD) descend(ep *epochs, st *lrgd) error {
	p, theta, r := ep.p, ep.theta, a.Rank
	pp := len(theta)
	fhat := make([]float64, pp)
	lr := 1 / p.Loss.Smoothness()
	next, last := make([]float64, pp), make([]float64, pp)
	prev := math.Inf(1) // ‖projected F̂‖ at the previous iterate, last
	for it := 0; it < a.Iters; it++ {
		st.gradTo(fhat, theta, ep.g, p)
		var moved float64
		for i := range theta {
			next[i] = p.Project(theta[i] - lr*fhat[i])
			moved += (next[i] - theta[i]) * (next[i] - theta[i])
		}
		est := math.Sqrt(moved) / lr // ‖F̂(θ)‖ inside the box
		if !finite(next) {
			return &DivergedError{Round: ep.t + 1, Reason: fmt.Sprintf(
				"the approximate gradient is not finite (cond G⁽ⁱ⁾ up to %.3g)", st.cond)}
		}
		if est > prev*(1+1e-9) {
			// The estimate grew: return the previous iterate, where it was
			// smallest (this epoch's r gradients found that out).
			copy(theta, last)
			ep.warning = fmt.Sprintf("inexact descent stopped after %d of S=%d steps and returned step %d: its gradient estimate ‖F̂‖ grew "+
				"from %.3g to %.3g, so F̂ no longer approximates ∇F well enough to descend (rank r=%d too small for this loss)",
				it, a.Iters, it-1, prev, est, r)
			ep.record(float64(r), 0, 0)
			return nil
		}
		prev = est
		copy(last, theta)
		copy(theta, next)
		if !ep.record(float64(r), 0, 0) {
			return nil
		}
	}
	return nil
}

// epochs counts a FedLRGD run's epochs and their cumulative costs, and
// emits one EpochRound per epoch at the current θ.
type epochs struct {
	ctx              context.Context
	p                *model.Federated
	rounds           int
	emit             func(EpochRound)
	theta, g         []float64
	t                int
	oracle, up, down float64
	warning          string
	lean             bool      // no gradient norm; F at θ⁰ computed once
	at               []float64 // the θ of value, when lean
	value            float64
}

// record adds one epoch's gradients b and numbers uploaded and downloaded,
// emits it, and reports whether the run goes on.
func (ep *epochs) record(b, upN, downN float64) bool {
	ep.t++
	ep.oracle += b
	ep.up += upN
	ep.down += downN
	if ep.ctx.Err() != nil {
		return false
	}
	p, theta := ep.p, ep.theta
	gn := math.NaN()
	if !ep.lean {
		ep.value, gn = p.Value(theta), gradNorm(p, theta, ep.g)
	} else if ep.at == nil || !slices.Equal(ep.at, theta) {
		ep.value, ep.at = p.LeanValue(theta), append(ep.at[:0], theta...)
	}
	ep.emit(EpochRound{Index: ep.t, Theta: append([]float64(nil), theta...), Subopt: ep.value - p.FStar,
		Oracle: ep.oracle, CommUp: ep.up, CommDown: ep.down, GradNorm: gn,
		OptDist: model.Distance(theta, p.Optimum), Warning: ep.warning})
	return ep.t < ep.rounds
}

// pseudoInverse returns G⁺ by SVD, dropping singular values below tol
// times the largest, and the larger of cond and G's condition number on
// the kept part.
func pseudoInverse(g *mat.Dense, cond, tol float64) (*mat.Dense, float64, error) {
	r, _ := g.Dims()
	var svd mat.SVD
	if !svd.Factorize(g, mat.SVDFull) {
		return nil, cond, fmt.Errorf("SVD failed")
	}
	sv := svd.Values(nil)
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	out := mat.NewDense(r, r, nil)
	if len(sv) == 0 || sv[0] == 0 {
		return out, cond, nil
	}
	for k, s := range sv {
		if s <= tol*sv[0] {
			break
		}
		cond = math.Max(cond, sv[0]/s)
		// G⁺ += v_k u_kᵀ / s_k
		for a := 0; a < r; a++ {
			va := v.At(a, k) / s
			for b := 0; b < r; b++ {
				out.Set(a, b, out.At(a, b)+va*u.At(b, k))
			}
		}
	}
	return out, cond, nil
}

func gradNorm(p *model.Federated, theta, scratch []float64) float64 {
	p.GradTo(scratch, theta)
	return model.Norm(scratch)
}

// LocalSGD is the FedAvg baseline of paper 001 (docs/papers.md §2.6, §8): every
// epoch all clients (τ = 1) start from θ, run Steps SGD steps with batch 1
// and step 1/L1 on their own samples, and the server averages with weights
// s_c/Σs. Cost per epoch: b + φm oracle units, p numbers up and down per
// client. The server's own samples are not used (they are part of F).
type LocalSGD struct {
	Steps int     // b (10)
	Phi   float64 // φ
	Seed  uint64  // seeds the clients' sample draws
	Lean  bool    // no gradient norm (GradNorm is NaN), F by LeanValue: what a sweep reads
}

// Run implements FederatedAlgorithm.
func (a LocalSGD) Run(ctx context.Context, p *model.Federated, rounds int, emit func(EpochRound)) error {
	if a.Steps < 1 || !(a.Phi >= 0) {
		return fmt.Errorf("%w: b=%d must be ≥ 1 and φ=%v ≥ 0", ErrBadParams, a.Steps, a.Phi)
	}
	pp, q := p.Loss.Params(), p.Q
	m := float64(len(p.Clients))
	theta, next, u, g := make([]float64, pp), make([]float64, pp), make([]float64, pp), make([]float64, pp)
	rngs := make([]*rand.Rand, len(p.Clients))
	total := 0
	for c := range rngs {
		rngs[c] = rand.New(rand.NewPCG(a.Seed, minibatchStream+uint64(c)))
		total += len(p.Clients[c]) / q
	}
	lr := 1 / p.Loss.Smoothness()
	var oracle, up, down float64
	for t := 1; t <= rounds; t++ {
		clear(next)
		for c, rows := range p.Clients {
			if err := ctx.Err(); err != nil {
				return err
			}
			n := len(rows) / q
			copy(u, theta)
			for s := 0; s < a.Steps; s++ {
				j := rngs[c].IntN(n)
				p.Loss.GradTo(g, rows[j*q:(j+1)*q], u)
				for k := range u {
					u[k] = p.Project(u[k] - lr*g[k])
				}
			}
			axpy(float64(n)/float64(total), u, next)
		}
		copy(theta, next)
		if !finite(theta) {
			return &DivergedError{Round: t, Eta: lr, Limit: math.NaN()}
		}
		oracle += float64(a.Steps) + a.Phi*m
		up += m * float64(pp)
		down += m * float64(pp)
		gn, value := math.NaN(), 0.0
		if a.Lean {
			value = p.LeanValue(theta)
		} else {
			value, gn = p.Value(theta), gradNorm(p, theta, g)
		}
		emit(EpochRound{Index: t, Theta: append([]float64(nil), theta...), Subopt: value - p.FStar,
			Oracle: oracle, CommUp: up, CommDown: down, GradNorm: gn,
			OptDist: model.Distance(theta, p.Optimum)})
	}
	return nil
}
