package newton

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// The sweeps of paper 003 (docs/papers.md §4.7, defaults of §8): E003-2 varies
// the number of clients m at a fixed |D|, so that the local size
// |D_j| = |D|/m shrinks; E003-3/4 vary the data heterogeneity α and the
// model heterogeneity β at m = 20, |D_j| = 500. Every (grid value, trial)
// generates its federation and random features once (seed Seed+trial) and
// shares them, read-only, with every racer; the FedNewton curves t = 1, 2,
// 4, 8 are read off one 8-round run.

// Metrics of the newton sweeps that the views treat specially.
const (
	// DivergedMetric is the fraction of trials in which the racer diverged
	// (its test MSE is then left out of the mean).
	DivergedMetric = "diverged"
	// DivergedTrialsMetric is how many trials diverged (a count: its _mean
	// column is the count, its _std column empty).
	DivergedTrialsMetric = "diverged_trials"
	// ContractionMetric is FedNewton's contraction factor Υ of the trial's
	// data (docs/papers.md §4.2–4.3), the same for every racer.
	ContractionMetric = "contraction"
)

// newtonSweepT are the FedNewton round counts drawn as curves (§8, as in
// Table 3 of paper 003).
var newtonSweepT = []int{1, 2, 4, 8}

// sweepContractionTol is the accuracy of the per-trial Υ of the sweeps
// (relative to max(1, Υ)).
const sweepContractionTol = 1e-4

// Metrics implements experiment.Sweeps: per trial, the test MSE of
// every racer (FedNewton once per t; the mean over the trials in which the
// racer did not diverge), the fraction and the number of trials in which it
// diverged, FedNewton's contraction factor Υ, and the local size or the
// empirical Δ_Dj and Δ_fj of the data.
func (sweeps) Metrics(_ experiment.Scenario, c Config) []experiment.SweepMetric {
	out := []experiment.SweepMetric{
		{Name: "test_mse", Caption: "test MSE (mean over the trials that did not diverge)", Ref: math.NaN()},
		{Name: DivergedMetric, Caption: "fraction of trials in which the racer diverged", Ref: math.NaN(), TableOnly: true},
		{Name: DivergedTrialsMetric, Caption: "trials in which the racer diverged", Ref: math.NaN(), TableOnly: true},
		{Name: ContractionMetric, Caption: "FedNewton's contraction factor Υ (> 1: it diverges)", Ref: 1, RefNote: "Υ = 1", TableOnly: true},
	}
	if !measuresHeterogeneity(c) {
		out = append(out, experiment.SweepMetric{Name: "local_size", Caption: "samples per client |D_j| = |D|/m", Ref: math.NaN(), TableOnly: true})
	} else {
		out = append(out,
			experiment.SweepMetric{Name: "delta_data", Caption: "empirical data heterogeneity Δ_Dj (p_j-weighted mean)", Ref: math.NaN(), TableOnly: true},
			experiment.SweepMetric{Name: "delta_model", Caption: "empirical model heterogeneity Δ_fj (p_j-weighted mean)", Ref: math.NaN(), TableOnly: true})
	}
	return out
}

// measuresHeterogeneity reports whether a newton sweep, or one of its point
// scenarios (which no longer know what was swept), measures the empirical
// Δ_Dj and Δ_fj: all but the local-size sweep (the one with total_samples),
// whose data are homogeneous and whose many small clients would make the
// power iterations of Δ_Dj cost more than the racers.
func measuresHeterogeneity(c Config) bool { return c.Total == 0 }

