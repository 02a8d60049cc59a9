package mixture

import (
	"fmt"
	"strings"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/experiment"
)

// Knobs implements experiment.Computation.
func (compute) Knobs(experiment.Scenario, Config) []experiment.Knob {
	return []experiment.Knob{
		experiment.FloatKnob("eta", "step size η of the Phase-2 local updates", false, func(c *Config) *float64 { return &c.Eta }).
			WithLive(experiment.Live{Down: []string{"["}, Up: []string{"]"}, Name: "η", Desc: "step size η",
				Step: experiment.LadderStep(etaLadder, func(c *Config) *float64 { return &c.Eta })}),
		experiment.IntKnob("local_steps", "Phase-2 local steps s (FedAvg)", 1, experiment.MaxSteps, func(c *Config) *int { return &c.LocalSteps }).
			WithLive(experiment.Live{Down: []string{"-", "_"}, Up: []string{"+", "="}, Name: "steps", Desc: "local steps s", Step: stepLocalSteps}),
		mixInt("clients", "number of Phase-2 clients M (heavy-tailed sizes)", 1, experiment.MaxClients, func(m *Spec) *int { return &m.Clients }),
		mixInt("dim", "feature dimension d", 1, experiment.MaxDim, func(m *Spec) *int { return &m.Dim }),
		mixFloat("noise", "label noise σ", true, func(m *Spec) *float64 { return &m.Noise }),
		mixInt("k", "number of clusters k", 2, datasets.MaxClusters, func(m *Spec) *int { return &m.K }),
		experiment.FloatKnobMin("delta", "separation Δ of the truths (0 = as drawn, at least min_sep)", true, minDelta,
			func(c *Config) *float64 { return &c.Spec.Delta }).
			WithLive(experiment.Live{Down: []string{"h"}, Up: []string{"H"}, Name: "Δ", Desc: "separation Δ", Step: stepSeparation}),
		experiment.FloatKnobMin("delta_assumed", "the Δ FedMD is told (0 = the true Δ; set it to misspecify)", true, minDelta,
			func(c *Config) *float64 { return &c.Spec.DeltaAssumed }),
		mixFloat("radius", "norm R of the drawn truths", false, func(m *Spec) *float64 { return &m.Radius }),
		mixFloat("min_sep", "truths are redrawn until Δ ≥ min_sep", true, func(m *Spec) *float64 { return &m.MinSep }),
		mixFloat("cov_ratio", "β/α: cluster j has covariance ratio^(j/(k−1))·I (0 or 1 = identity)", true, func(m *Spec) *float64 { return &m.CovRatio }),
		weightsKnob(),
		mixInt("max_samples", "largest heavy-tailed client size: n_i = ⌊2/(1 − cU)^0.8⌋ with c = 1 − (2/(max_samples+1))^1.25, so the tail P(n ≥ x) ∝ x^−1.25 reaches it",
			2, experiment.MaxSamples, func(m *Spec) *int { return &m.MaxSamples }),
		mixInt("anchors", "number of anchor clients n_H (0 = ⌈ln N / p_min⌉, the theory's count)", 0, maxAnchors, func(m *Spec) *int { return &m.Anchors }),
		mixInt("anchor_pairs", "point pairs l per anchor and Phase-1 round", 1, 10_000, func(m *Spec) *int { return &m.Pairs }),
		mixInt("pool", "2-point clients m per Phase-1 round", 1, 200_000, func(m *Spec) *int { return &m.Pool }),
		mixInt("phase1_rounds", "Phase-1 rounds T, counted in rounds (0 = ⌈(16β²/α²) log(βR/(εΔ))⌉, what the proof of Thm 1 needs for the drawn instance, at most 60)",
			0, 1000, func(m *Spec) *int { return &m.Phase1Rounds }),
		mixInt("oi_iters", "orthogonal-iteration rounds T1 (even)", 2, 1000, func(m *Spec) *int { return &m.OIIters }),
		mixInt("power_iters", "power-iteration steps T2", 1, 1000, func(m *Spec) *int { return &m.PowerIters }),
		mixFloat("epsilon", "FedMD accuracy ε in (0, 0.25)", false, func(m *Spec) *float64 { return &m.Epsilon }),
		experiment.BoolKnob("reuse_data", "true: Phase 1 reuses m pool clients and 2l anchor points every round; false: fresh data",
			func(c *Config) *bool { return &c.Reuse }),
		localKnob(),
	}
}

// minDelta is the smallest separation Δ: the truths are rescaled about
// their centroid, whose norm is up to the radius R ≤ 10⁶, so a smaller Δ
// would vanish in rounding (1e-320 gave Δ = 0 and a failed run).
const minDelta = 1e-6

func mixInt(name, help string, lo, hi int, field func(*Spec) *int) experiment.Knob {
	return experiment.IntKnob(name, help, lo, hi, func(c *Config) *int { return field(&c.Spec) })
}

func mixFloat(name, help string, zeroOK bool, field func(*Spec) *float64) experiment.Knob {
	return experiment.FloatKnob(name, help, zeroOK, func(c *Config) *float64 { return field(&c.Spec) })
}

// weightsKnob is the mixing weights, or uniform.
func weightsKnob() experiment.Knob {
	return experiment.TextKnob("weights", "mixing weights p, k comma-separated numbers > 0, or uniform",
		func(s *Config) string {
			if s.Weights == nil {
				return "uniform"
			}
			parts := make([]string, len(s.Weights))
			for i, w := range s.Weights {
				parts[i] = experiment.FormatFloat(w)
			}
			return strings.Join(parts, ",")
		},
		func(s *Config, v string) error {
			if v == "uniform" || v == "" {
				s.Weights = nil
				return nil
			}
			var ws []float64
			for _, f := range strings.Split(v, ",") {
				w, err := experiment.ParseReal(strings.TrimSpace(f), 0, experiment.MaxFloat, false, "")
				if err != nil {
					return fmt.Errorf("%q is not a number in (0, %g]", f, experiment.MaxFloat)
				}
				ws = append(ws, w)
			}
			s.Weights = ws
			return nil
		})
}

// localKnob is Phase 2's local update (either case).
func localKnob() experiment.Knob {
	return experiment.TextKnob("local", "Phase-2 local update: fedavg (s gradient steps) or fedprox (exact proximal step)",
		func(s *Config) string {
			if s.Prox {
				return "fedprox"
			}
			return "fedavg"
		},
		func(s *Config, v string) error {
			switch strings.ToLower(v) {
			case "fedavg":
				s.Prox = false
			case "fedprox":
				s.Prox = true
			default:
				return fmt.Errorf("must be fedavg or fedprox")
			}
			return nil
		})
}
