package linear

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// Metrics implements experiment.Sweeps: per trial, the federation gain
// FG = ‖θ̂_j − θ_j*‖ / ‖θ_fed − θ_j*‖ (squared on request) of the first
// data-scarce and the first data-rich client (E000-3/4, docs/papers.md §1.8–§1.9),
// θ̂_j the client's minimum-norm least-squares estimate, with its median and
// 10–90 % spread over the trials and, where Γ varies, the realised Γ; or the
// exact integrated squared error ∫_{−1}^{1} (f̂ − U5)² dx of each racer's
// federated fit, its inverse and the total sample size N (E000-5).
func (sweeps) Metrics(sc experiment.Scenario, c Config) []experiment.SweepMetric {
	if c.Kind == polynomialKind {
		ms, _ := polynomialMetrics()
		ms[0].Theory = polynomialTheory(sc, c, false)
		ms[1].Theory = polynomialTheory(sc, c, true)
		return ms
	}
	ms, roles := fedGainMetrics(sc, c)
	for i, r := range roles {
		if r.stat == statMean && r.gainer >= 0 {
			ms[i].Theory = fedGainTheory(sc, c, r.gainer)
		}
	}
	return ms
}

// The statistics a federation-gain metric reports over the trials.
const (
	statMean   = iota // fg_stat: the mean of the per-trial FG, or the ratio of means
	statMedian        // the median of the per-trial FG
	statP10           // its 10 % quantile
	statP90           // its 90 % quantile
	statGamma         // the realised Γ: mean and standard deviation over trials
)

// fgRole is what one federation-gain metric reports: a statistic of one
// gainer's FG, or (gainer −1) the realised Γ.
type fgRole struct{ gainer, stat int }

// fedGainMetrics lists the federation-gain metrics of a sweep and what each
// reports: per gainer, FG (charted, with its median as the Spread line and,
// on the r axis, the mark at r = n_j) and its median, 10 % and 90 %
// quantiles (one column each); then the realised max-pairwise Γ when Γ
// varies or is set (docs/papers.md §8: show it; the x axis of Fig 4).
func fedGainMetrics(sc experiment.Scenario, c Config) ([]experiment.SweepMetric, []fgRole) {
	var ms []experiment.SweepMetric
	var roles []fgRole
	for j, name := range gainerNames {
		stem := "fg_" + name
		who := []string{"first data-scarce client", "first data-rich client"}[j]
		fg := "FG"
		if c.Squared {
			fg = "FG² (ratio of squared errors)"
		}
		caption := fg + ", " + who + ", trial mean"
		if c.RatioOfMeans {
			caption = fg + ", " + who + ", ratio of trial-averaged errors"
		}
		ms = append(ms, experiment.SweepMetric{Name: stem, Caption: caption, Ref: 1, RefNote: "FG = 1",
			Spread: stem + "_median", Marks: squareMarks(sc, c, j)})
		roles = append(roles, fgRole{j, statMean})
		for _, q := range []struct {
			suffix, caption string
			stat            int
		}{{"_median", "median", statMedian}, {"_p10", "10 % quantile", statP10}, {"_p90", "90 % quantile", statP90}} {
			ms = append(ms, experiment.SweepMetric{Name: stem + q.suffix, Caption: fg + ", " + who + ", " + q.caption + " over trials",
				Ref: 1, RefNote: "FG = 1", TableOnly: true, Single: true})
			roles = append(roles, fgRole{j, q.stat})
		}
	}
	if sc.Sweep.Knob == "gamma" || c.Data.Gamma > 0 {
		ms = append(ms, experiment.SweepMetric{Name: "gamma_realised", Caption: "realised Γ = max_{i,j} ‖θ_i* − θ_j*‖",
			Ref: math.NaN(), TableOnly: true})
		roles = append(roles, fgRole{-1, statGamma})
	}
	return ms, roles
}

