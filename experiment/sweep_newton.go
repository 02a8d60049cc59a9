package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/model"
)

// The sweeps of paper 003 (PAPERS.md §4.7, defaults of §8): E003-2 varies
// the number of clients m at a fixed |D|, so that the local size
// |D_j| = |D|/m shrinks; E003-3/4 vary the data heterogeneity α and the
// model heterogeneity β at m = 20, |D_j| = 500. Every (grid value, trial)
// generates its federation and random features once (seed Seed+trial) and
// shares them, read-only, with every racer; the FedNewton curves t = 1, 2,
// 4, 8 are read off one 8-round run.

// DivergedMetric names the metric of the newton sweeps that is 1 in a trial
// where the racer diverged (its test MSE is then left out).
const DivergedMetric = "diverged"

// newtonSweepT are the FedNewton round counts drawn as curves (§8, as in
// Table 3 of paper 003).
var newtonSweepT = []int{1, 2, 4, 8}

// newtonSweepFamily is the sweep family of the newton presets: per trial,
// the test MSE of every racer (FedNewton once per t), whether it diverged,
// and for the heterogeneity sweeps the empirical Δ_Dj and Δ_fj of the data.
var newtonSweepFamily = sweepFamily{
	metrics:  newtonSweepMetrics,
	labels:   newtonSweepLabels,
	evaluate: evalNewtonSweep,
	validate: validateNewtonSweep,
}

func newtonSweepMetrics(sc Scenario) []SweepMetric {
	out := []SweepMetric{
		{Name: "test_mse", Caption: "test MSE", Ref: math.NaN()},
		{Name: DivergedMetric, Caption: "fraction of trials in which the racer diverged", Ref: math.NaN(), TableOnly: true},
	}
	if !sc.measuresHeterogeneity() {
		out = append(out, SweepMetric{Name: "local_size", Caption: "samples per client |D_j| = |D|/m", Ref: math.NaN(), TableOnly: true})
	} else {
		out = append(out,
			SweepMetric{Name: "delta_data", Caption: "empirical data heterogeneity Δ_Dj (p_j-weighted mean)", Ref: math.NaN(), TableOnly: true},
			SweepMetric{Name: "delta_model", Caption: "empirical model heterogeneity Δ_fj (p_j-weighted mean)", Ref: math.NaN(), TableOnly: true})
	}
	return out
}

// heterogeneitySweep reports whether the scenario sweeps α or β.
func (sc Scenario) heterogeneitySweep() bool {
	return sc.Family == FamilyNewton && (sc.Sweep.Knob == "alpha" || sc.Sweep.Knob == "beta")
}

// measuresHeterogeneity reports whether a newton sweep, or one of its point
// scenarios (which no longer know what was swept), measures the empirical
// Δ_Dj and Δ_fj: all but the local-size sweep (the one with total_samples),
// whose data are homogeneous and whose many small clients would make the
// power iterations of Δ_Dj cost more than the racers.
func (sc Scenario) measuresHeterogeneity() bool { return sc.Newton.Total == 0 }

// newtonSweepLabels are the racers' labels, a FedNewton racer expanding into
// one curve per t.
func newtonSweepLabels(sc Scenario) []string {
	var out []string
	for _, r := range sc.Resolve() {
		if r.Spec.Kind == KindFedNewton {
			for _, t := range newtonSweepT {
				out = append(out, fmt.Sprintf("%s t=%d", r.Label, t))
			}
			continue
		}
		out = append(out, r.Label)
	}
	return out
}

