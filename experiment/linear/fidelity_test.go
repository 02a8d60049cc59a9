package linear

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// preset returns the family's preset of that name.
func set(t *testing.T, sc *experiment.Scenario, kv ...string) {
	t.Helper()
	for i := 0; i < len(kv); i += 2 {
		if err := sc.Set(kv[i], kv[i+1]); err != nil {
			t.Fatal(err)
		}
	}
}

// sweep runs a sweep scenario to completion.
func sweep(t *testing.T, sc experiment.Scenario) *experiment.SweepTable {
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

func metricIndex(t *testing.T, table *experiment.SweepTable, name string) int {
	t.Helper()
	for i, m := range table.Metrics {
		if m.Name == name {
			return i
		}
	}
	t.Fatalf("no sweep metric %q", name)
	return -1
}

// quantile7 is the p-quantile by linear interpolation at h = (n−1)p of the
// sorted values (numpy's default), written out again for the test.
func quantile7(xs []float64, p float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	h := float64(len(s)-1) * p
	lo := int(h)
	if lo == len(s)-1 {
		return s[lo]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

func meanStd(xs []float64) (float64, float64) {
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(xs)-1))
}

// minNorm is the minimum-norm least-squares estimate Xᵀ(XXᵀ)⁻¹y of a client
// with fewer rows than columns, or (XᵀX)⁻¹Xᵀy with more (docs/papers.md §1.8),
// solved with gonum.
func minNorm(t *testing.T, c datasets.Client, d int) []float64 {
	x := mat.NewDense(c.N, d, c.X)
	y := mat.NewVecDense(c.N, c.Y)
	var out mat.VecDense
	if c.N < d {
		var g mat.Dense
		g.Mul(x, x.T())
		var a mat.VecDense
		if err := a.SolveVec(&g, y); err != nil {
			t.Fatal(err)
		}
		out.MulVec(x.T(), &a)
	} else {
		var g mat.Dense
		g.Mul(x.T(), x)
		var b mat.VecDense
		b.MulVec(x.T(), y)
		if err := out.SolveVec(&g, &b); err != nil {
			t.Fatal(err)
		}
	}
	return out.RawVector().Data
}

// TestFedGainStatistics recomputes every federation-gain column of a small
// Fig 4 sweep from independent per-trial runs: for each trial (seed S+t) the
// federation is generated, the first data-scarce (n_j < d) and data-rich
// client's min-norm estimate solved with gonum, and FedAvg (s = 1 and 3) and
// FedProx run round by round with algorithms.FedAvg/FedProx — not the round
// map the sweep uses — from θ_0 = 0; the federated error is the minimum over
// rounds 0…T of ‖θ_t − θ_j*‖. Then FG_t = local_t / fed_t and, over the
// trials: fg_*_mean = the mean of FG_t and fg_*_std its sample standard
// deviation (docs/papers.md §8 CORRECTED), fg_*_median/p10/p90 its quantiles, and
// with fg_stat=ratio_of_means the mean local error over the minimum over
// rounds of the mean federated error curve. gamma_realised is the max
// pairwise distance of the trial's truths.
func TestFedGainStatistics(t *testing.T) {
	const (
		trials = 7
		rounds = 30
	)
	sc := preset(t, "fedgain-model")
	sc.Rounds, sc.Trials, sc.Seed = rounds, trials, 11
	set(t, &sc, "clients", "6", "scarce_clients", "3", "scarce_samples", "8", "samples", "30", "dim", "12",
		"algorithms", "fedavg:s=1,fedavg:s=3,fedprox")
	sc.Sweep.Grid = []float64{0.1, 3}
	for _, ratioOfMeans := range []bool{false, true} {
		if ratioOfMeans {
			set(t, &sc, "fg_stat", "ratio_of_means")
		}
		table := sweep(t, sc)
		c := cfg(sc)
		for gi, gamma := range sc.Sweep.Grid {
			// [racer][gainer][trial]
			fg := make([][][]float64, 3)
			local := make([][][]float64, 3)
			curves := make([][][][]float64, 3)
			for r := range fg {
				fg[r], local[r], curves[r] = make([][]float64, 2), make([][]float64, 2), make([][][]float64, 2)
			}
			var gammas []float64
			for trial := 0; trial < trials; trial++ {
				data := c.Data
				data.Gamma = gamma
				fed, err := data.Generate(sc.Seed + uint64(trial))
				if err != nil {
					t.Fatal(err)
				}
				var diam float64
				for i := range fed.Clients {
					for j := range fed.Clients {
						diam = math.Max(diam, floats.Distance(fed.Clients[i].Truth, fed.Clients[j].Truth, 2))
					}
				}
				gammas = append(gammas, diam)
				gainers := []int{-1, -1}
				for i, cl := range fed.Clients {
					k := 1
					if cl.N < fed.Dim {
						k = 0
					}
					if gainers[k] < 0 {
						gainers[k] = i
					}
				}
				p := model.NewProblem(fed)
				for r, alg := range []algorithms.Algorithm{algorithms.FedAvg{Eta: c.Eta, LocalSteps: 1}, algorithms.FedAvg{Eta: c.Eta, LocalSteps: 3},
					algorithms.FedProx{Eta: c.Eta}} {
					thetas := [][]float64{make([]float64, fed.Dim)} // θ_0 = 0
					if err := alg.Run(context.Background(), p, rounds, func(lr algorithms.LinearRound) { thetas = append(thetas, lr.Theta) }); err != nil {
						t.Fatal(err)
					}
					for k, j := range gainers {
						truth := fed.Clients[j].Truth
						loc := floats.Distance(minNorm(t, fed.Clients[j], fed.Dim), truth, 2)
						curve := make([]float64, len(thetas))
						for s, th := range thetas {
							curve[s] = floats.Distance(th, truth, 2)
						}
						fg[r][k] = append(fg[r][k], loc/slices.Min(curve))
						local[r][k] = append(local[r][k], loc)
						curves[r][k] = append(curves[r][k], curve)
					}
				}
			}
			check := func(name string, r int, got, want float64) {
				t.Helper()
				if !(math.Abs(got-want) <= 1e-8*math.Abs(want)) {
					t.Errorf("ratio_of_means=%v Γ=%v racer %d %s = %v, want %v", ratioOfMeans, gamma, r, name, got, want)
				}
			}
			for r := range fg {
				for k, stem := range []string{"fg_scarce", "fg_rich"} {
					mean, std := meanStd(fg[r][k])
					if ratioOfMeans {
						avg := make([]float64, rounds+1)
						for _, cu := range curves[r][k] {
							floats.Add(avg, cu)
						}
						mean = floats.Sum(local[r][k]) / slices.Min(avg)
					}
					gotMean, gotStd, n := table.Stat(gi, r, metricIndex(t, table, stem))
					if n != trials {
						t.Errorf("%s rests on %d trials, want %d", stem, n, trials)
					}
					check(stem+"_mean", r, gotMean, mean)
					check(stem+"_std", r, gotStd, std)
					for _, q := range []struct {
						suffix string
						p      float64
					}{{"_median", 0.5}, {"_p10", 0.1}, {"_p90", 0.9}} {
						got, _, _ := table.Stat(gi, r, metricIndex(t, table, stem+q.suffix))
						check(stem+q.suffix, r, got, quantile7(fg[r][k], q.p))
					}
				}
				m, s := meanStd(gammas)
				gotM, gotS, _ := table.Stat(gi, r, metricIndex(t, table, "gamma_realised"))
				check("gamma_realised_mean", r, gotM, m)
				check("gamma_realised_std", r, gotS, s)
			}
		}
	}
}

// TestFedGainColumns checks the sweep's columns: the mean and spread of FG
// per client, its median and 10–90 % quantiles as single columns, and, on
// the Γ sweep, gamma_realised_mean, which the view may use as its x axis.
func TestFedGainColumns(t *testing.T) {
	sc := preset(t, "fedgain-model")
	table, err := experiment.NewSweepTable(sc)
	if err != nil {
		t.Fatal(err)
	}
	want := "algorithm,gamma,trials,fg_scarce_mean,fg_scarce_std,fg_scarce_median,fg_scarce_p10,fg_scarce_p90," +
		"fg_rich_mean,fg_rich_std,fg_rich_median,fg_rich_p10,fg_rich_p90,gamma_realised_mean,gamma_realised_std"
	if got := strings.Join(table.Columns(), ","); got != want {
		t.Errorf("columns\n%s\nwant\n%s", got, want)
	}
	if sc.Sweep.Axis != "gamma_realised" {
		t.Errorf("axis %q, want gamma_realised", sc.Sweep.Axis)
	}
	ms := Family.Sweeps().SweepMetrics(sc)
	if ms[0].Spread != "fg_scarce_median" || ms[0].TableOnly || !ms[1].TableOnly || !ms[1].Single {
		t.Errorf("fg_scarce: %+v; median: %+v", ms[0], ms[1])
	}
	// The JSON lines carry the same keys, the single columns without _std.
	sc.Trials, sc.Rounds = 2, 5
	sc.Sweep.Grid = []float64{1}
	set(t, &sc, "clients", "4", "scarce_clients", "2", "scarce_samples", "5", "samples", "20", "dim", "8", "algorithms", "fedavg:s=1")
	var b strings.Builder
	if err := sweep(t, sc).Write(&b, experiment.JSONL); err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(b.String()), &rec); err != nil {
		t.Fatalf("%v: %s", err, b.String())
	}
	for _, key := range strings.Split(want, ",") {
		if _, ok := rec[key]; !ok {
			t.Errorf("JSON line without %q: %s", key, b.String())
		}
	}
	if len(rec) != len(strings.Split(want, ",")) {
		t.Errorf("JSON line has %d keys, want %d: %s", len(rec), len(strings.Split(want, ",")), b.String())
	}
}