// squareMarks marks, on a sweep over the covariate subspace dimension r, the
// value r = n_j of gainer j: its local design (n_j rows on r coordinates) is
// square there, and the min-norm error σ²tr((X_jᵀX_j)⁻¹) of a Gaussian design
// has infinite expectation for |n_j − r| ≤ 1 (inverse Wishart), so single
// trials spike (FG in the thousands) and the mean over trials is unstable
// (docs/papers.md §8 CORRECTED).
func squareMarks(sc experiment.Scenario, c Config, j int) []experiment.Mark {
	if sc.Sweep.Knob != "subspace_dim" || len(sc.Sweep.Grid) == 0 {
		return nil
	}
	d := c.Data
	n := d.Samples
	who := "data-rich"
	if j == 0 {
		if d.ScarceClients == 0 {
			return nil
		}
		n, who = d.ScarceSamples, "data-scarce"
	}
	if at := float64(n); at >= slices.Min(sc.Sweep.Grid) && at <= slices.Max(sc.Sweep.Grid) {
		return []experiment.Mark{{At: at, Note: fmt.Sprintf("r = n_j = %d: the %s client's design is square, so its min-norm error has "+
			"infinite expected square (for |r − n_j| ≤ 1) and single trials spike; read the median and the 10–90 %% band here", n, who)}}
	}
	return nil
}

// polynomialMetrics lists the metrics of the polynomial sweep and which
// per-trial value each reads (−1: 1/mean MSE, computed over the trials).
func polynomialMetrics() ([]experiment.SweepMetric, []int) {
	return []experiment.SweepMetric{
		{Name: "mse", Caption: "MSE = ∫(f̂ − U5)² dx over [−1, 1]", Ref: math.NaN()},
		{Name: "inv_mse", Caption: "1/MSE = 1/(mean MSE over trials), linear in N at the minimax rate", Ref: math.NaN()},
		{Name: "inv_mse_trial", Caption: "per-trial 1/MSE (its mean over trials is not the paper's 1/MSE)", Ref: math.NaN(), TableOnly: true},
		{Name: "total_samples", Caption: "total sample size N = M·n_i", Ref: math.NaN(), TableOnly: true},
	}, []int{0, -1, 1, 2}
}

// Labels implements experiment.Sweeps: one curve per racer.
func (sweeps) Labels(_ experiment.Scenario, c Config) []string {
	var out []string
	for _, r := range resolve(c) {
		out = append(out, r.label)
	}
	return out
}

// Evaluate implements experiment.Sweeps.
func (sweeps) Evaluate(ctx context.Context, sc experiment.Scenario, c Config) ([][]float64, error) {
	if c.Kind == polynomialKind {
		return evalPolynomial(ctx, sc, c)
	}
	return evalFedGainRaw(ctx, sc, c)
}

// Stat implements experiment.Sweeps: the federation gain aggregates over
// the trials as docs/papers.md §8 says (fedGainStat); the polynomial's
// metrics are plain means, but for 1/MSE, the inverse of the mean MSE.
func (sweeps) Stat(sc experiment.Scenario, c Config) experiment.StatFunc {
	if c.Kind == polynomialKind {
		return polynomialStat
	}
	return fedGainStat(sc, c)
}

// validateSweep rejects what the closed-form sweeps cannot do.
func validateSweep(c Config) error {
	if err := validateClosedForm(c); err != nil {
		return err
	}
	if c.Kind == polynomialKind {
		if err := polynomial(c).Validate(); err != nil {
			return &experiment.InputError{Msg: err.Error()}
		}
	}
	return nil
}

// validateClosedForm rejects minibatch racers: the sweeps use the affine
// round map of full-batch FedAvg and FedProx (algorithms.RoundMap).
func validateClosedForm(c Config) error {
	for _, r := range resolve(c) {
		if r.batch != 0 {
			return experiment.Errorf("batch=%d (racer %s): sweeps use full-batch local updates, their closed-form round maps; allowed: batch=0",
				r.batch, r.label)
		}
	}
	return nil
}