// evalNewtonSweep evaluates one (grid value, trial): KRR and DKRR are read
// after one round (they do not iterate), FedNewton after t = 1, 2, 4, 8 of
// one run, FedAvg and FedProx after sc.Rounds rounds. A racer that diverges
// (algorithms.DivergedError, e.g. FedNewton with too few samples per client
// for its local Hessians, the Υ > 1 regime) has no test MSE from that round
// on (+Inf, which the table leaves out) and diverged = 1.
func evalNewtonSweep(ctx context.Context, sc Scenario) ([][]float64, error) {
	nd, p, err := newtonSynthetic(sc)
	if err != nil {
		return nil, err
	}
	extra := []float64{float64(sc.Data.Samples)}
	if sc.measuresHeterogeneity() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dd, _ := p.DataHeterogeneity()
		df, _ := nd.ModelHeterogeneity()
		extra = []float64{dd, df}
	}
	row := func(mse float64) []float64 {
		div := 0.0
		if math.IsInf(mse, 1) {
			div = 1
		}
		return append([]float64{mse, div}, extra...)
	}
	var out [][]float64
	for _, r := range sc.Resolve() {
		rounds := sc.Rounds
		switch r.Spec.Kind {
		case KindKRR, KindDKRR:
			rounds = 1
		case KindFedNewton:
			rounds = newtonSweepT[len(newtonSweepT)-1]
		}
		mse, err := ridgeMSE(ctx, r, p, rounds)
		if err != nil {
			return nil, err
		}
		if r.Spec.Kind == KindFedNewton {
			for _, t := range newtonSweepT {
				out = append(out, row(mse[t-1]))
			}
			continue
		}
		out = append(out, row(mse[rounds-1]))
	}
	return out, nil
}

// ridgeMSE runs a ridge racer for the given rounds and returns its test MSE
// after each, +Inf from the round it diverged at.
func ridgeMSE(ctx context.Context, r Racer, p *model.Ridge, rounds int) ([]float64, error) {
	mse := make([]float64, rounds)
	for i := range mse {
		mse[i] = math.Inf(1)
	}
	err := r.Ridge.Run(ctx, p, rounds, func(rd algorithms.Round) { mse[rd.Index-1] = rd.TestMSE })
	var de *algorithms.DivergedError
	if err != nil && !errors.As(err, &de) {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &RacerError{Label: r.Label, Err: err}
	}
	return mse, nil
}

// validateNewtonSweep rejects what the newton sweeps cannot do.
func validateNewtonSweep(sc Scenario) error {
	if sc.Newton.DataPath != "" {
		return &InputError{Msg: fmt.Sprintf("data=%q: the %s sweep runs on the synthetic data of paper 003; race a data file with fedscope run", sc.Newton.DataPath, sc.Preset)}
	}
	if sc.Newton.Total != 0 && sc.Sweep.Knob != "clients" {
		return &InputError{Msg: fmt.Sprintf("total_samples=%d: applies only to the local-size sweep (newton-local-size); set samples instead", sc.Newton.Total)}
	}
	return nil
}

// newtonSweepBase is the data and the racers of the newton sweeps: the
// newton-rounds preset's settings (d = 10, noise variance 0.2, 2500 test
// points, M = 200 random features, σ² = 20 and λ = λ_prox = 1e-4 with the
// departures from Table 2 newtonRounds explains, FedAvg η = 0.001 with
// s = 2), FedAvg and FedProx after 8 rounds (the largest t of FedNewton),
// 10 trials (the paper's).
func newtonSweepBase() Scenario {
	sc := newtonRounds()
	sc.Newton.Alpha, sc.Newton.Beta = 0, 0
	sc.Rounds = 8
	sc.Trials = 10
	return sc
}

// newtonLocalSize is E003-2: m ∈ {5, 10, 20, 25, 40, 50, 80, 100, 125}
// clients sharing |D| = 10000 samples (|D_j| = 2000 … 80), α = β = 0
// (PAPERS.md §4.7, §8).
func newtonLocalSize() Scenario {
	sc := newtonSweepBase()
	sc.Newton.Total = 10000
	sc.Data.Clients, sc.Data.Samples = 5, 2000
	sc.Sweep = SweepSpec{Knob: "clients", Grid: []float64{5, 10, 20, 25, 40, 50, 80, 100, 125},
		Label: "clients m (local size |D_j| = |D|/m)", Axis: "local_size",
		Adjust: func(p *Scenario) {
			if p.Data.Clients > 0 {
				p.Data.Samples = p.Newton.Total / p.Data.Clients
			}
		}}
	return sc
}

