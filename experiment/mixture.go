package experiment

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
)

// MixtureSpec describes the mixture family (paper 004, PAPERS.md §5 and the
// preset of §8): the mixed-regression data and the parameters of the
// two-phase algorithm. The step size η, the local steps s, the rounds and the
// seed are the scenario's own fields; Rounds counts the rounds of both
// phases.
type MixtureSpec struct {
	Clients int     // M Phase-2 clients, heavy-tailed sizes
	Dim     int     // d
	K       int     // k clusters
	Noise   float64 // σ
	Radius  float64 // R, norm of the drawn truths
	MinSep  float64 // truths are redrawn until Δ ≥ MinSep
	Delta   float64 // Δ: 0 keeps the drawn separation, > 0 rescales the truths to it
	// DeltaAssumed is the Δ handed to FedMD; 0 means the true separation
	// (PAPERS.md §8: the algorithm assumes Δ known; "misspecified Δ" knob).
	DeltaAssumed float64
	Weights      []float64 // mixing weights p; nil = uniform
	CovRatio     float64   // β/α of the per-cluster covariances; 0 = Σ_j = I
	MaxSamples   int       // cap of the client sizes

	Anchors      int     // n_H
	Pairs        int     // l
	Pool         int     // m
	Phase1Rounds int     // T
	OIIters      int     // T1, even
	PowerIters   int     // T2
	Epsilon      float64 // ε
	Reuse        bool    // reuse the pool and the anchors' points every Phase-1 round
	Prox         bool    // FedProx local updates instead of FedAvg
}

// data returns the generator of the federation: the anchors hold 2·l·T
// points and the pool m·T clients in fresh-data mode, 2·l and m when data are
// reused (PAPERS.md §8).
func (m MixtureSpec) data() datasets.Mixture {
	pts, pool := 2*m.Pairs*m.Phase1Rounds, m.Pool*m.Phase1Rounds
	if m.Reuse {
		pts, pool = 2*m.Pairs, m.Pool
	}
	return datasets.Mixture{Clients: m.Clients, Dim: m.Dim, K: m.K, Radius: m.Radius, MinSep: m.MinSep,
		Delta: m.Delta, Noise: m.Noise, Weights: m.Weights, CovRatio: m.CovRatio, MaxSamples: m.MaxSamples,
		Anchors: m.Anchors, AnchorPoints: pts, PoolClients: pool}
}

// covRatio returns β/α ≥ 1.
func (m MixtureSpec) covRatio() float64 { return math.Max(1, m.CovRatio) }

// mixture is the preset of PAPERS.md §8 (004): d = 10, k = 3, Σ_j = I, R = 2,
// Δ ≥ 1.5, σ = 0.5, p uniform; Phase 1 with n_H = 12 anchors, l = 40,
// m = 4000 fresh 2-point clients, T = 12, T1 = 48, T2 = 20, ε = 0.1; Phase 2
// on M = 1000 heavy-tailed clients with FedAvg s = 5, η = 0.03, T' = 150.
func mixture() Scenario {
	return Scenario{
		Family: FamilyMixture,
		Mixture: MixtureSpec{Clients: 1000, Dim: 10, K: 3, Noise: 0.5, Radius: 2, MinSep: 1.5, MaxSamples: 300,
			Anchors: 12, Pairs: 40, Pool: 4000, Phase1Rounds: 12, OIIters: 48, PowerIters: 20, Epsilon: 0.1},
		Eta:        0.03,
		LocalSteps: 5,
		Rounds:     12 + 150,
		Seed:       1,
	}
}

// validateMixture checks a mixture scenario.
func (sc Scenario) validateMixture() error {
	m := sc.Mixture
	if err := m.data().Validate(); err != nil {
		return &InputError{Msg: err.Error()}
	}
	switch {
	case m.Anchors < m.K:
		return &InputError{Msg: fmt.Sprintf("anchors=%d: need at least k=%d anchors", m.Anchors, m.K)}
	case m.Pairs < 1 || m.Pool < 1 || m.Phase1Rounds < 1 || m.PowerIters < 1:
		return &InputError{Msg: "anchor_pairs, pool, phase1_rounds and power_iters must be ≥ 1"}
	case m.OIIters < 2 || m.OIIters%2 != 0:
		return &InputError{Msg: fmt.Sprintf("oi_iters=%d: must be even and ≥ 2 (Algorithm 3 ends on a QR step)", m.OIIters)}
	case !(m.Epsilon > 0 && m.Epsilon < 0.25):
		return &InputError{Msg: fmt.Sprintf("epsilon=%v: must lie in (0, 0.25)", m.Epsilon)}
	case !(m.DeltaAssumed >= 0):
		return &InputError{Msg: fmt.Sprintf("delta_assumed=%v: must be ≥ 0 (0 = the true Δ)", m.DeltaAssumed)}
	case sc.Rounds < 1 || sc.Rounds > maxRounds:
		return &InputError{Msg: fmt.Sprintf("rounds=%d: must lie in 1..%d", sc.Rounds, maxRounds)}
	case !(sc.Eta > 0):
		return &InputError{Msg: fmt.Sprintf("eta=%v: must be > 0", sc.Eta)}
	case sc.LocalSteps < 1:
		return &InputError{Msg: fmt.Sprintf("local_steps=%d: must be ≥ 1", sc.LocalSteps)}
	}
	return nil
}