// TestSquareMark checks the mark of Fig 5: on the r sweep the scarce
// client's FG is marked at r = n_j = 50, where its local design is square,
// with a note; the rich client (n_j = 500) lies off the grid and the Γ sweep
// has no r axis.
func TestSquareMark(t *testing.T) {
	sc := preset(t, "fedgain-covariate")
	ms := Family.Sweeps().SweepMetrics(sc)
	var scarce, rich experiment.SweepMetric
	for _, m := range ms {
		switch m.Name {
		case "fg_scarce":
			scarce = m
		case "fg_rich":
			rich = m
		}
	}
	if len(scarce.Marks) != 1 || scarce.Marks[0].At != 50 || !strings.Contains(scarce.Marks[0].Note, "square") ||
		!strings.Contains(scarce.Marks[0].Note, "infinite expected square") {
		t.Errorf("fg_scarce marks %+v, want one at r = 50 explaining the square design", scarce.Marks)
	}
	if len(rich.Marks) != 0 {
		t.Errorf("fg_rich marks %+v, want none", rich.Marks)
	}
	if ms := Family.Sweeps().SweepMetrics(preset(t, "fedgain-model")); len(ms[0].Marks) != 0 {
		t.Errorf("Γ sweep marks %+v", ms[0].Marks)
	}
}