// Grids of E003-3/4 (PAPERS.md §8).
var (
	alphaGrid = []float64{0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1}
	betaGrid  = []float64{0, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1}
)

// heterogeneitySpec is the sweep over α (E003-3) or β (E003-4).
func heterogeneitySpec(knob string) SweepSpec {
	if knob == "beta" {
		return SweepSpec{Knob: "beta", Grid: betaGrid, Label: "model heterogeneity β", Axis: "delta_model"}
	}
	return SweepSpec{Knob: "alpha", Grid: alphaGrid, Label: "data heterogeneity α", Axis: "delta_data"}
}

// newtonHeterogeneity is E003-3 (α, covariate shift) and, with sweep=beta,
// E003-4 (β, model shift): m = 20 clients with |D_j| = 500, the other
// heterogeneity 0 (PAPERS.md §4.7, §8).
func newtonHeterogeneity() Scenario {
	sc := newtonSweepBase()
	sc.Sweep = heterogeneitySpec("alpha")
	return sc
}

// sweepKnob is `sweep`, which picks the knob newton-heterogeneity varies.
// Switching resets the other heterogeneity to 0, as E003-3/4 keep it off;
// set it after sweep= to combine both.
var sweepKnob = Knob{
	Name: "sweep", Help: "what newton-heterogeneity varies: alpha (E003-3) or beta (E003-4)",
	get: func(s *Scenario) string { return s.Sweep.Knob },
	set: func(s *Scenario, v string) error {
		if !s.heterogeneitySweep() {
			return fmt.Errorf("applies only to newton-heterogeneity")
		}
		if v != "alpha" && v != "beta" {
			return fmt.Errorf("must be alpha or beta")
		}
		if v != s.Sweep.Knob {
			s.Newton.Alpha, s.Newton.Beta = 0, 0
		}
		s.Sweep = heterogeneitySpec(v)
		return nil
	},
}

// newtonSweepSummary is the line under the title of a newton sweep.
func (sc Scenario) newtonSweepSummary(b *strings.Builder) {
	d, n := sc.Data, sc.Newton
	if sc.Sweep.Knob == "clients" {
		fmt.Fprintf(b, "|D|=%d split over m clients, d=%d, α=%s, β=%s", n.Total, d.Dim, formatFloat(n.Alpha), formatFloat(n.Beta))
	} else {
		fmt.Fprintf(b, "m=%d × %d, d=%d", d.Clients, d.Samples, d.Dim)
		if sc.Sweep.Knob == "alpha" {
			fmt.Fprintf(b, ", β=%s", formatFloat(n.Beta))
		} else {
			fmt.Fprintf(b, ", α=%s", formatFloat(n.Alpha))
		}
	}
	fmt.Fprintf(b, ", RFF %d, σ²=%s, λ=%s · FedAvg/FedProx %d rounds", n.RFFDim, formatFloat(n.Bandwidth), formatFloat(n.Lambda), sc.Rounds)
}

func init() {
	sweepFamilies[FamilyNewton] = newtonSweepFamily
	presets = append(presets,
		Preset{Name: "newton-local-size", Summary: "sweep: test MSE of KRR, DKRR, FedNewton t=1,2,4,8, FedAvg, FedProx against the number of clients at |D| = 10000 (paper 003, Fig. 3)", build: newtonLocalSize},
		Preset{Name: "newton-heterogeneity", Summary: "sweep: the same racers against data heterogeneity α, or model heterogeneity β with sweep=beta (paper 003, Fig. 4)", build: newtonHeterogeneity},
	)
	knobs = append(knobs, sweepKnob,
		intKnob("total_samples", "|D|, training samples in all of the local-size sweep (samples = total_samples/clients)", 1, maxSamples,
			func(s *Scenario) *int { return &s.Newton.Total }))
}