// Labels implements experiment.Sweeps: the racers' labels, a FedNewton racer
// expanding into one curve per t.
func (sweeps) Labels(sc experiment.Scenario, c Config) []string {
	var out []string
	for _, r := range (compute{}).Racers(sc, c) {
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

// Evaluate implements experiment.Sweeps for one (grid value, trial): KRR
// and DKRR are read after one round (they do not iterate), FedNewton after
// t = 1, 2, 4, 8 of one run, FedAvg and FedProx after sc.Rounds rounds. A
// racer that diverges (FedNewton when Υ > 1) has no test MSE from that
// round on (+Inf, which the table leaves out) and diverged = 1. Υ is
// computed for every trial (Lanczos, a few dozen local solves), its cause
// only when a run's message needs it.
func (sweeps) Evaluate(ctx context.Context, sc experiment.Scenario, c Config) ([][]float64, error) {
	nd, p, err := synthetic(ctx, c.Data, sc.Seed)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ups, _ := p.ContractionTol(sweepContractionTol)
	extra := []float64{ups, float64(c.Data.Samples)}
	if measuresHeterogeneity(c) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dd, _ := p.DataHeterogeneity()
		df, _ := nd.ModelHeterogeneity()
		extra = []float64{ups, dd, df}
	}
	row := func(mse float64) []float64 {
		div := 0.0
		if math.IsInf(mse, 1) {
			div = 1
		}
		return append([]float64{mse, div, div}, extra...)
	}
	var out [][]float64
	for _, r := range (compute{}).Racers(sc, c) {
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
func ridgeMSE(ctx context.Context, r experiment.RacerOf[*Prepared], p *model.Ridge, rounds int) ([]float64, error) {
	mse := make([]float64, rounds)
	for i := range mse {
		mse[i] = math.Inf(1)
	}
	err := r.Run(ctx, &Prepared{Ridge: p}, rounds, func(rd experiment.Round) { mse[rd.Index-1] = rd.Values[0] })
	if _, diverged := algorithms.DivergedRound(err); err != nil && !diverged {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &experiment.RacerError{Label: r.Label, Err: err}
	}
	return mse, nil
}

// newtonSweepBase is the data and the racers of the newton sweeps: the
// newton-rounds preset's settings (d = 10, noise variance 0.2, 2500 test
// points, M = 200 random features, σ² = 10, λ = 1e-4, λ_prox = 7e-5, FedAvg
// η = 0.001 with s = 2; newtonRounds explains the departures from Table 2),
// FedAvg and FedProx after 8 rounds (the largest t of FedNewton), 10 trials
// (the paper's).
func newtonSweepBase() experiment.Scenario {
	sc := newtonRounds()
	experiment.Update(&sc, func(c *Config) { c.Data.Alpha, c.Data.Beta = 0, 0 })
	sc.Rounds = 8
	sc.Trials = 10
	return sc
}

// newtonLocalSize is E003-2: m ∈ {5, 10, 20, 25, 40, 50, 80, 100, 125}
// clients sharing |D| = 10000 samples (|D_j| = 2000 … 80), α = β = 0
// (docs/papers.md §4.7, §8).
func newtonLocalSize() experiment.Scenario {
	sc := newtonSweepBase()
	experiment.Update(&sc, func(c *Config) {
		c.Total = 10000
		c.Data.Clients, c.Data.Samples = 5, 2000
	})
	sc.Sweep = experiment.SweepSpec{Knob: "clients", Grid: []float64{5, 10, 20, 25, 40, 50, 80, 100, 125},
		Label: "clients m (local size |D_j| = |D|/m)", Axis: "local_size", Check: checkData,
		Adjust: func(p *experiment.Scenario) {
			experiment.Update(p, func(c *Config) {
				if c.Data.Clients > 0 {
					c.Data.Samples = c.Total / c.Data.Clients
				}
			})
		}}
	return sc
}

// Grids of E003-3/4 (docs/papers.md §8).
var (
	alphaGrid = []float64{0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1}
	betaGrid  = []float64{0, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1}
)

// heterogeneitySpec is the sweep over α (E003-3) or β (E003-4).
func heterogeneitySpec(knob string) experiment.SweepSpec {
	if knob == "beta" {
		return experiment.SweepSpec{Knob: "beta", Grid: betaGrid, Label: "model heterogeneity β", Axis: "delta_model", Check: checkData}
	}
	return experiment.SweepSpec{Knob: "alpha", Grid: alphaGrid, Label: "data heterogeneity α", Axis: "delta_data", Check: checkData}
}

// newtonHeterogeneity is E003-3 (α, covariate shift) and, with sweep=beta,
// E003-4 (β, model shift): m = 20 clients with |D_j| = 500, the other
// heterogeneity 0 (docs/papers.md §4.7, §8).
func newtonHeterogeneity() experiment.Scenario {
	sc := newtonSweepBase()
	sc.Sweep = heterogeneitySpec("alpha")
	return sc
}

// Summary implements experiment.Sweeps.
func (sweeps) Summary(sc experiment.Scenario, c Config) string {
	s := sc.Sweep
	d := c.Data
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s…%s × %d trials · ", s.Knob, experiment.FormatFloat(s.Grid[0]), experiment.FormatFloat(s.Grid[len(s.Grid)-1]), sc.Trials)
	if s.Knob == "clients" {
		fmt.Fprintf(&b, "|D|=%d split over m clients, d=%d, α=%s, β=%s", c.Total, d.Dim, experiment.FormatFloat(d.Alpha), experiment.FormatFloat(d.Beta))
	} else {
		fmt.Fprintf(&b, "m=%d × %d, d=%d", d.Clients, d.Samples, d.Dim)
		if s.Knob == "alpha" {
			fmt.Fprintf(&b, ", β=%s", experiment.FormatFloat(d.Beta))
		} else {
			fmt.Fprintf(&b, ", α=%s", experiment.FormatFloat(d.Alpha))
		}
	}
	fmt.Fprintf(&b, ", RFF %d, σ²=%s, λ=%s · FedAvg/FedProx %d rounds · FedNewton's Υ per value: contraction column (> 1: it diverges)",
		d.RFFDim, experiment.FormatFloat(d.Bandwidth), experiment.FormatFloat(d.Lambda), sc.Rounds)
	return b.String()
}

// Stat implements experiment.Sweeps: means and sample standard deviations
// over the trials, except diverged_trials, which is a count.
func (s sweeps) Stat(sc experiment.Scenario, c Config) experiment.StatFunc {
	count := -1
	for i, m := range s.Metrics(sc, c) {
		if m.Name == DivergedTrialsMetric {
			count = i
		}
	}
	return func(cells [][][]float64, racer, metric int) (mean, std float64, n int) {
		var vals []float64
		for _, c := range cells {
			if racer < len(c) && metric < len(c[racer]) {
				if v := c[racer][metric]; !math.IsNaN(v) && !math.IsInf(v, 0) {
					vals = append(vals, v)
				}
			}
		}
		n = len(vals)
		switch {
		case n == 0:
			return math.NaN(), math.NaN(), 0
		case metric == count:
			var sum float64
			for _, v := range vals {
				sum += v
			}
			return sum, math.NaN(), n
		}
		return experiment.Mean(vals), experiment.SampleStd(vals), n
	}
}

// checkData validates the synthetic data of a sweep's point scenario.
var checkData = experiment.Typed(func(_ experiment.Scenario, c Config) error { return c.Data.synthetic().Validate() })