// TestPolynomialInverse checks Fig 6's panel (b): inv_mse_mean is 1 over
// mse_mean (not the mean of the per-trial inverses, which is written as
// inv_mse_trial), and total_samples is N = M·n_i, the axis of the sweep.
func TestPolynomialInverse(t *testing.T) {
	sc := preset(t, "polynomial")
	sc.Trials = 6
	sc.Sweep.Grid = []float64{2, 5}
	table := sweep(t, sc)
	mse, inv, trial, total := metricIndex(t, table, "mse"), metricIndex(t, table, "inv_mse"),
		metricIndex(t, table, "inv_mse_trial"), metricIndex(t, table, "total_samples")
	if sc.Sweep.Axis != "total_samples" {
		t.Errorf("axis %q", sc.Sweep.Axis)
	}
	for i, n := range sc.Sweep.Grid {
		for r := range table.Labels {
			m, _, _ := table.Stat(i, r, mse)
			v, s, k := table.Stat(i, r, inv)
			if math.Abs(v*m-1) > 1e-12 || k != sc.Trials || !math.IsNaN(s) {
				t.Errorf("n_i=%v racer %d: inv_mse_mean·mse_mean = %v (n=%d, std %v), want 1", n, r, v*m, k, s)
			}
			if tm, _, _ := table.Stat(i, r, trial); !(tm > v) {
				t.Errorf("n_i=%v racer %d: mean of 1/MSE %v not above 1/mean MSE %v (Jensen)", n, r, tm, v)
			}
			if got, _, _ := table.Stat(i, r, total); got != 20*n {
				t.Errorf("n_i=%v: total_samples %v, want %v", n, got, 20*n)
			}
		}
	}
}

// TestQuantile checks Quantile against values worked out by hand.
func TestQuantile(t *testing.T) {
	xs := []float64{4, 1, 3, 2, 10}
	for _, test := range []struct{ p, want float64 }{{0, 1}, {0.5, 3}, {1, 10}, {0.1, 1.4}, {0.9, 7.6}, {0.25, 2}} {
		if got := Quantile(xs, test.p); math.Abs(got-test.want) > 1e-12 {
			t.Errorf("Quantile(%v) = %v, want %v", test.p, got, test.want)
		}
	}
	if !slices.Equal(xs, []float64{4, 1, 3, 2, 10}) {
		t.Error("Quantile modified its input")
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("Quantile of nothing is not NaN")
	}
}
