package newton

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// writeBlobs writes a LIBSVM file of three Gaussian classes in d = 4 whose
// centres overlap a little, so that λ and σ² matter.
func writeBlobs(t *testing.T, n int, shift float64, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	for i := 0; i < n; i++ {
		c := i % 3
		fmt.Fprintf(&b, "%d", c+1)
		for k := 0; k < 4; k++ {
			v := rng.NormFloat64()
			if k == c {
				v += shift
			}
			fmt.Fprintf(&b, " %d:%g", k+1, v)
		}
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "blobs.libsvm")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func fileScenario(t *testing.T, path string, kv ...string) experiment.Scenario {
	t.Helper()
	sc := newtonRounds()
	sc.Preset = "newton-rounds"
	set := func(k, v string) {
		if err := sc.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	set("data", path)
	for i := 0; i+1 < len(kv); i += 2 {
		set(kv[i], kv[i+1])
	}
	return sc
}

// TestTuneRule checks tuning against an independent evaluation of its rule
// on the whole grid: every (σ², λ) scored by KRR on the same validation
// split, every Υ computed on the run's federation; the choice of every
// racer but the undamped FedNewton must be the best score (ties to the
// larger λ), and the undamped FedNewton's the best score among the
// settings with Υ ≤ 0.85 (the margin over random-feature draws), or the
// best score when none has — on a problem of its own when it differs.
func TestTuneRule(t *testing.T) {
	if testing.Short() {
		t.Skip("84 ridge problems")
	}
	for _, clients := range []int{4, 16, 40} {
		t.Run(fmt.Sprintf("%d clients", clients), func(t *testing.T) {
			sc := fileScenario(t, writeBlobs(t, 400, 2.5, 3), "tune", "true", "rff_dim", "60", "clients", fmt.Sprint(clients))
			data, err := Family.Prepare(context.Background(), sc, nil)
			if err != nil {
				t.Fatal(err)
			}
			p := data.(*Prepared)
			train, _, err := loadFiles(context.Background(), cfg(sc), sc.Seed)
			if err != nil {
				t.Fatal(err)
			}
			parts, err := partition(context.Background(), cfg(sc).Data, sc.Seed, train)
			if err != nil {
				t.Fatal(err)
			}
			fit, val := train.Split(tuneHoldout, sc.Seed+1)
			type point struct{ bw, lambda, acc, ups float64 }
			var pts []point
			for _, bw := range bandwidthGrid {
				rff := model.NewRFF(train.Dim, 60, bw, sc.Seed)
				for _, l := range lambdaGrid {
					pt := point{bw, l, math.NaN(), math.Inf(1)}
					if r, err := model.NewRidge([]*datasets.Set{fit}, val, rff, l); err == nil {
						_, pt.acc = r.Evaluate(r.KRR, r.NewWork())
					}
					if r, err := model.NewRidge(parts, nil, rff, l); err == nil {
						pt.ups = r.Contraction()
					}
					pts = append(pts, pt)
				}
			}
			best := func(ok func(point) bool) (point, bool) {
				var b point
				found := false
				for _, pt := range pts {
					if math.IsNaN(pt.acc) || !ok(pt) {
						continue
					}
					if !found || pt.acc > b.acc || (pt.acc == b.acc && cmp.Compare(pt.lambda, b.lambda) > 0) {
						b, found = pt, true
					}
				}
				return b, found
			}
			top, _ := best(func(point) bool { return true })
			want, ok := best(func(pt point) bool { return pt.ups < undampedMargin })
			if !ok {
				want = top
			}
			newton := p.Ridge
			if p.Undamped != nil {
				newton = p.Undamped.Ridge
			}
			t.Logf("chose σ²=%g λ=%g, FedNewton's Υ=%.3g; %s", p.Bandwidth, p.Lambda, newton.Contraction(), p.Tuning.Note())
			if p.Bandwidth != top.bw || p.Lambda != top.lambda {
				t.Errorf("tuning chose σ²=%g λ=%g, the best score of the whole grid is at σ²=%g λ=%g (accuracy %.4f)",
					p.Bandwidth, p.Lambda, top.bw, top.lambda, top.acc)
			}
			if (p.Undamped != nil) != (want != top) {
				t.Errorf("FedNewton has a problem of its own: %v; its setting σ²=%g λ=%g, the best σ²=%g λ=%g", p.Undamped != nil, want.bw, want.lambda, top.bw, top.lambda)
			}
			if p.Undamped != nil && (p.Undamped.Bandwidth != want.bw || p.Undamped.Lambda != want.lambda) {
				t.Errorf("FedNewton runs at σ²=%g λ=%g, the rule gives σ²=%g λ=%g", p.Undamped.Bandwidth, p.Undamped.Lambda, want.bw, want.lambda)
			}
			if ok && !(newton.Contraction() < undampedMargin) {
				t.Errorf("a setting with Υ < %g exists, but FedNewton's has Υ = %v", undampedMargin, newton.Contraction())
			}
			if math.Abs(newton.Contraction()-want.ups) > 1e-4*math.Max(1, want.ups) {
				t.Errorf("Υ of FedNewton's prepared problem %v, of its setting %v", newton.Contraction(), want.ups)
			}
			f := Family.Facts(sc, data)
			if got := params(f); got["bandwidth"].How != "tuned" || got["lambda"].How != "tuned" || got["contraction"].Value != roundSig(p.Ridge.Contraction(), 6) {
				t.Errorf("params %+v", f.Params)
			}
		})
	}
}

func params(f experiment.Facts) map[string]experiment.Param {
	out := map[string]experiment.Param{}
	for _, p := range f.Params {
		out[p.Name] = p
	}
	return out
}

// TestFactsParams: a run reports the bandwidth, λ and how each was chosen,
// and Υ, in Params, the summary and the JSON-lines header; a Υ ≥ 1 is a
// warning that names its cause.
func TestFactsParams(t *testing.T) {
	sc := newtonRounds()
	sc.Preset = "newton-rounds"
	experiment.Update(&sc, func(c *Config) { c.Data.Clients, c.Data.Samples, c.Data.RFFDim, c.Data.TestSize = 5, 300, 40, 100 })
	data, err := Family.Prepare(context.Background(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := Family.Facts(sc, data)
	ps := params(f)
	ups := data.(*Prepared).Ridge.Contraction()
	if ps["bandwidth"] != (experiment.Param{Name: "bandwidth", Value: newtonBandwidth, How: "given"}) ||
		ps["lambda"] != (experiment.Param{Name: "lambda", Value: 1e-4, How: "given"}) ||
		ps["contraction"].Value != roundSig(ups, 6) || ps["contraction"].How != "computed" {
		t.Errorf("params %+v", f.Params)
	}
	if want := fmt.Sprintf("Υ=%.3g", ups); !strings.Contains(f.Summary, want) {
		t.Errorf("summary %q lacks %q", f.Summary, want)
	}
	h, _ := experiment.NewHeader(sc, f).MarshalJSON()
	var rec struct {
		Params map[string]struct {
			Value float64
			How   string
		}
	}
	if err := json.Unmarshal(h, &rec); err != nil || rec.Params["contraction"].Value != roundSig(ups, 6) || rec.Params["lambda"].How != "given" {
		t.Errorf("header %s (%v)", h, err)
	}
	if ups >= 1 || len(f.Warnings) > 0 {
		t.Errorf("Υ = %v, warnings %q: want a contracting run without warnings", ups, f.Warnings)
	}
	// Few samples per client, λ = 1e-7: Υ ≥ 1, said with its cause.
	experiment.Update(&sc, func(c *Config) { c.Data.Samples, c.Data.Lambda = 20, 1e-7 })
	data, err = Family.Prepare(context.Background(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	f = Family.Facts(sc, data)
	if len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], "FedNewton will diverge") || !strings.Contains(f.Warnings[0], "because of") ||
		!strings.Contains(f.Summary, "≥ 1: FedNewton diverges") {
		t.Errorf("Υ = %v: summary %q, warnings %q", data.(*Prepared).Ridge.Contraction(), f.Summary, f.Warnings)
	}
}

// TestSweepDiverged: in a sweep point where FedNewton diverges, its test
// MSE is left out (+Inf), diverged is 1 and diverged_trials counts it; the
// table's statistic sums the count over trials; Υ is the same for every
// racer and matches the prepared problem.
func TestSweepDiverged(t *testing.T) {
	sc := newtonLocalSize()
	sc.Preset = "newton-local-size"
	p, err := sc.PointScenario(len(sc.Sweep.Grid)-1, 0) // m = 125 clients of 80 samples: Υ > 1
	if err != nil {
		t.Fatal(err)
	}
	experiment.Update(&p, func(c *Config) { c.Data.Lambda, c.Data.TestSize = 1e-6, 200 })
	rows, err := Family.Sweeps().Evaluate(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	ms := Family.Sweeps().SweepMetrics(sc)
	idx := func(name string) int {
		for i, m := range ms {
			if m.Name == name {
				return i
			}
		}
		t.Fatalf("no metric %s", name)
		return -1
	}
	labels := Family.Sweeps().SweepLabels(sc)
	_, ridge, _ := synthetic(context.Background(), cfg(p).Data, p.Seed)
	ups := ridge.Contraction()
	if ups <= 1 {
		t.Fatalf("Υ = %v, want > 1 for this point", ups)
	}
	for r, row := range rows {
		if got := row[idx(ContractionMetric)]; math.Abs(got-ups) > 1e-3*ups {
			t.Errorf("%s: contraction %v, want %v", labels[r], got, ups)
		}
		div, cnt := row[idx(DivergedMetric)], row[idx(DivergedTrialsMetric)]
		if strings.HasPrefix(labels[r], "FedNewton t=8") && (div != 1 || cnt != 1 || !math.IsInf(row[0], 1)) {
			t.Errorf("%s: mse %v diverged %v count %v, want +Inf, 1, 1", labels[r], row[0], div, cnt)
		}
		if labels[r] == "KRR" && (div != 0 || math.IsInf(row[0], 0)) {
			t.Errorf("KRR: %v", row)
		}
	}
	stat := Family.Sweeps().SweepStat(sc)
	cells := [][][]float64{rows, rows, nil}
	for r := range rows {
		mean, std, n := stat(cells, r, idx(DivergedTrialsMetric))
		if want := 2 * rows[r][idx(DivergedTrialsMetric)]; mean != want || !math.IsNaN(std) || n != 2 {
			t.Errorf("%s: diverged_trials stat %v ± %v over %d, want the count %v", labels[r], mean, std, n, want)
		}
	}
}

// TestNewtonRoundsShape holds the newton-rounds preset to the two shapes
// of E003-5 (Fig. 5) its documentation claims on seeds 1–5: Υ < 1, the
// final test MSE ordered FedNewton ≤ FedProx ≤ FedAvg ≤ DKRR, and FedProx's
// gain after round 1 under 30 % of its first-round gain (from DKRR, where
// every racer starts).
func TestNewtonRoundsFigure5Shape(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		sc := newtonRounds()
		sc.Seed = seed
		data, err := Family.Prepare(context.Background(), sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := data.(*Prepared)
		final := map[string][]float64{}
		for _, r := range Family.Racers(sc) {
			var mse []float64
			if err := r.Run(context.Background(), data, sc.Rounds, func(rd experiment.Round) { mse = append(mse, rd.Values[0]) }); err != nil {
				t.Fatalf("seed %d: %s: %v", seed, r.Label, err)
			}
			final[r.Label] = mse
		}
		last := func(label string) float64 { m := final[label]; return m[len(m)-1] }
		newt, prox, avg, dkrr := last("FedNewton"), last("FedProx"), last("FedAvg s=2"), last("DKRR")
		if ups := p.Ridge.Contraction(); !(ups < 1) || !(newt <= prox && prox <= avg && avg <= dkrr) {
			t.Errorf("seed %d: Υ = %.3g, final MSE FedNewton %.5f, FedProx %.5f, FedAvg %.5f, DKRR %.5f: want Υ < 1 and that order",
				seed, ups, newt, prox, avg, dkrr)
		}
		px := final["FedProx"]
		first, after := dkrr-px[0], px[0]-px[len(px)-1]
		if !(first > 0 && after < 0.3*first) {
			t.Errorf("seed %d: FedProx gains %.3g in round 1 and %.3g after: want under 30 %%", seed, first, after)
		}
	}
}

// TestSameBytesAnyCPUs: a prepared newton problem (tuned, so the parallel
// grid over σ² is exercised) is bit for bit the same on 1 and 2 CPUs.
func TestSameBytesAnyCPUs(t *testing.T) {
	sc := newtonRounds()
	experiment.Update(&sc, func(c *Config) {
		c.Data.Clients, c.Data.Samples, c.Data.RFFDim, c.Data.TestSize, c.Data.Tune = 6, 150, 70, 200, true
	})
	prepare := func(procs int) *Prepared {
		prev := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(prev)
		data, err := Family.Prepare(context.Background(), sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		return data.(*Prepared)
	}
	a, b := prepare(1), prepare(2)
	same := func(x, y []float64) bool {
		for k := range x {
			if math.Float64bits(x[k]) != math.Float64bits(y[k]) {
				return false
			}
		}
		return len(x) == len(y)
	}
	if a.Bandwidth != b.Bandwidth || a.Lambda != b.Lambda || !same(a.Ridge.KRR, b.Ridge.KRR) || !same(a.Ridge.DKRR, b.Ridge.DKRR) ||
		math.Float64bits(a.Ridge.Contraction()) != math.Float64bits(b.Ridge.Contraction()) {
		t.Errorf("1 CPU: σ²=%v λ=%v Υ=%v; 2 CPUs: σ²=%v λ=%v Υ=%v (or KRR/DKRR differ)",
			a.Bandwidth, a.Lambda, a.Ridge.Contraction(), b.Bandwidth, b.Lambda, b.Ridge.Contraction())
	}
}

// TestFileChoiceKnobs: the keys of a data file with named values take
// exactly those, and say which when refused.
func TestFileChoiceKnobs(t *testing.T) {
	sc := preset(t, "newton-rounds")
	for _, test := range []struct{ key, good, want string }{
		{"task", "classification", `task="x": must be auto, classification or regression`},
		{"label_column", "last", `label_column="x": must be first or last`},
		{"partition", "dirichlet", `partition="x": must be iid or dirichlet`},
	} {
		if err := sc.Set(test.key, "x"); err == nil || err.Error() != test.want {
			t.Errorf("%s=x: %v, want %q", test.key, err, test.want)
		}
		if err := sc.Set(test.key, test.good); err != nil || sc.Get(test.key) != test.good {
			t.Errorf("%s=%s: %v, reads back %q", test.key, test.good, err, sc.Get(test.key))
		}
	}
	if d := cfg(sc).Data; d.Task != "classification" || !d.LabelLast || d.DirichletC != 0.5 {
		t.Errorf("data configuration %+v, want task, label column and Dirichlet c = 0.5 set", d)
	}
}

// TestDampedRacer: on a file run at a λ small enough for FedNewton's Υ to
// exceed 1, the paper's FedNewton diverges, the damped racer (step
// 2/(1 + μ_max), reported in the params with its rate) converges to KRR,
// and the rate in the params is (μ_max − 1)/(μ_max + 1) = (Υ)/(Υ + 2).
func TestDampedRacer(t *testing.T) {
	sc := fileScenario(t, writeBlobs(t, 300, 2.5, 5), "rff_dim", "60", "clients", "12", "lambda", "1e-7", "bandwidth", "1")
	sc.Rounds = 60
	res, err := experiment.NewEngine().Run(context.Background(), sc, experiment.Observer{})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Data.(*Prepared)
	ups := p.Ridge.Contraction()
	if !(ups > 1) {
		t.Fatalf("Υ = %v: the test needs a diverging FedNewton", ups)
	}
	got := params(res.Facts)
	if rate := got["contraction_damped"].Value; math.Abs(rate-ups/(ups+2)) > 1e-4 {
		t.Errorf("damped rate %v, Υ/(Υ + 2) = %v", rate, ups/(ups+2))
	}
	var dist []float64
	for i, r := range res.Racers {
		switch r.Label {
		case "FedNewton":
			if res.Errs[i] == nil {
				t.Errorf("FedNewton at Υ = %v did not diverge", ups)
			}
		case "FedNewton damped":
			if res.Errs[i] != nil {
				t.Errorf("damped FedNewton: %v", res.Errs[i])
			}
			_ = r.Run(context.Background(), p, sc.Rounds, func(rd experiment.Round) { dist = append(dist, rd.Values[3]) })
		}
	}
	if len(dist) != sc.Rounds || !(dist[len(dist)-1] < dist[0]*math.Pow(got["contraction_damped"].Value, 40)) {
		t.Errorf("damped FedNewton's distance to KRR %v after %d rounds from %v", dist[len(dist)-1], len(dist), dist[0])
	}
}
