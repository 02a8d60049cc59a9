package lowrank

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/internal/slowtest"
	"github.com/fedscope/fedscope/model"
)

func race(t *testing.T, sc experiment.Scenario) map[string][]experiment.Round {
	t.Helper()
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	data, err := Family.Prepare(context.Background(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]experiment.Round{}
	for _, r := range Family.Racers(sc) {
		if err := r.Run(context.Background(), data, sc.Rounds, func(rd experiment.Round) { out[r.Label] = append(out[r.Label], rd) }); err != nil {
			t.Fatalf("%s: %v", r.Label, err)
		}
	}
	return out
}

// TestRacerIndependence: a racer's rounds — its Γ above all — do not depend
// on which other racers run (the server's samples are a knob, not the
// largest rank present).
func TestRacerIndependence(t *testing.T) {
	slowtest.Skip(t)
	sc := lowRank()
	sc.Preset = "lowrank"
	alone := sc
	experiment.Update(&alone, func(c *Config) { c.Racers = c.Racers[:1] }) // FedLRGD r=3
	a, b := race(t, alone)["FedLRGD r=3"], race(t, sc)["FedLRGD r=3"]
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("%d epochs alone, %d with the others", len(a), len(b))
	}
	for k := range a {
		for m := range a[k].Values {
			if x, y := a[k].Values[m], b[k].Values[m]; x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
				t.Fatalf("epoch %d, %s: %v alone, %v with the others", k+1, metrics[m].Name, x, y)
			}
		}
	}
	// Epoch 1 costs r² + (R − r)r gradients (the server's samples beyond the nodes).
	if got, want := a[0].Values[1], float64(3*3+(40-3)*3); got != want {
		t.Errorf("Γ after epoch 1 = %v, want r² + (R−r)r = %v", got, want)
	}
}

// TestValidate: ranks above the server's samples and bad cut-offs are
// input errors naming the value.
func TestValidate(t *testing.T) {
	sc := lowRank()
	sc.Preset = "lowrank"
	for _, kv := range [][2]string{{"server", "20"}, {"svd_tol", "1"}} {
		bad := sc
		if err := bad.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
		err := bad.Validate()
		if _, ok := err.(*experiment.InputError); !ok || !strings.Contains(err.Error(), kv[0]+"=") && !strings.Contains(err.Error(), "R=20") {
			t.Errorf("%s=%s: %v", kv[0], kv[1], err)
		}
	}
}