// TrueSeparation returns the separation Δ of the scenario's truths, drawn
// without generating the clients (cheap: k·d numbers).
func (sc Scenario) TrueSeparation() (float64, error) {
	_, delta, err := sc.Mixture.data().Truths(sc.Seed)
	if err != nil {
		return math.NaN(), &InputError{Msg: err.Error()}
	}
	return delta, nil
}

// mixtureSummary is the title line of a mixture scenario.
func (sc Scenario) mixtureSummary() string {
	m := sc.Mixture
	var b strings.Builder
	fmt.Fprintf(&b, "k=%d", m.K)
	if delta, err := sc.TrueSeparation(); err == nil {
		fmt.Fprintf(&b, ", Δ=%.3g", delta)
	}
	if m.DeltaAssumed > 0 {
		fmt.Fprintf(&b, " (assumed %s)", formatFloat(m.DeltaAssumed))
	}
	fmt.Fprintf(&b, ", σ=%s, M=%d, d=%d, %d anchors, m=%d", formatFloat(m.Noise), m.Clients, m.Dim, m.Anchors, m.Pool)
	if m.Reuse {
		b.WriteString(" reused")
	}
	fmt.Fprintf(&b, ", η=%s", formatFloat(sc.Eta))
	return b.String()
}

// Racer kinds of the mixture family.
const (
	KindTwoPhase   = "fedmd"
	KindRandomInit = "random"
)

// resolveMixture returns the two racers of the mixture family: the two-phase
// algorithm and Phase 2 alone from a random initialisation.
func (sc Scenario) resolveMixture() []Racer {
	m := sc.Mixture
	local := algorithms.ClusterLocal{Prox: m.Prox, Eta: sc.Eta, Steps: sc.LocalSteps}
	delta := m.DeltaAssumed
	if delta == 0 {
		delta, _ = sc.TrueSeparation()
	}
	two := algorithms.TwoPhase{Local: local, Phase1: algorithms.FedMD{Rounds: m.Phase1Rounds, Pool: m.Pool,
		Pairs: m.Pairs, OIIters: m.OIIters, PowerIters: m.PowerIters, Epsilon: m.Epsilon,
		Alpha: 1, Beta: m.covRatio(), Delta: delta, Reuse: m.Reuse, Seed: sc.Seed}}
	return []Racer{
		{Label: "FedMD + " + local.Label(), Spec: RacerSpec{Kind: KindTwoPhase, Batch: -1}, Clustered: two},
		{Label: local.Label() + ", random init", Spec: RacerSpec{Kind: KindRandomInit, Batch: -1},
			Clustered: algorithms.RandomInit{Local: local, Seed: sc.Seed}},
	}
}

// mixtureColumns are the metrics of the mixture family; JSON lines carry the
// assignment vector besides.
var mixtureColumns = []Column{
	{"phase", func(_ *Table, r *algorithms.Round) float64 { return float64(r.Phase) }},
	{"cluster_dist", func(_ *Table, r *algorithms.Round) float64 { return r.ClusterDist }},
	{"misclustered", func(_ *Table, r *algorithms.Round) float64 { return r.Misclustered }},
	{"client_error", func(_ *Table, r *algorithms.Round) float64 { return r.ClientError }},
}

// mixtures caches prepared mixture data (see cache): a re-run or a change of
// η, s or the local update reuses them, and the TUI's runner and its info
// request asking at the same time build them once.
var mixtures = newCache[string, *model.Mixture](3)

