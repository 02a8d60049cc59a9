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

// fedGainFamily is E000-3/E000-4 (PAPERS.md §1.8–§1.9): per trial, the
// federation gain FG = ‖θ̂_j − θ_j*‖ / ‖θ_fed − θ_j*‖ (squared on request) of
// the first data-scarce and the first data-rich client, θ̂_j the client's
// minimum-norm least-squares estimate and θ_fed each racer's federated model
// measured as Scenario.FedError says.
var fedGainFamily = sweepFamily{
	metrics: func(sc Scenario) []SweepMetric {
		return []SweepMetric{
			{Name: "fg_scarce", Caption: "FG, first data-scarce client", Ref: 1, RefNote: "FG = 1"},
			{Name: "fg_rich", Caption: "FG, first data-rich client", Ref: 1, RefNote: "FG = 1"},
		}
	},
	evaluate: evalFedGainRaw,
	stat:     fedGainStat,
	validate: validateClosedForm,
}

// polynomialFamily is E000-5 (PAPERS.md §1.9, §8): per trial, the exact
// integrated squared error ∫_{−1}^{1} (f̂ − U5)² dx of each racer's
// federated fit, and its inverse.
var polynomialFamily = sweepFamily{
	metrics: func(Scenario) []SweepMetric {
		return []SweepMetric{
			{Name: "mse", Caption: "MSE = ∫(f̂ − U5)² dx over [−1, 1]", Ref: math.NaN()},
			{Name: "inv_mse", Caption: "1/MSE (linear in N at the minimax rate)", Ref: math.NaN()},
		}
	},
	evaluate: evalPolynomial,
	validate: func(sc Scenario) error {
		if err := validateClosedForm(sc); err != nil {
			return err
		}
		if err := sc.polynomial().Validate(); err != nil {
			return &InputError{Msg: err.Error()}
		}
		return nil
	},
}

// validateClosedForm rejects minibatch racers: the sweeps use the affine
// round map of full-batch FedAvg and FedProx (algorithms.RoundMap).
func validateClosedForm(sc Scenario) error {
	for _, r := range sc.Resolve() {
		if r.Spec.Batch != 0 {
			return &InputError{Msg: fmt.Sprintf("batch=%d (racer %s): sweeps use full-batch local updates, their closed-form round maps; allowed: batch=0",
				r.Spec.Batch, r.Label)}
		}
	}
	return nil
}

// evalFedGain returns one trial's FG per racer and gainer: the ratio of the
// client's local error to its federated error in this trial alone.
func evalFedGain(ctx context.Context, sc Scenario) ([][]float64, error) {
	raw, err := evalFedGainRaw(ctx, sc)
	if err != nil {
		return nil, err
	}
	out := make([][]float64, len(raw))
	for r, row := range raw {
		out[r] = make([]float64, len(gainerNames))
		for j := range out[r] {
			local, curve := fedGainSplit(row, j)
			out[r][j] = model.Gain(local, slices.Min(curve), sc.Squared)
		}
	}
	return out, nil
}

// gainerNames are the clients whose FG is reported, in metric order.
var gainerNames = []string{"scarce", "rich"}

