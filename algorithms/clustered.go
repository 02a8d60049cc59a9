package algorithms

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/fedscope/fedscope/internal/parallel"
	"github.com/fedscope/fedscope/model"
)

// MixtureAlgorithm is a clustered racer on a mixed-regression federation: it
// runs `rounds` communication rounds and emits one ClusterRound per round
// (docs/papers.md §5, paper 004).
type MixtureAlgorithm interface {
	Run(ctx context.Context, p *model.Mixture, rounds int, emit func(ClusterRound)) error
}

// ClusterRound is what a clustered racer reports after one round.
type ClusterRound struct {
	Index int
	// Phase is 1 (FedMD) or 2 (FedX + clustering).
	Phase int
	// Centres are the k cluster models, k×d row-major.
	Centres []float64
	// Distance is d(θ_t, θ*) = min_π max_j ‖θ_{π(j),t} − θ*_j‖.
	Distance float64
	// Misclustered is the fraction of clients whose label, after the best
	// permutation, differs from the truth; NaN in Phase 1.
	Misclustered float64
	// ClientError is Σ w_i ‖θ_{z_i,t} − θ*_{z*_i}‖, the error of the model
	// each client uses (docs/papers.md §5.4); NaN in Phase 1.
	ClientError float64
	// Assign is the cluster each client picked this round, relabelled by the
	// best permutation so that it compares with the true labels; nil in
	// Phase 1.
	Assign []int
	// Warning, when set, says that the round left the regime the paper
	// covers: at the last Phase-1 round, anchors that did not form k groups
	// under the Δ/2 rule or a Phase-1 result above its target εΔ; at the last
	// round, a Phase 2 that has not converged.
	Warning string
}

// ClusterLocal is the local refinement of Phase 2 (docs/papers.md §5.4 step 3):
// s full-batch gradient steps with step η on the picked cluster's model
// (FedAvg-based), or the exact proximal step with parameter η (FedProx-based).
type ClusterLocal struct {
	Prox  bool
	Eta   float64
	Steps int // s, FedAvg only
}

// Label names the local update as in the legend: "FedAvg s=5" or "FedProx".
func (l ClusterLocal) Label() string {
	if l.Prox {
		return "FedProx"
	}
	return fmt.Sprintf("FedAvg s=%d", l.Steps)
}

func (l ClusterLocal) validate() error {
	if !(l.Eta > 0) || math.IsInf(l.Eta, 0) {
		return fmt.Errorf("%w: step size η=%v must be a finite number > 0", ErrBadParams, l.Eta)
	}
	if !l.Prox && l.Steps < 1 {
		return fmt.Errorf("%w: local steps s=%d must be at least 1", ErrBadParams, l.Steps)
	}
	return nil
}

// TwoPhase is the two-phase algorithm of paper 004: Phase 1 FedMD (T rounds,
// emitted with Phase 1) gives coarse centres, then Phase 2 FedX + clustering
// refines them for the remaining rounds (docs/papers.md §5.2–5.4). Every Phase-1
// round counts as one communication round of the stream; its Theta and
// ClusterDist are those of the anchors clustered as at the end of Phase 1.
type TwoPhase struct {
	Phase1 FedMD
	Local  ClusterLocal
}

// Run implements MixtureAlgorithm.
func (a TwoPhase) Run(ctx context.Context, p *model.Mixture, rounds int, emit func(ClusterRound)) error {
	if err := a.Local.validate(); err != nil {
		return err
	}
	ph, err := RunPhase1(ctx, a.Phase1, p)
	if err != nil {
		return err
	}
	t := 1
	for ; t <= rounds && t <= a.Phase1.Rounds; t++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		r := ph.Rounds[t-1]
		r.Centres = append([]float64(nil), r.Centres...)
		emit(r)
	}
	if t > rounds {
		return nil
	}
	return runPhase2(ctx, p, a.Local, ph.Centres, t, rounds, emit)
}

