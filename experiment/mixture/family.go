// Package mixture is the family of paper 004 (`004_af561a7097fa151a.txt`,
// PAPERS.md §5): clustered federated learning for mixed regression — FedMD
// (Phase 1) then FedX + clustering (Phase 2), raced against Phase 2 from a
// random start, with the clients' cluster assignments drawn live.
package mixture

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// Family is paper 004's family; its zero value is ready to use.
type Family struct{}

// Name implements experiment.Family.
func (Family) Name() string { return "mixture" }

// Paper implements experiment.Family.
func (Family) Paper() string { return "004_af561a7097fa151a.txt (PAPERS.md §5)" }

// Config is the family's part of a scenario: the data and Phase 1, and the
// step size η and local steps s of Phase 2. Scenario.Rounds counts the
// rounds of both phases.
type Config struct {
	Spec
	Eta        float64
	LocalSteps int
}

func cfg(sc experiment.Scenario) Config { return experiment.Config[Config](sc) }

const (
	maxClients = 10_000
	maxDim     = 2_000
	maxSamples = 1_000_000
	maxSteps   = 1_000
)

// Ladders of the live keys.
var (
	etaLadder   = experiment.Decades([]float64{1, 1.5, 2, 3, 5, 7}, -4, 2)
	stepsLadder = []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200}
	// deltaLadder holds the separations h/H move through.
	deltaLadder = []float64{0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8}
)

// Presets implements experiment.Family.
func (Family) Presets() []experiment.Preset {
	return []experiment.Preset{{Name: "mixture",
		Summary: "clustered FL for mixed regression: FedMD + FedAvg against a random start, live cluster assignments (paper 004)",
		Build:   mixture}}
}

// mixture is the preset of PAPERS.md §8 (004): d = 10, k = 3, Σ_j = I, R = 2,
// Δ ≥ 1.5, σ = 0.5, p uniform; Phase 1 with n_H = 12 anchors, l = 40,
// m = 4000 fresh 2-point clients, T = 12, T1 = 48, T2 = 20, ε = 0.1; Phase 2
// on M = 1000 heavy-tailed clients with FedAvg s = 5, η = 0.03, T' = 150.
func mixture() experiment.Scenario {
	return experiment.Scenario{
		Family: Family{},
		Rounds: 12 + 150,
		Seed:   1,
		Config: Config{
			Spec: Spec{Clients: 1000, Dim: 10, K: 3, Noise: 0.5, Radius: 2, MinSep: 1.5, MaxSamples: 300,
				Anchors: 12, Pairs: 40, Pool: 4000, Phase1Rounds: 12, OIIters: 48, PowerIters: 20, Epsilon: 0.1},
			Eta:        0.03,
			LocalSteps: 5,
		},
	}
}

// Validate implements experiment.Family.
func (Family) Validate(sc experiment.Scenario) error {
	c := cfg(sc)
	if err := c.data().Validate(); err != nil {
		return &experiment.InputError{Msg: err.Error()}
	}
	bad := experiment.Errorf
	switch {
	case c.Anchors < c.K:
		return bad("anchors=%d: need at least k=%d anchors", c.Anchors, c.K)
	case c.Pairs < 1 || c.Pool < 1 || c.Phase1Rounds < 1 || c.PowerIters < 1:
		return bad("anchor_pairs, pool, phase1_rounds and power_iters must be ≥ 1")
	case c.OIIters < 2 || c.OIIters%2 != 0:
		return bad("oi_iters=%d: must be even and ≥ 2 (Algorithm 3 ends on a QR step)", c.OIIters)
	case !(c.Epsilon > 0 && c.Epsilon < 0.25):
		return bad("epsilon=%v: must lie in (0, 0.25)", c.Epsilon)
	case !(c.DeltaAssumed >= 0):
		return bad("delta_assumed=%v: must be ≥ 0 (0 = the true Δ)", c.DeltaAssumed)
	case !(c.Eta > 0):
		return bad("eta=%v: must be > 0", c.Eta)
	case c.LocalSteps < 1:
		return bad("local_steps=%d: must be ≥ 1", c.LocalSteps)
	}
	return nil
}

// Help implements experiment.Family.
func (Family) Help(experiment.Scenario) string {
	return "Rows are clients grouped by true cluster, columns rounds; solid bands = correct clusters. " +
		"Right: the cluster distance d(θ, θ*) (dashed: the target εΔ) and the misclustered fraction, the phase boundary marked."
}

// trueSeparation returns the separation Δ of the scenario's truths, drawn
// without generating the clients (cheap: k·d numbers).
func trueSeparation(sc experiment.Scenario) (float64, error) {
	_, delta, err := cfg(sc).data().Truths(sc.Seed)
	if err != nil {
		return math.NaN(), &experiment.InputError{Msg: err.Error()}
	}
	return delta, nil
}

// stepSeparation moves Δ down or up its ladder, starting from the drawn
// separation when the scenario keeps it.
func stepSeparation(sc experiment.Scenario, up bool) (experiment.Scenario, error) {
	cur := cfg(sc).Delta
	if cur == 0 {
		var err error
		if cur, err = trueSeparation(sc); err != nil {
			return sc, err
		}
	}
	next := experiment.StepLadder(deltaLadder, cur, up)
	if next == cur {
		return sc, experiment.Errorf("Δ=%.3g is already at the end of the ladder", cur)
	}
	experiment.Update(&sc, func(c *Config) { c.Delta = next })
	return sc, nil
}

// stepLocalSteps moves s along its ladder; FedProx local updates ignore it.
func stepLocalSteps(sc experiment.Scenario, up bool) (experiment.Scenario, error) {
	experiment.Update(&sc, func(c *Config) {
		c.LocalSteps = int(experiment.StepLadder(stepsLadder, float64(c.LocalSteps), up))
	})
	if c := cfg(sc); c.Prox {
		return sc, experiment.Errorf("local_steps=%d, but the Phase-2 local update is FedProx (local=fedprox), which takes no steps", c.LocalSteps)
	}
	return sc, nil
}