// evalFedGainRaw returns one trial's raw material for FG, per racer: the
// local errors ‖θ̂_j − θ_j*‖ of the gainers, then each gainer's federated
// error curve ‖θ_t − θ_j*‖ over t = 0…T (min mode), or its one value at the
// final round or the limit (fedGainSplit reads it back). NaN for a gainer
// the federation lacks.
func evalFedGainRaw(ctx context.Context, sc Scenario) ([][]float64, error) {
	fed, err := sc.Data.Generate(sc.Seed)
	if err != nil {
		return nil, &InputError{Msg: err.Error()}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	scarce, rich := model.GainClients(fed)
	gainers := []int{scarce, rich}
	local := make([]float64, len(gainers))
	for k, j := range gainers {
		local[k] = math.NaN()
		if j >= 0 {
			c := &fed.Clients[j]
			est := model.MinNormLeastSquaresOn(c.X, c.Y, c.N, fed.Dim, c.Support)
			local[k] = model.Distance(est, c.Truth)
		}
	}
	errs := func(theta, out []float64) {
		for k, j := range gainers {
			out[k] = math.NaN()
			if j >= 0 {
				out[k] = model.Distance(theta, fed.Clients[j].Truth)
			}
		}
	}
	curves, err := federatedCurves(ctx, sc, fed, len(gainers), errs)
	if err != nil {
		return nil, err
	}
	out := make([][]float64, len(curves))
	for r, c := range curves {
		row := append([]float64(nil), local...)
		for j := range gainers {
			row = append(row, c[j]...)
		}
		out[r] = row
	}
	return out, nil
}

// fedGainSplit reads gainer j's local error and federated error curve from
// a racer's row of evalFedGainRaw.
func fedGainSplit(row []float64, j int) (local float64, curve []float64) {
	k := len(gainerNames)
	n := (len(row) - k) / k
	if n < 1 || j >= k {
		return math.NaN(), nil // not a row of evalFedGainRaw
	}
	return row[j], row[k+j*n : k+(j+1)*n]
}

// fedGainStat aggregates FG over the trials as PAPERS.md §8 recommends: the
// trial-averaged local error over the minimum, across rounds, of the
// trial-averaged federated error curve (the final value or the limit in the
// other modes); with the squared ratio, the mean squared errors, as in the
// definition FG_j = R_loc_j / R_fed_j (§1.8). The spread is the sample
// standard deviation of the per-trial ratios.
func fedGainStat(sc Scenario) func(cells [][][]float64, racer, metric int) (mean, std float64, n int) {
	pow := func(x float64) float64 {
		if sc.Squared {
			return x * x
		}
		return x
	}
	return func(cells [][][]float64, racer, j int) (float64, float64, int) {
		var localSum float64
		var curveSum, ratios []float64
		for _, c := range cells {
			if c == nil {
				continue
			}
			if racer >= len(c) {
				continue
			}
			local, curve := fedGainSplit(c[racer], j)
			if !finite(local) || len(curve) == 0 || !allFinite(curve) {
				continue
			}
			if curveSum == nil {
				curveSum = make([]float64, len(curve))
			}
			localSum += pow(local)
			for t, e := range curve {
				curveSum[t] += pow(e)
			}
			ratios = append(ratios, model.Gain(local, slices.Min(curve), sc.Squared))
		}
		n := len(ratios)
		if n == 0 {
			return math.NaN(), math.NaN(), 0
		}
		mean := localSum / slices.Min(curveSum) // the 1/n factors cancel
		return mean, sampleStd(ratios), n
	}
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func allFinite(xs []float64) bool {
	for _, x := range xs {
		if !finite(x) {
			return false
		}
	}
	return true
}

// sampleStd is the sample standard deviation, NaN with fewer than two values.
func sampleStd(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	var mean float64
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

func evalPolynomial(ctx context.Context, sc Scenario) ([][]float64, error) {
	fed, err := sc.polynomial().Generate(sc.Seed)
	if err != nil {
		return nil, &InputError{Msg: err.Error()}
	}
	delta := make([]float64, fed.Dim)
	mse := func(theta, out []float64) {
		for k := range delta {
			delta[k] = theta[k] - fed.Truth[k]
		}
		out[0] = model.IntegratedSquare(delta)
	}
	out, err := federatedErrors(ctx, sc, fed, 1, mse)
	if err != nil {
		return nil, err
	}
	for i, row := range out {
		out[i] = []float64{row[0], 1 / row[0]}
	}
	return out, nil
}

// federatedErrors returns, for every racer, the k errors that errs measures
// of its federated model: at the closed-form limit, at the final round T, or
// the minimum over rounds t = 0, …, T from θ_0 = 0 (PAPERS.md §8), each
// error minimised separately.
func federatedErrors(ctx context.Context, sc Scenario, fed *datasets.Federation, k int,
	errs func(theta, out []float64)) ([][]float64, error) {
	curves, err := federatedCurves(ctx, sc, fed, k, errs)
	if err != nil {
		return nil, err
	}
	out := make([][]float64, len(curves))
	for i, c := range curves {
		out[i] = make([]float64, k)
		for j := range out[i] {
			out[i][j] = slices.Min(c[j])
		}
	}
	return out, nil
}

// federatedCurves returns, for every racer and each of the k errors that
// errs measures, the error curve over rounds t = 0, …, T from θ_0 = 0 in min
// mode, or the single error at the final round or at the closed-form limit
// in the other modes. Rounds are the affine round map of the racer (one d×d
// product per round), built once from the clients' spectra.
func federatedCurves(ctx context.Context, sc Scenario, fed *datasets.Federation, k int,
	errs func(theta, out []float64)) ([][][]float64, error) {
	spectra := model.SubspaceSpectra(fed)
	w := make([]float64, len(fed.Clients))
	for i := range fed.Clients {
		w[i] = float64(fed.Clients[i].N) / float64(fed.N())
	}
	racers := sc.Resolve()
	out := make([][][]float64, len(racers))
	cur := make([]float64, k)
	for i, r := range racers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m := algorithms.NewFedProxMap(spectra, w, fed.Dim, r.Spec.Eta)
		if r.Spec.Kind == KindFedAvg {
			m = algorithms.NewFedAvgMap(spectra, w, fed.Dim, r.Spec.Eta, r.Spec.LocalSteps)
		}
		out[i] = make([][]float64, k)
		if sc.FedError == model.FedErrorLimit {
			errs(m.Limit(), cur)
			for j := range out[i] {
				out[i][j] = []float64{cur[j]}
			}
			continue
		}
		theta, next := make([]float64, fed.Dim), make([]float64, fed.Dim)
		errs(theta, cur) // t = 0
		for j := range out[i] {
			out[i][j] = []float64{cur[j]}
		}
		for t := 1; t <= sc.Rounds; t++ {
			if t%256 == 0 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			m.Step(next, theta)
			theta, next = next, theta
			errs(theta, cur)
			for j, e := range cur {
				if math.IsNaN(out[i][j][0]) { // no such client
					continue
				}
				if math.IsNaN(e) || math.IsInf(e, 0) || e > 1e12 {
					return nil, &RacerError{Label: r.Label, Err: &algorithms.DivergedError{Round: t, Eta: r.Spec.Eta, Limit: math.NaN()}}
				}
				if sc.FedError == model.FedErrorFinal {
					out[i][j][0] = e
				} else {
					out[i][j] = append(out[i][j], e)
				}
			}
		}
	}
	return out, nil
}

// polynomial returns the E000-5 federation the scenario describes: the
// linear knobs clients, samples, noise and dim (= degree + 1) are reused.
func (sc Scenario) polynomial() datasets.Polynomial {
	d := sc.Data
	return datasets.Polynomial{Clients: d.Clients, Samples: d.Samples, Degree: d.Dim - 1, Noise: d.Noise}
}

func (sc Scenario) polynomialSummary() string {
	d := sc.Data
	return fmt.Sprintf("U5 on [−1,1], M=%d disjoint intervals, n_i=%d (N=%d), degree %d, σ=%s, η=%s",
		d.Clients, d.Samples, d.Clients*d.Samples, d.Dim-1, formatFloat(d.Noise), formatFloat(sc.Eta))
}

// SweepSummary is the one-line description of a sweep under the title.
func (sc Scenario) SweepSummary() string {
	s := sc.Sweep
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s…%s × %d trials · ", s.Knob, formatFloat(s.Grid[0]), formatFloat(s.Grid[len(s.Grid)-1]), sc.Trials)
	if sc.Family == FamilyNewton {
		sc.newtonSweepSummary(&b)
		return b.String()
	}
	if sc.Family == FamilyPolynomial {
		fmt.Fprintf(&b, "M=%d, σ=%s, η=%s", sc.Data.Clients, formatFloat(sc.Data.Noise), formatFloat(sc.Eta))
	} else {
		d := sc.Data
		fmt.Fprintf(&b, "M=%d, d=%d, %d×%d + %d×%d, σ=%s", d.Clients, d.Dim, d.ScarceClients, d.ScarceSamples,
			d.Clients-d.ScarceClients, d.Samples, formatFloat(d.Noise))
		if s.Knob != "gamma" {
			fmt.Fprintf(&b, ", Γ=%s", formatFloat(d.Gamma))
		}
		if s.Knob == "subspace_dim" {
			fmt.Fprintf(&b, ", η=%s·r/d", formatFloat(sc.Eta))
		} else {
			fmt.Fprintf(&b, ", η=%s", formatFloat(sc.Eta))
		}
	}
	switch sc.FedError {
	case model.FedErrorLimit:
		b.WriteString(" · limit")
	case model.FedErrorFinal:
		fmt.Fprintf(&b, " · round %d", sc.Rounds)
	default:
		fmt.Fprintf(&b, " · min over %d rounds", sc.Rounds)
	}
	return b.String()
}

// SweepPresetNames lists the presets that are sweeps.
func SweepPresetNames() []string {
	var out []string
	for _, p := range presets {
		if p.Scenario().IsSweep() {
			out = append(out, p.Name)
		}
	}
	return out
}

// The sweep presets of paper 000 (PAPERS.md §1.9, defaults of §8).

// fedGainBase is E000-3/4's federation: M = 20, d = 100, 10 data-scarce
// clients with n_i = 50 and 10 data-rich ones with n_i = 500, σ = 0.5,
// η = 0.1, racers FedAvg s = 1, 5, 10 and FedProx.
func fedGainBase() Scenario {
	sc := paradox()
	sc.Family = FamilyFedGain
	sc.Data = datasets.Linear{Clients: 20, Dim: 100, Samples: 500, ScarceClients: 10, ScarceSamples: 50, Noise: 0.5}
	sc.Trials = 20
	return sc
}

// fedGainModel is E000-3: FG against model heterogeneity Γ over 25
// log-spaced values in [0.01, 30] (3 significant digits), radius scheme,
// federated error = minimum over T = 200 rounds (PAPERS.md §8).
func fedGainModel() Scenario {
	sc := fedGainBase()
	sc.Rounds = 200
	sc.FedError = model.FedErrorMin
	sc.Sweep = SweepSpec{Knob: "gamma", Grid: logGrid(0.01, 30, 25), Label: "model heterogeneity Γ"}
	return sc
}

// fedGainCovariate is E000-4: FG against the covariate subspace dimension
// r = 1, …, 100, one common truth, η = 0.1·r/d, federated error = the
// closed-form limit (PAPERS.md §8: small r makes iterating slow).
func fedGainCovariate() Scenario {
	sc := fedGainBase()
	sc.Rounds = 2000
	sc.FedError = model.FedErrorLimit
	grid := make([]float64, 100)
	for i := range grid {
		grid[i] = float64(i + 1)
	}
	sc.Sweep = SweepSpec{Knob: "subspace_dim", Grid: grid, Label: "covariate subspace dimension r",
		Adjust: func(p *Scenario) {
			if r := p.Data.SubspaceDim; r > 0 {
				p.Eta *= float64(r) / float64(p.Data.Dim)
			}
		}}
	return sc
}

// polynomialSweep is E000-5: the integrated MSE of fitting U5 against the
// samples per client n_i = 1, …, 10 (N = 20, …, 200), 500 trials, federated
// fit = the closed-form fixed point (PAPERS.md §8).
func polynomialSweep() Scenario {
	sc := paradox()
	sc.Family = FamilyPolynomial
	sc.Data = datasets.Linear{Clients: 20, Dim: 6, Samples: 10, Noise: 0.5}
	sc.Rounds = 100_000
	sc.Trials = 500
	sc.FedError = model.FedErrorLimit
	grid := make([]float64, 10)
	for i := range grid {
		grid[i] = float64(i + 1)
	}
	sc.Sweep = SweepSpec{Knob: "samples", Grid: grid, Label: "samples per client n_i (N = M·n_i)"}
	return sc
}

// logGrid returns n log-spaced values from lo to hi, rounded to three
// significant digits so that they read well in a table.
func logGrid(lo, hi float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		v := lo * math.Pow(hi/lo, float64(i)/float64(n-1))
		out[i], _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	}
	return out
}