// phase1Warning explains, at the end of Phase 1, what went outside the
// paper's guarantees (docs/papers.md §5.2, Thm 1): anchors that did not form k
// groups under the Δ/2 rule (so groups were dropped, or k-means split them),
// a result above the target d(θ̂, θ*) ≤ εΔ (Δ the true separation, as
// the reference line of the distance chart), with how many anchors were
// still moving (σ̂ > εΔ: Phase 1 had too few rounds) or none (they stopped
// short). "" when neither happened. (An anchor farther than εΔ from its
// cluster's truth, Phase1.WorstAnchor, is the facts' warning.)
func phase1Warning(p *model.Mixture, f FedMD, g AnchorGroups, dist float64, moving int) string {
	var parts []string
	if target := f.Epsilon * p.Fed.Delta; dist > target {
		why := "every anchor had stopped (σ̂ ≤ εΔ)"
		if moving > 0 {
			// The proof of Thm 1 takes T = (16β²/α²) log(βR/(εΔ)) rounds.
			need := 16 * f.Beta * f.Beta / (f.Alpha * f.Alpha) * math.Log(f.Beta*p.Fed.Radius/(f.Epsilon*f.Delta))
			why = fmt.Sprintf("%d of the %d anchors were still moving, so phase1_rounds=%d is too few (the proof of Thm 1 takes (16β²/α²) log(βR/(εΔ)) = %.0f)",
				moving, g.Anchors, f.Rounds, math.Ceil(need))
		}
		parts = append(parts, fmt.Sprintf("Phase 1 ended at d(θ̂, θ*) = %.3g, above its target εΔ = %.3g; %s", dist, target, why))
	}
	switch {
	case g.KMeans:
		parts = append(parts, fmt.Sprintf("the %d anchors formed %d group(s) under the Δ/2 rule (Δ/2 = %.3g), not k = %d, so k-means split them",
			g.Anchors, g.Components, f.Delta/2, p.K))
	case g.Components > p.K:
		parts = append(parts, fmt.Sprintf("the %d anchors formed %d groups under the Δ/2 rule (Δ/2 = %.3g), not k = %d: the %d smallest (%d anchors) were dropped",
			g.Anchors, g.Components, f.Delta/2, p.K, g.Components-p.K, g.Dropped))
	}
	return strings.Join(parts, "; ")
}

// Starter is implemented by clustered racers that can say which models they
// hold before their first round (round 0 of the tables) and in which phase.
type Starter interface {
	Start(p *model.Mixture) (centres []float64, phase int)
}

// Start implements Starter: every anchor starts at θ_0 = 0 (docs/papers.md §8),
// so the k centres are 0, in Phase 1.
func (a TwoPhase) Start(p *model.Mixture) ([]float64, int) { return make([]float64, p.K*p.Dim), 1 }

// RandomInit is the baseline: Phase 2 alone, from k cluster models drawn
// uniformly on the sphere of radius R (the scale of the truths, docs/papers.md §8),
// so that the value of Phase 1 shows side by side.
type RandomInit struct {
	Local ClusterLocal
	Seed  uint64
}

// randomInitStream is the random stream of the baseline's initial models.
const randomInitStream = 1 << 44

// Run implements MixtureAlgorithm.
func (a RandomInit) Run(ctx context.Context, p *model.Mixture, rounds int, emit func(ClusterRound)) error {
	if err := a.Local.validate(); err != nil {
		return err
	}
	centres, _ := a.Start(p)
	return runPhase2(ctx, p, a.Local, centres, 1, rounds, emit)
}

// Start implements Starter: the k models drawn uniformly on the sphere of
// radius R from the baseline's own stream, in Phase 2.
func (a RandomInit) Start(p *model.Mixture) ([]float64, int) {
	rng := rand.New(rand.NewPCG(a.Seed, randomInitStream))
	d := p.Dim
	centres := make([]float64, p.K*d)
	for j := 0; j < p.K; j++ {
		c := centres[j*d : (j+1)*d]
		unit(c, rng)
		for r := range c {
			c[r] *= p.Fed.Radius
		}
	}
	return centres, 2
}