// TestComplexityEvaluate checks points of lowrank-complexity against the
// racers run directly (not lean, F by model.Federated.Value): Γ and the
// epoch are those of the first epoch from which every later suboptimality
// is at most ε, +Inf when the last one is above it; several ε of one trial
// read one run.
func TestComplexityEvaluate(t *testing.T) {
	slowtest.Skip(t)
	sc := lowRankComplexity()
	sc.Preset = "lowrank-complexity"
	for _, point := range []int{2, 4, 6} { // ε = 1e-3, 1e-4, 1e-5
		p, err := sc.PointScenario(point, 0)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := Family.Sweeps().Evaluate(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		eps := cfg(p).Epsilon
		data, _ := Family.Prepare(context.Background(), p, nil)
		fp := data.(*model.Federated)
		c := cfg(p)
		for i, r := range resolve(cfg(p)) {
			var alg algorithms.FederatedAlgorithm = algorithms.LocalSGD{Steps: r.steps, Phi: c.Phi, Seed: p.Seed}
			if r.spec.Kind == KindFedLRGD {
				alg = algorithms.FedLRGD{Rank: r.rank, Iters: c.Iters, Phi: c.Phi, Seed: p.Seed}
			}
			var epochs []algorithms.EpochRound
			_ = alg.Run(context.Background(), fp, p.Rounds, func(e algorithms.EpochRound) { epochs = append(epochs, e) })
			want := []float64{math.Inf(1), math.Inf(1)}
			for k := len(epochs) - 1; k >= 0 && epochs[k].Subopt <= eps; k-- {
				want = []float64{epochs[k].Oracle, float64(epochs[k].Index)}
			}
			if rows[i][0] != want[0] || rows[i][1] != want[1] {
				t.Errorf("%s at ε=%g: %v, direct run %v", r.label, eps, rows[i], want)
			}
		}
	}
}

// TestComplexityStat checks the statistics on made-up trials: the median
// counts a trial that never reached ε as +∞ (so it is ∞ once half the
// trials are), reached counts the others, min and max are over all trials.
func TestComplexityStat(t *testing.T) {
	inf := math.Inf(1)
	stat := sweeps{}.Stat(experiment.Scenario{}, Config{})
	cells := func(gs ...float64) [][][]float64 {
		var out [][][]float64
		for k, g := range gs {
			e := float64(10 * (k + 1))
			if math.IsInf(g, 0) {
				e = g
			}
			out = append(out, [][]float64{{g, e}})
		}
		out = append(out, nil) // a trial not done yet
		return out
	}
	for _, test := range []struct {
		gammas                       []float64
		median, reached, lo, hi, epo float64
	}{
		{[]float64{5, 1, 3}, 3, 3, 1, 5, 20},
		{[]float64{5, inf, 3}, 5, 2, 3, inf, 30},
		{[]float64{inf, inf, 3}, inf, 1, 3, inf, inf},
		{[]float64{2, 4, inf, 1}, 3, 3, 1, inf, 30},
	} {
		c := cells(test.gammas...)
		for m, want := range []float64{test.median, test.reached, test.lo, test.hi} {
			if got, _, n := stat(c, 0, m); got != want || n != len(test.gammas) {
				t.Errorf("%v, metric %d: %v over %d trials, want %v", test.gammas, m, got, n, want)
			}
		}
		if got, _, _ := stat(c, 0, 4); got != test.epo {
			t.Errorf("%v: median epoch %v, want %v", test.gammas, got, test.epo)
		}
	}
}

// TestComplexityTheory: the curves are the paper's formulas at every grid
// value — Theorem 2's r² + rs + rS + φmr per FedLRGD rank, and one Theorem 3
// slope guide φm(p/ε)^¾ (C = 1) — over ε, and over m with sweep=clients,
// where both are linear in m.
func TestComplexityTheory(t *testing.T) {
	sc := lowRankComplexity()
	th := Family.Sweeps().SweepMetrics(sc)[0].Theory
	if len(th) != 5 || !strings.Contains(th[4].Label, "slope guide") || !strings.Contains(th[4].Label, "O(") {
		t.Fatalf("theory curves %v, want 4 FedLRGD + one FedAvg slope guide", th)
	}
	for i, e := range sc.Sweep.Grid {
		if v := 100 * 100 * math.Pow(5/e, 0.75); math.Abs(th[4].Curve[i]-v) > 1e-9*v {
			t.Errorf("ε=%g: FedAvg guide %v, want %v", e, th[4].Curve[i], v)
		}
		s := math.Ceil(math.Log(math.Ln2/e) / math.Log(26.0/25))
		if want := 100.0 + 10*50 + 10*s + 100*100*10; th[1].Curve[i] != want {
			t.Errorf("ε=%g: FedLRGD r=10 curve %v, want %v", e, th[1].Curve[i], want)
		}
	}
	m, err := experiment.NewCatalog(Family).Scenario("lowrank-complexity", "sweep=clients")
	if err != nil {
		t.Fatal(err)
	}
	if cfg(m).Epsilon != clientsEpsilon || m.Sweep.Knob != "clients" {
		t.Fatalf("sweep=clients: ε=%v, knob %q", cfg(m).Epsilon, m.Sweep.Knob)
	}
	th = Family.Sweeps().SweepMetrics(m)[0].Theory
	for i, clients := range m.Sweep.Grid {
		if v := 100 * clients * math.Pow(5/clientsEpsilon, 0.75); math.Abs(th[4].Curve[i]-v) > 1e-9*v {
			t.Errorf("m=%v: FedAvg guide %v, want %v", clients, th[4].Curve[i], v)
		}
	}
}

// TestInterpolationCheckSeparates: on the lowrank preset, seeds 1–5, ranks
// 3, 5, 10, 20, FedLRGD's server-side interpolation check raises its alarm
// exactly on the runs that fail — that end without dividing their
// starting suboptimality by 10 (every r = 3 run and four of the five r = 5
// runs; the others end 100 to 10⁵ times lower) — and the runner warns, on
// its last epoch, about a racer that ends above its start (r = 3, seed 4:
// 0.0301 from 0.0211).
func TestInterpolationCheckSeparates(t *testing.T) {
	slowtest.Skip(t)
	for seed := 1; seed <= 5; seed++ {
		sc, err := experiment.NewCatalog(Family).Scenario("lowrank", fmt.Sprintf("seed=%d", seed), "algorithms=fedlrgd:r=3,fedlrgd:r=5,fedlrgd:r=10,fedlrgd:r=20")
		if err != nil {
			t.Fatal(err)
		}
		table := experiment.NewTable(sc)
		res, err := experiment.NewEngine().Run(context.Background(), sc, experiment.Observer{Round: table.Add})
		if err != nil {
			t.Fatal(err)
		}
		params := map[string]float64{}
		for _, p := range res.Facts.Params {
			params[p.Name] = p.Value
		}
		for i, r := range []int{3, 5, 10, 20} {
			rows := table.Rounds[i]
			start, final := rows[0].Value(0), rows[len(rows)-1].Value(0)
			failed := final > start/10
			rel := params[fmt.Sprintf("interp_error_r%d", r)]
			if alarm := rel > algorithms.InterpolationAlarm; alarm != failed {
				t.Errorf("seed %d, r=%d: interpolation error %.3g (alarm %v), suboptimality %.3g → %.3g (failed %v)", seed, r, rel, alarm, start, final, failed)
			}
			warned := strings.Contains(rows[len(rows)-1].Warning, "above its start")
			if above := final > start; warned != above {
				t.Errorf("seed %d, r=%d: ends at %.3g from %.3g, warning %q", seed, r, final, start, rows[len(rows)-1].Warning)
			}
		}
	}
}

// TestEndWarning checks the end-of-run rule on made-up curves: above the
// start, or more than twice above the best, is warned; else nothing.
func TestEndWarning(t *testing.T) {
	for _, test := range []struct {
		curve []float64
		want  string
	}{
		{[]float64{1, 0.5, 0.1, 0.1}, ""},
		{[]float64{1, 0.5, 0.1, 0.19}, ""},
		{[]float64{1, 0.5, 0.1, 0.21}, "2.1× above its own best 0.1 (epoch 3)"},
		{[]float64{1, 0.5, 1.5}, "above its start 1"},
		{[]float64{1}, ""},
	} {
		w := endWatch{best: math.Inf(1), cause: "why"}
		for k, v := range test.curve {
			w.see(k+1, v)
		}
		got := w.warning()
		if (test.want == "") != (got == "") || !strings.Contains(got, test.want) {
			t.Errorf("%v: warning %q, want %q", test.curve, got, test.want)
		}
	}
}

// sweepTable runs a sweep and returns its table.
func sweepTable(t *testing.T, sc experiment.Scenario) *experiment.SweepTable {
	t.Helper()
	table, err := experiment.NewSweepTable(sc)
	if err != nil {
		t.Fatal(err)
	}
	if err := experiment.RunSweep(context.Background(), sc, table.Add); err != nil {
		t.Fatal(err)
	}
	return table
}

// TestComplexityFindings pins the numbers the sweeps' summaries and the
// README state (seeds 1–5, 5 trials): on the ε sweep, the smallest ε each
// rank holds in every trial, FedAvg's and FedLRGD r=10's medians at 1e-3
// and 3e-4 and FedAvg's count below 3e-5; on the m sweep (ε = 3e-4, the
// two racers of the crossing), FedLRGD r=10 cheaper at m = 25 and 100,
// FedAvg at m = 200.
func TestComplexityFindings(t *testing.T) {
	slowtest.Skip(t)
	cat := experiment.NewCatalog(Family)
	sc, _ := cat.Scenario("lowrank-complexity")
	eps := sweepTable(t, sc)
	at := func(tab *experiment.SweepTable, racer int, value float64, metric int) float64 {
		i := slices.Index(tab.Grid, value)
		v, _, _ := tab.Stat(i, racer, metric)
		return v
	}
	round := func(v float64) float64 { e := math.Pow(10, math.Floor(math.Log10(v))-1); return math.Round(v/e) * e }
	// The smallest ε held by all 5 trials: r=10 3e-5, r=20 3e-6, r=40 1e-7; r=5 holds none below 3e-4.
	for racer, last := range map[int]float64{1: 3e-5, 2: 3e-6, 3: 1e-7} {
		for _, e := range eps.Grid {
			if held := at(eps, racer, e, 1) == 5; held != (e >= last) {
				t.Errorf("%s at ε=%g: %v of 5 trials hold it", eps.Labels[racer], e, at(eps, racer, e, 1))
			}
		}
	}
	if at(eps, 0, 3e-4, 1) != 1 || at(eps, 0, 1e-4, 1) != 0 {
		t.Errorf("r=5: %v trials hold 3e-4, %v hold 1e-4; want 1 and 0", at(eps, 0, 3e-4, 1), at(eps, 0, 1e-4, 1))
	}
	for _, c := range []struct {
		racer int
		e     float64
		want  float64
	}{{4, 1e-3, 4.0e4}, {1, 1e-3, 1.0e5}, {4, 3e-4, 2.8e6}} {
		if got := round(at(eps, c.racer, c.e, 0)); got != c.want {
			t.Errorf("%s at ε=%g: median Γ %v, summary says %v", eps.Labels[c.racer], c.e, got, c.want)
		}
	}
	if n := at(eps, 4, 3e-5, 1); n > 2 {
		t.Errorf("FedAvg: %v trials hold 3e-5, the summary says no more than 2", n)
	}

	m, _ := cat.Scenario("lowrank-complexity", "sweep=clients", "algorithms=fedlrgd,fedavg")
	m.Sweep.Grid = []float64{25, 100, 200}
	tab := sweepTable(t, m)
	for _, c := range []struct {
		m          float64
		lrgd, favg float64
	}{{25, 2.6e4, 7.5e5}, {100, 1.0e5, 2.8e6}, {200, 2.0e5, 1.2e5}} {
		if l, f := round(at(tab, 0, c.m, 0)), round(at(tab, 1, c.m, 0)); l != c.lrgd || f != c.favg {
			t.Errorf("m=%v: FedLRGD r=10 %v, FedAvg %v; the summary says %v, %v", c.m, l, f, c.lrgd, c.favg)
		}
	}
}