// PrepareMixture generates the federation of a mixture scenario and its
// statistics, or returns them from the cache.
func PrepareMixture(sc Scenario) (*model.Mixture, error) {
	data := sc.Mixture.data()
	return mixtures.get(fmt.Sprintf("%#v|%d", data, sc.Seed), func() (*model.Mixture, error) {
		fed, err := data.Generate(sc.Seed)
		if err != nil {
			return nil, &InputError{Msg: err.Error()}
		}
		return model.NewMixture(fed), nil
	})
}

// runMixture races the two-phase algorithm and the random-init baseline on
// the same mixture federation.
func runMixture(ctx context.Context, sc Scenario, emit func(Point)) (Result, error) {
	p, err := PrepareMixture(sc)
	if err != nil {
		return Result{}, err
	}
	res := Result{Racers: sc.Resolve(), Mixture: p}
	res.Errs, err = race(ctx, res.Racers, emit, func(r Racer, send func(algorithms.Round)) error {
		return r.Clustered.Run(ctx, p, sc.Rounds, send)
	})
	return res, err
}

// ClusterInfo is what the cluster view needs to know about the data: the
// true label and size of every Phase-2 client, the separation, and the
// stability constants of Phase 2 (PAPERS.md §8: "the UI should print gamma
// and kappa").
type ClusterInfo struct {
	K            int
	Labels       []int
	Sizes        []int
	Delta        float64
	Gamma, Kappa float64
	Phase1Rounds int
}

// MixtureInfo prepares (or fetches from the cache) the scenario's data and
// describes them for the cluster view.
func MixtureInfo(sc Scenario) (ClusterInfo, error) {
	p, err := PrepareMixture(sc)
	if err != nil {
		return ClusterInfo{}, err
	}
	info := ClusterInfo{K: p.K, Labels: p.Fed.Labels, Sizes: make([]int, len(p.Clients)), Delta: p.Fed.Delta,
		Phase1Rounds: sc.Mixture.Phase1Rounds}
	for i := range p.Clients {
		info.Sizes[i] = p.Clients[i].N
	}
	info.Gamma, info.Kappa = p.GammaKappa(sc.Eta, sc.LocalSteps, sc.Mixture.Prox)
	return info, nil
}

// mixtureKnobs are the keys of the mixture family besides the shared ones.
var mixtureKnobs = []Knob{
	mixInt("clients", "number of Phase-2 clients M (heavy-tailed sizes)", 1, maxClients, func(m *MixtureSpec) *int { return &m.Clients }),
	mixInt("dim", "feature dimension d", 1, maxDim, func(m *MixtureSpec) *int { return &m.Dim }),
	mixFloat("noise", "label noise σ", true, func(m *MixtureSpec) *float64 { return &m.Noise }),
	mixInt("k", "number of clusters k", 2, datasets.MaxClusters, func(m *MixtureSpec) *int { return &m.K }),
	mixFloat("delta", "separation Δ of the truths (0 = as drawn, at least min_sep)", true, func(m *MixtureSpec) *float64 { return &m.Delta }),
	mixFloat("delta_assumed", "the Δ FedMD is told (0 = the true Δ; set it to misspecify)", true, func(m *MixtureSpec) *float64 { return &m.DeltaAssumed }),
	mixFloat("radius", "norm R of the drawn truths", false, func(m *MixtureSpec) *float64 { return &m.Radius }),
	mixFloat("min_sep", "truths are redrawn until Δ ≥ min_sep", true, func(m *MixtureSpec) *float64 { return &m.MinSep }),
	mixFloat("cov_ratio", "β/α: cluster j has covariance ratio^(j/(k−1))·I (0 or 1 = identity)", true, func(m *MixtureSpec) *float64 { return &m.CovRatio }),
	{
		Name: "weights", Help: "mixing weights p, k comma-separated numbers > 0, or uniform",
		get: func(s *Scenario) string {
			if s.Mixture.Weights == nil {
				return "uniform"
			}
			parts := make([]string, len(s.Mixture.Weights))
			for i, w := range s.Mixture.Weights {
				parts[i] = formatFloat(w)
			}
			return strings.Join(parts, ",")
		},
		set: func(s *Scenario, v string) error {
			if v == "uniform" || v == "" {
				s.Mixture.Weights = nil
				return nil
			}
			var ws []float64
			for _, f := range strings.Split(v, ",") {
				w, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
				if err != nil || !(w > 0) || w > maxFloat {
					return fmt.Errorf("%q is not a number in (0, %g]", f, maxFloat)
				}
				ws = append(ws, w)
			}
			s.Mixture.Weights = ws
			return nil
		},
	},
	mixInt("max_samples", "cap of the heavy-tailed client sizes", 2, maxSamples, func(m *MixtureSpec) *int { return &m.MaxSamples }),
	mixInt("anchors", "number of anchor clients n_H", 1, 1000, func(m *MixtureSpec) *int { return &m.Anchors }),
	mixInt("anchor_pairs", "point pairs l per anchor and Phase-1 round", 1, 10_000, func(m *MixtureSpec) *int { return &m.Pairs }),
	mixInt("pool", "2-point clients m per Phase-1 round", 1, 200_000, func(m *MixtureSpec) *int { return &m.Pool }),
	mixInt("phase1_rounds", "Phase-1 rounds T (counted in rounds)", 1, 1000, func(m *MixtureSpec) *int { return &m.Phase1Rounds }),
	mixInt("oi_iters", "orthogonal-iteration rounds T1 (even)", 2, 1000, func(m *MixtureSpec) *int { return &m.OIIters }),
	mixInt("power_iters", "power-iteration steps T2", 1, 1000, func(m *MixtureSpec) *int { return &m.PowerIters }),
	mixFloat("epsilon", "FedMD accuracy ε in (0, 0.25)", false, func(m *MixtureSpec) *float64 { return &m.Epsilon }),
	{
		Name: "reuse_data", Help: "true: Phase 1 reuses m pool clients and 2l anchor points every round; false: fresh data",
		get: func(s *Scenario) string { return strconv.FormatBool(s.Mixture.Reuse) },
		set: func(s *Scenario, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("must be true or false")
			}
			s.Mixture.Reuse = b
			return nil
		},
	},
	{
		Name: "local", Help: "Phase-2 local update: fedavg (s gradient steps) or fedprox (exact proximal step)",
		get: func(s *Scenario) string {
			if s.Mixture.Prox {
				return KindFedProx
			}
			return KindFedAvg
		},
		set: func(s *Scenario, v string) error {
			switch strings.ToLower(v) {
			case KindFedAvg:
				s.Mixture.Prox = false
			case KindFedProx:
				s.Mixture.Prox = true
			default:
				return fmt.Errorf("must be fedavg or fedprox")
			}
			return nil
		},
	},
}