// Phase2 runs FedX + clustering (docs/papers.md §5.4) from the given centres
// (k×d row-major) for `rounds` rounds, numbered from 1, emitting Phase 2
// rounds. It is the whole of RandomInit and the second half of TwoPhase.
func Phase2(ctx context.Context, p *model.Mixture, local ClusterLocal, centres []float64, rounds int, emit func(ClusterRound)) error {
	if err := local.validate(); err != nil {
		return err
	}
	if len(centres) != p.K*p.Dim {
		panic("algorithms: Phase2: centres are not k×d")
	}
	return runPhase2(ctx, p, local, append([]float64(nil), centres...), 1, rounds, emit)
}

// clientBlock is how many clients one parallel task handles in Phase 2.
const clientBlock = 64

// runPhase2 iterates rounds first..last of Phase 2 on centres (updated in
// place). One round:
//  1. every client picks z_i = argmin_j ‖y_i − X_i θ_j‖ (ties: lowest j);
//  2. it refines θ_{z_i} locally (s GD steps or the proximal step), the other
//     blocks unchanged;
//  3. the server sets θ_t = Σ_i (n_i/N) θ_{i,t} over all clients, i.e.
//     θ_{j,t} = θ_{j,t−1} + Σ_{i: z_i = j} (n_i/N)(u_i − θ_{j,t−1}).
//
// Clients run in parallel blocks writing only their own u_i and z_i; the
// server sums in client order, so the result does not depend on scheduling.
func runPhase2(ctx context.Context, p *model.Mixture, local ClusterLocal, centres []float64, first, last int,
	emit func(ClusterRound)) error {
	ph := newPhase2(p, local)
	d, k := p.Dim, p.K
	bound := explosion * (1 + p.Fed.Radius)
	var step, prevStep float64 // max_j ‖θ_{j,t} − θ_{j,t−1}‖ of this round and the one before
	for t := first; t <= last; t++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		ph.localUpdates(ctx, centres)
		if err := ctx.Err(); err != nil {
			return err
		}
		next := ph.aggregate(centres)
		prevStep, step = step, 0
		for j := 0; j < k; j++ {
			step = math.Max(step, model.Distance(next[j*d:(j+1)*d], centres[j*d:(j+1)*d]))
		}
		copy(centres, next)
		sc := p.Score(next, ph.assign)
		if !finite(next) || !(sc.Distance < bound) {
			e := &DivergedError{Round: t, Eta: local.Eta, Limit: math.NaN()}
			if !local.Prox {
				e.Limit, e.Of = 2/p.Curvature(), "the local Hessians"
			}
			return e
		}
		r := ClusterRound{Index: t, Phase: 2, Centres: next, Distance: sc.Distance, Misclustered: sc.Misclustered,
			Assign: sc.Assign, ClientError: sc.ClientError}
		if t == last {
			r.Warning = convergenceWarning(p, local, t-first+1, last, step, prevStep, sc.Distance)
		}
		emit(r)
	}
	return nil
}

// phase2 is the clients' side of Phase 2: their local models u_i, their
// cluster picks z_i, one workspace per block of clients, and with FedProx
// local updates every client's factored proximal step.
type phase2 struct {
	p       *model.Mixture
	local   ClusterLocal
	u       []float64 // m×d
	assign  []int
	ws      []*model.Workspace
	factors []model.ProxFactor
}

func newPhase2(p *model.Mixture, local ClusterLocal) *phase2 {
	m := len(p.Clients)
	ph := &phase2{p: p, local: local, u: make([]float64, m*p.Dim), assign: make([]int, m),
		ws: make([]*model.Workspace, (m+clientBlock-1)/clientBlock)}
	for b := range ph.ws {
		ph.ws[b] = p.NewWorkspace()
	}
	if local.Prox {
		ph.factors = make([]model.ProxFactor, m)
		parallel.For(m, func(i int) { ph.factors[i] = model.NewProxFactor(&p.Clients[i], local.Eta) })
	}
	return ph
}