// gainerNames are the clients whose FG is reported, in metric order.
var gainerNames = []string{"scarce", "rich"}

// evalFedGainRaw returns one trial's raw material for FG, per racer: the
// realised Γ of the trial's truths, the local errors ‖θ̂_j − θ_j*‖ of the
// gainers, then each gainer's federated error curve ‖θ_t − θ_j*‖ over
// t = 0…T (min mode), or its one value at the final round or the limit
// (fedGainSplit reads it back). NaN for a gainer the federation lacks. The
// federation is drawn compact (a covariate subspace client as its n×r
// non-zero columns) into the worker's buffers.
func evalFedGainRaw(ctx context.Context, sc experiment.Scenario, c Config) ([][]float64, error) {
	buf := evalPool.Get().(*evalBuffers)
	defer evalPool.Put(buf)
	if err := c.Data.GenerateInto(&buf.fed, sc.Seed, true); err != nil {
		return nil, &experiment.InputError{Msg: err.Error()}
	}
	fed := &buf.fed
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
			local[k] = model.Distance(localEstimate(fed, c), c.Truth)
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
	curves, err := federatedCurves(ctx, sc.Rounds, c, fed, len(gainers), errs, buf)
	if err != nil {
		return nil, err
	}
	out := make([][]float64, len(curves))
	for r, c := range curves {
		row := append([]float64{fed.RealisedGamma}, local...)
		for j := range gainers {
			row = append(row, c[j]...)
		}
		out[r] = row
	}
	return out, nil
}

// localEstimate is a client's minimum-norm least-squares estimate θ̂_j = X_j⁺y_j
// (docs/papers.md §1.8), zero outside its covariate subspace.
func localEstimate(fed *datasets.Federation, c *datasets.Client) []float64 {
	if !fed.Compact || c.Support == nil {
		return model.MinNormLeastSquaresOn(c.X, c.Y, c.N, fed.Dim, c.Support)
	}
	sol := model.MinNormLeastSquares(c.X, c.Y, c.N, len(c.Support))
	theta := make([]float64, fed.Dim)
	for a, k := range c.Support {
		theta[k] = sol[a]
	}
	return theta
}

// evalBuffers is the memory of one evaluation, reused from trial to trial
// through evalPool (the engine's sweep workers are anonymous; a pool keeps
// about one per worker): the drawn federation, the clients' statistics, the
// round maps and their scratch, the iterates. With them a trial allocates
// only its results and what the local least-squares estimates need.
type evalBuffers struct {
	fed              datasets.Federation
	locals           []model.Local
	lw               model.LocalWork
	maps             algorithms.MapBuilder
	limit            algorithms.LimitWork
	specs            []algorithms.MapSpec
	w                []float64
	theta, next, cur []float64
}

var evalPool = sync.Pool{New: func() any {
	// A sweep is parallel over trials already: one goroutine per build.
	return &evalBuffers{maps: algorithms.MapBuilder{Workers: 1}}
}}

// fedGainSplit reads the realised Γ, gainer j's local error and its
// federated error curve from a racer's row of evalFedGainRaw.
func fedGainSplit(row []float64, j int) (gamma, local float64, curve []float64) {
	k := len(gainerNames)
	n := (len(row) - 1 - k) / k
	if n < 1 || j >= k {
		return math.NaN(), math.NaN(), nil // not a row of evalFedGainRaw
	}
	return row[0], row[1+j], row[1+k+j*n : 1+k+(j+1)*n]
}