// sharedKnobs are the keys every family understands.
var sharedKnobs = []string{"eta", "local_steps", "rounds", "seed"}

// knobsFor returns the keys of a family, in the order the help shows them.
func knobsFor(f Family) []Knob {
	if f != FamilyMixture {
		// The families sharing the main table: keep the knobs that apply
		// (knobFamilies lists the ones restricted to some families).
		var out []Knob
		for _, k := range knobs {
			if fams, ok := knobFamilies[k.Name]; !ok || slices.Contains(fams, f) {
				out = append(out, k)
			}
		}
		return out
	}
	var out []Knob
	for _, k := range knobs {
		if slices.Contains(sharedKnobs, k.Name) {
			out = append(out, k)
		}
	}
	return append(out, mixtureKnobs...)
}

// KnobsFor lists the keys of a family.
func KnobsFor(f Family) []Knob { return knobsFor(f) }

// unknownKnob explains a key the scenario's family does not have: a key of
// another family names the presets it applies to.
func unknownKnob(sc *Scenario, key, value string) error {
	var owners []string
	for _, p := range presets {
		if fam := p.build().Family; fam != sc.Family && slices.ContainsFunc(knobsFor(fam), func(k Knob) bool { return k.Name == key }) {
			owners = append(owners, p.Name)
		}
	}
	names := make([]string, 0, len(knobsFor(sc.Family)))
	for _, k := range knobsFor(sc.Family) {
		names = append(names, k.Name)
	}
	if len(owners) > 0 {
		return &InputError{Msg: fmt.Sprintf("key %q (value %q) applies only to the %s preset(s), not to %s; its keys: %s",
			key, value, strings.Join(owners, ", "), sc.Preset, strings.Join(names, ", "))}
	}
	return &InputError{Msg: fmt.Sprintf("unknown key %q (value %q); allowed keys: %s", key, value, strings.Join(names, ", "))}
}

func mixInt(name, help string, lo, hi int, field func(*MixtureSpec) *int) Knob {
	k := intKnob(name, help, lo, hi, func(s *Scenario) *int { return field(&s.Mixture) })
	return k
}

func mixFloat(name, help string, zeroOK bool, field func(*MixtureSpec) *float64) Knob {
	return floatKnob(name, help, func(s *Scenario) *float64 { return field(&s.Mixture) }, zeroOK)
}