// metrics are the per-round metrics (PAPERS.md §5.5, §6).
var metrics = []experiment.Metric{
	{Name: "phase", Caption: "phase (1 FedMD, 2 FedX + clustering)", Short: "phase"},
	{Name: "cluster_dist", Caption: "cluster distance d(θ_t, θ*)", Short: "d(θ,θ*)", Log: true},
	{Name: "misclustered", Caption: "misclustered", Short: "miscl."},
	{Name: "client_error", Caption: "client error Σ w_i‖θ_{z_i} − θ*_{z_i*}‖", Short: "client", Log: true},
}

// Metrics implements experiment.Family.
func (Family) Metrics(experiment.Scenario) []experiment.Metric { return metrics }

// local is the Phase-2 local update of the scenario.
func local(c Config) algorithms.ClusterLocal {
	return algorithms.ClusterLocal{Prox: c.Prox, Eta: c.Eta, Steps: c.LocalSteps}
}

// Racers implements experiment.Family: the two-phase algorithm and Phase 2
// alone from a random initialisation (the mixture family races exactly
// these two).
func (Family) Racers(sc experiment.Scenario) []experiment.Racer {
	c := cfg(sc)
	loc := local(c)
	delta := c.DeltaAssumed
	if delta == 0 {
		delta, _ = trueSeparation(sc)
	}
	two := algorithms.TwoPhase{Local: loc, Phase1: algorithms.FedMD{Rounds: c.Phase1Rounds, Pool: c.Pool,
		Pairs: c.Pairs, OIIters: c.OIIters, PowerIters: c.PowerIters, Epsilon: c.Epsilon,
		Alpha: 1, Beta: c.covRatio(), Delta: delta, Reuse: c.Reuse, Seed: sc.Seed}}
	return []experiment.Racer{
		{Label: "FedMD + " + loc.Label(), Spec: experiment.RacerSpec{Kind: "fedmd"}, Run: runner(two)},
		{Label: loc.Label() + ", random init", Spec: experiment.RacerSpec{Kind: "random"},
			Run: runner(algorithms.RandomInit{Local: loc, Seed: sc.Seed})},
	}
}

func runner(alg algorithms.MixtureAlgorithm) func(context.Context, any, int, func(experiment.Round)) error {
	return func(ctx context.Context, data any, rounds int, emit func(experiment.Round)) error {
		return alg.Run(ctx, data.(*model.Mixture), rounds, func(r algorithms.ClusterRound) {
			emit(experiment.Round{Index: r.Index, Theta: r.Centres, Phase: r.Phase, Assign: r.Assign,
				Values: []float64{float64(r.Phase), r.Distance, r.Misclustered, r.ClientError}})
		})
	}
}

// DataKey implements experiment.Family: a re-run or a change of η, s or the
// local update reuses the data.
func (Family) DataKey(sc experiment.Scenario) string {
	return fmt.Sprintf("%#v|%d", cfg(sc).data(), sc.Seed)
}

// Prepare implements experiment.Family.
func (Family) Prepare(ctx context.Context, sc experiment.Scenario, report func(experiment.Progress)) (any, error) {
	fed, err := cfg(sc).data().Generate(sc.Seed)
	if err != nil {
		return nil, &experiment.InputError{Msg: err.Error()}
	}
	return model.NewMixture(fed), nil
}

// Facts implements experiment.Family: the cluster view's data, the target
// εΔ of Phase 1 as the reference of the distance chart, and γ, κ of Phase 2.
func (Family) Facts(sc experiment.Scenario, data any) experiment.Facts {
	c := cfg(sc)
	// The cluster view is asked for before the data are ready (K = 0 until
	// they are).
	f := experiment.Facts{Summary: summary(sc), Charts: []string{"cluster_dist", "misclustered"}, Clusters: &experiment.ClusterInfo{}}
	p, ok := data.(*model.Mixture)
	if !ok {
		return f
	}
	info := &experiment.ClusterInfo{K: p.K, Labels: p.Fed.Labels, Sizes: make([]int, len(p.Clients)), Delta: p.Fed.Delta,
		Phase1Rounds: c.Phase1Rounds}
	for i := range p.Clients {
		info.Sizes[i] = p.Clients[i].N
	}
	info.Gamma, info.Kappa = p.GammaKappa(c.Eta, c.LocalSteps, c.Prox)
	f.Clusters = info
	f.Levels = []experiment.Level{{Metric: "cluster_dist", Value: c.Epsilon * p.Fed.Delta, Label: fmt.Sprintf("εΔ=%.2g", c.Epsilon*p.Fed.Delta)}}
	return f
}

// summary is the title line.
func summary(sc experiment.Scenario) string {
	c := cfg(sc)
	var b strings.Builder
	fmt.Fprintf(&b, "k=%d", c.K)
	if delta, err := trueSeparation(sc); err == nil {
		fmt.Fprintf(&b, ", Δ=%.3g", delta)
	}
	if c.DeltaAssumed > 0 {
		fmt.Fprintf(&b, " (assumed %s)", experiment.FormatFloat(c.DeltaAssumed))
	}
	fmt.Fprintf(&b, ", σ=%s, M=%d, d=%d, %d anchors, m=%d", experiment.FormatFloat(c.Noise), c.Clients, c.Dim, c.Anchors, c.Pool)
	if c.Reuse {
		b.WriteString(" reused")
	}
	fmt.Fprintf(&b, ", η=%s", experiment.FormatFloat(c.Eta))
	return b.String()
}