// fedGainStat aggregates FG over the trials (docs/papers.md §8 CORRECTED). Per
// trial t, FG_t = local_t / fed_t, fed_t the minimum over rounds of that
// trial's federated error curve (its final value or the limit in the other
// fed_error modes), both squared with fg_ratio=squared. The FG metric is
// the mean of the FG_t (the default: "FG averaged over 20 trials", which
// puts the steepest rise of Fig 5 at r = 16–19), or with
// fg_stat=ratio_of_means the trial-averaged local error over the minimum,
// across rounds, of the trial-averaged federated error curve (a single trial
// with an uncovered coordinate holds that curve near 53 until r = 33); its
// spread is the sample standard deviation of the FG_t either way. The
// median, 10 % and 90 % metrics are quantiles of the FG_t (Quantile); the
// realised Γ its mean and standard deviation over the trials.
func fedGainStat(sc experiment.Scenario, c Config) experiment.StatFunc {
	_, roles := fedGainMetrics(sc, c)
	return func(cells [][][]float64, racer, metric int) (float64, float64, int) {
		if metric >= len(roles) {
			return math.NaN(), math.NaN(), 0
		}
		role := roles[metric]
		if role.stat == statGamma {
			return gammaStat(cells, racer)
		}
		tr := collectGains(cells, racer, role.gainer, c.Squared)
		n := len(tr.ratios)
		if n == 0 {
			return math.NaN(), math.NaN(), 0
		}
		switch role.stat {
		case statMedian:
			return Quantile(tr.ratios, 0.5), math.NaN(), n
		case statP10:
			return Quantile(tr.ratios, 0.1), math.NaN(), n
		case statP90:
			return Quantile(tr.ratios, 0.9), math.NaN(), n
		}
		mean := experiment.Mean(tr.ratios)
		if c.RatioOfMeans {
			mean = tr.localSum / slices.Min(tr.curveSum) // the 1/n factors cancel
		}
		return mean, experiment.SampleStd(tr.ratios), n
	}
}

// gains is one gainer's FG over the trials done: the per-trial FG, and the
// sums over trials of the (squared, with fg_ratio=squared) local error and
// federated error curve.
type gains struct {
	ratios   []float64
	localSum float64
	curveSum []float64
}

// collectGains reads gainer j's FG from one racer's row of every trial
// done, leaving out trials where it is not finite.
func collectGains(cells [][][]float64, racer, j int, squared bool) gains {
	pow := func(x float64) float64 {
		if squared {
			return x * x
		}
		return x
	}
	var g gains
	for _, cell := range cells {
		if cell == nil || racer >= len(cell) {
			continue
		}
		_, local, curve := fedGainSplit(cell[racer], j)
		if !finite(local) || len(curve) == 0 || !allFinite(curve) {
			continue
		}
		if g.curveSum == nil {
			g.curveSum = make([]float64, len(curve))
		}
		g.localSum += pow(local)
		for t, e := range curve {
			g.curveSum[t] += pow(e)
		}
		g.ratios = append(g.ratios, model.Gain(local, slices.Min(curve), squared))
	}
	return g
}

// gammaStat is the mean and standard deviation over the trials of the
// realised Γ.
func gammaStat(cells [][][]float64, racer int) (float64, float64, int) {
	var gammas []float64
	for _, cell := range cells {
		if cell == nil || racer >= len(cell) {
			continue
		}
		if gamma, _, _ := fedGainSplit(cell[racer], 0); finite(gamma) {
			gammas = append(gammas, gamma)
		}
	}
	if len(gammas) == 0 {
		return math.NaN(), math.NaN(), 0
	}
	return experiment.Mean(gammas), experiment.SampleStd(gammas), len(gammas)
}

// Quantile returns the p-quantile of xs by linear interpolation between the
// order statistics, at position h = (n−1)·p of the sorted values (numpy's
// default, Hyndman–Fan type 7); xs is not modified. NaN for no value.
func Quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	h := float64(len(s)-1) * p
	lo := int(math.Floor(h))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (h-float64(lo))*(s[hi]-s[lo])
}