// localUpdates is steps 1 and 2 of a round for every client, from centres.
func (ph *phase2) localUpdates(ctx context.Context, centres []float64) {
	p := ph.p
	d, k, m := p.Dim, p.K, len(p.Clients)
	parallel.For(len(ph.ws), func(b int) {
		if ctx.Err() != nil {
			return
		}
		for i := b * clientBlock; i < min(m, (b+1)*clientBlock); i++ {
			s := &p.Clients[i]
			z, best := 0, math.Inf(1)
			for j := 0; j < k; j++ {
				if r := s.ResidualSq(centres[j*d : (j+1)*d]); r < best {
					z, best = j, r
				}
			}
			ph.assign[i] = z
			ui := ph.u[i*d : (i+1)*d]
			copy(ui, centres[z*d:(z+1)*d])
			if ph.local.Prox {
				ph.factors[i].Apply(ui, ph.ws[b])
			} else {
				s.GDSteps(ui, ph.local.Eta, ph.local.Steps, ph.ws[b])
			}
		}
	})
}

// aggregate is step 3: the next centres from the clients' local models,
// summed in client order.
func (ph *phase2) aggregate(centres []float64) []float64 {
	d := ph.p.Dim
	next := append([]float64(nil), centres...)
	for i, z := range ph.assign {
		w := ph.p.Weights[i]
		ui, cz, nz := ph.u[i*d:(i+1)*d], centres[z*d:(z+1)*d], next[z*d:(z+1)*d]
		for r := range nz {
			nz[r] += w * (ui[r] - cz[r])
		}
	}
	return next
}

// settled is how close to its limit a run must be, relative to its distance
// d(θ, θ*), to count as converged.
const settled = 0.1

// convergenceWarning says, at the last round, when Phase 2 has not
// converged, or has settled far from the truth. Near its limit the iteration
// is the affine map of Phase 2 at settled labels, contracting by q per round:
// the slowest cluster at the true labels (model.Mixture.Phase2AtTruth), or
// the ratio of the last two moves when that is smaller (the slowest mode is
// then not what is left). The remaining distance to the limit is about
// step·q/(1 − q), step the last round's largest move. When that exceeds 10 %
// of d(θ, θ*) the run was stopped early (docs/papers.md §5.4, Thm 3:
// T' = Θ(κ/(sηρ) log(Δ/ν)) rounds), and the warning says how many more rounds
// would bring it within 1 %. When it has settled more than twice as far from
// the truth as the fixed point at the true labels, the clustering is stuck
// in a wrong local optimum (Thm 2 needs a start within εΔ). "" when it has
// settled near that fixed point (within 10 %, or with little left to move),
// or when q is unknown.
func convergenceWarning(p *model.Mixture, local ClusterLocal, done, last int, step, prevStep, dist float64) string {
	at, ok := p.Phase2AtTruth(local.Eta, local.Steps, local.Prox)
	q := at.Rate
	if !ok || !(q < 1) || !(q > 0) || !(dist > 0) || dist <= (1+settled)*at.Floor {
		return ""
	}
	if ratio := step / prevStep; ratio > 0 && ratio < q {
		q = ratio
	}
	remaining := step * q / (1 - q)
	if remaining <= settled*dist {
		if dist > stuck*at.Floor {
			return fmt.Sprintf("Phase 2 settled at d(θ, θ*) = %.3g, %.0f× the fixed point at the true labels (%.2g): "+
				"the clustering is stuck in a wrong local optimum (Thm 2 needs a start within εΔ of the truth)", dist, dist/at.Floor, at.Floor)
		}
		return ""
	}
	more := int(math.Ceil(math.Log(remaining/(0.01*dist)) / -math.Log(q)))
	return fmt.Sprintf("Phase 2 has not converged after %d rounds: the models still move %.2g per round and contract by about %.4g per round, "+
		"so they may move about %.2g more against d(θ, θ*) = %.2g now (the fixed point at the true labels is at %.2g); "+
		"about %d more rounds would settle them (rounds=%d)",
		done, step, q, remaining, dist, at.Floor, more, last+more)
}

// stuck is how many times farther from the truth than the fixed point at
// the true labels a settled Phase 2 must end to count as a wrong clustering.
const stuck = 2