// polynomialStat aggregates the polynomial sweep's metrics over the trials:
// mean and sample standard deviation of the per-trial values, except 1/MSE,
// which is 1/(mean MSE) as the paper plots it (panel b), with no spread of
// its own.
func polynomialStat(cells [][][]float64, racer, metric int) (float64, float64, int) {
	_, cols := polynomialMetrics()
	if metric >= len(cols) {
		return math.NaN(), math.NaN(), 0
	}
	col := cols[metric]
	var vals []float64
	for _, cell := range cells {
		if cell == nil || racer >= len(cell) {
			continue
		}
		row := cell[racer]
		k := max(col, 0)
		if k < len(row) && finite(row[k]) {
			vals = append(vals, row[k])
		}
	}
	if len(vals) == 0 {
		return math.NaN(), math.NaN(), 0
	}
	if col < 0 {
		return 1 / experiment.Mean(vals), math.NaN(), len(vals)
	}
	return experiment.Mean(vals), experiment.SampleStd(vals), len(vals)
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

// evalPolynomial returns one trial's row per racer: the integrated squared
// error of its federated fit, its inverse, and the total sample size N.
func evalPolynomial(ctx context.Context, sc experiment.Scenario, c Config) ([][]float64, error) {
	fed, err := polynomial(c).Generate(sc.Seed)
	if err != nil {
		return nil, &experiment.InputError{Msg: err.Error()}
	}
	buf := evalPool.Get().(*evalBuffers)
	defer evalPool.Put(buf)
	delta := make([]float64, fed.Dim)
	mse := func(theta, out []float64) {
		for k := range delta {
			delta[k] = theta[k] - fed.Truth[k]
		}
		out[0] = model.IntegratedSquare(delta)
	}
	out, err := federatedErrors(ctx, sc.Rounds, c, fed, 1, mse, buf)
	if err != nil {
		return nil, err
	}
	n := float64(fed.N())
	for i, row := range out {
		out[i] = []float64{row[0], 1 / row[0], n}
	}
	return out, nil
}

// federatedErrors returns, for every racer, the k errors that errs measures
// of its federated model: at the closed-form limit, at the final round T, or
// the minimum over rounds t = 0, …, T from θ_0 = 0 (docs/papers.md §8), each
// error minimised separately.
func federatedErrors(ctx context.Context, rounds int, c Config, fed *datasets.Federation, k int,
	errs func(theta, out []float64), buf *evalBuffers) ([][]float64, error) {
	curves, err := federatedCurves(ctx, rounds, c, fed, k, errs, buf)
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
// product per round); the maps of all racers are built in one pass over the
// clients' statistics (algorithms.MapBuilder), in buf's memory.
func federatedCurves(ctx context.Context, rounds int, c Config, fed *datasets.Federation, k int,
	errs func(theta, out []float64), buf *evalBuffers) ([][][]float64, error) {
	racers := resolve(c)
	maps, err := buildMaps(ctx, fed, racers, buf)
	if err != nil {
		return nil, err
	}
	d := fed.Dim
	buf.cur = slices.Grow(buf.cur[:0], k)[:k]
	buf.theta = slices.Grow(buf.theta[:0], d)[:d]
	buf.next = slices.Grow(buf.next[:0], d)[:d]
	out := make([][][]float64, len(racers))
	for i, r := range racers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if c.FedError == model.FedErrorLimit {
			maps[i].LimitTo(buf.theta, &buf.limit)
			errs(buf.theta, buf.cur)
			out[i] = make([][]float64, k)
			for j := range out[i] {
				out[i][j] = []float64{buf.cur[j]}
			}
			continue
		}
		if out[i], err = iterate(ctx, maps[i], r, rounds, c.FedError, errs, buf); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// buildMaps builds the round maps of the racers in one pass over the
// clients' statistics (algorithms.MapBuilder), in buf's memory.
func buildMaps(ctx context.Context, fed *datasets.Federation, racers []resolved, buf *evalBuffers) ([]algorithms.RoundMap, error) {
	d, m := fed.Dim, len(fed.Clients)
	if cap(buf.locals) < m {
		buf.locals = append(buf.locals[:cap(buf.locals)], make([]model.Local, m-cap(buf.locals))...)
	}
	locals := buf.locals[:m]
	buf.w = slices.Grow(buf.w[:0], m)[:m]
	total := fed.N()
	for i := range fed.Clients {
		c := &fed.Clients[i]
		locals[i].Set(c.X, c.Y, c.N, d, c.Support, fed.Compact, &buf.lw)
		buf.w[i] = float64(c.N) / float64(total)
	}
	buf.specs = buf.specs[:0]
	for _, r := range racers {
		buf.specs = append(buf.specs, r.mapSpec())
	}
	return buf.maps.Build(ctx, locals, buf.w, d, buf.specs, nil, nil)
}

// iterate runs racer r's round map from θ_0 = 0 for rounds rounds and
// returns each error's curve over t = 0, …, T (fed_error=min) or its value
// at the final round; a NaN error at t = 0 (no such client) stays NaN.
func iterate(ctx context.Context, m algorithms.RoundMap, r resolved, rounds int, fedErr model.FedError,
	errs func(theta, out []float64), buf *evalBuffers) ([][]float64, error) {
	cur := buf.cur
	theta, next := buf.theta, buf.next
	clear(theta)
	errs(theta, cur) // t = 0
	out := make([][]float64, len(cur))
	for j := range out {
		out[j] = []float64{cur[j]}
		if fedErr == model.FedErrorMin {
			out[j] = slices.Grow(out[j], rounds)
		}
	}
	for t := 1; t <= rounds; t++ {
		if t%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		m.Step(next, theta)
		theta, next = next, theta
		errs(theta, cur)
		for j, e := range cur {
			if math.IsNaN(out[j][0]) { // no such client
				continue
			}
			if math.IsNaN(e) || math.IsInf(e, 0) || e > 1e12 {
				return nil, &experiment.RacerError{Label: r.label, Err: &algorithms.DivergedError{Round: t, Eta: r.eta, Limit: math.NaN()}}
			}
			if fedErr == model.FedErrorFinal {
				out[j][0] = e
			} else {
				out[j] = append(out[j], e)
			}
		}
	}
	return out, nil
}

// polynomial returns the E000-5 federation of a configuration: the data
// knobs clients, samples, noise and dim (= degree + 1) are reused.
func polynomial(c Config) datasets.Polynomial {
	d := c.Data
	return datasets.Polynomial{Clients: d.Clients, Samples: d.Samples, Degree: d.Dim - 1, Noise: d.Noise}
}

// Summary implements experiment.Sweeps.
func (sweeps) Summary(sc experiment.Scenario, c Config) string {
	s := sc.Sweep
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s…%s × %d trials · ", s.Knob, experiment.FormatFloat(s.Grid[0]), experiment.FormatFloat(s.Grid[len(s.Grid)-1]), sc.Trials)
	d := c.Data
	if c.Kind == polynomialKind {
		fmt.Fprintf(&b, "M=%d, σ=%s, η=%s", d.Clients, experiment.FormatFloat(d.Noise), experiment.FormatFloat(c.Eta))
	} else {
		fmt.Fprintf(&b, "M=%d, d=%d, %d×%d + %d×%d, σ=%s", d.Clients, d.Dim, d.ScarceClients, d.ScarceSamples,
			d.Clients-d.ScarceClients, d.Samples, experiment.FormatFloat(d.Noise))
		if s.Knob != "gamma" {
			fmt.Fprintf(&b, ", Γ=%s", experiment.FormatFloat(d.Gamma))
		}
		if s.Knob == "subspace_dim" {
			fmt.Fprintf(&b, ", η=%s·r/d", experiment.FormatFloat(c.Eta))
		} else {
			fmt.Fprintf(&b, ", η=%s", experiment.FormatFloat(c.Eta))
		}
	}
	switch c.FedError {
	case model.FedErrorLimit:
		b.WriteString(" · limit")
	case model.FedErrorFinal:
		fmt.Fprintf(&b, " · round %d", sc.Rounds)
	default:
		fmt.Fprintf(&b, " · min over %d rounds", sc.Rounds)
	}
	if c.Kind == fedGainKind && c.RatioOfMeans {
		b.WriteString(" · ratio of means")
	}
	return b.String()
}
