package newton

import (
	"context"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/mat"
)

// TestNewtonSweepPresets checks the presets against docs/papers.md §4.7 and §8:
// the m grid of E003-2 at |D| = 10000 (|D_j| = 2000 … 80, α = β = 0), the α
// and β grids of E003-3/4 at m = 20, |D_j| = 500 with the other
// heterogeneity off, 10 trials, and the racers' labels.
func TestNewtonSweepPresets(t *testing.T) {
	wantLabels := []string{"KRR", "DKRR", "FedNewton t=1", "FedNewton t=2", "FedNewton t=4", "FedNewton t=8", "FedAvg s=2", "FedProx"}
	for _, test := range []struct {
		sc          experiment.Scenario
		knob        string
		grid        []float64
		samples     []int // |D_j| at each grid value
		alpha, beta float64
	}{
		{preset(t, "newton-local-size"), "clients", []float64{5, 10, 20, 25, 40, 50, 80, 100, 125},
			[]int{2000, 1000, 500, 400, 250, 200, 125, 100, 80}, 0, 0},
		{preset(t, "newton-heterogeneity"), "alpha", []float64{0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1},
			[]int{500, 500, 500, 500, 500, 500, 500, 500}, -1, 0},
		{preset(t, "newton-heterogeneity", "sweep=beta"), "beta", []float64{0, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1},
			[]int{500, 500, 500, 500, 500, 500, 500, 500}, 0, -1},
	} {
		sc := test.sc
		if sc.Sweep.Knob != test.knob || !slices.Equal(sc.Sweep.Grid, test.grid) || sc.Trials != 10 {
			t.Errorf("%s: knob %s, grid %v, trials %d", sc.Preset, sc.Sweep.Knob, sc.Sweep.Grid, sc.Trials)
		}
		if got := Family.Sweeps().SweepLabels(sc); !slices.Equal(got, wantLabels) {
			t.Errorf("%s: racers %q", sc.Preset, got)
		}
		for i := range sc.Sweep.Grid {
			p, err := sc.PointScenario(i, 3)
			if err != nil {
				t.Fatal(err)
			}
			d := cfg(p).Data
			if p.Seed != sc.Seed+3 || d.Samples != test.samples[i] || d.Dim != 10 || d.RFFDim != 200 || d.TestSize != 2500 {
				t.Errorf("%s point %d: seed %d, |D_j| %d, d %d, M %d, test %d", sc.Preset, i, p.Seed, d.Samples, d.Dim, d.RFFDim, d.TestSize)
			}
			if test.knob != "clients" && d.Clients != 20 {
				t.Errorf("%s: m = %d, want 20", sc.Preset, d.Clients)
			}
			if (test.alpha >= 0 && d.Alpha != test.alpha) || (test.beta >= 0 && d.Beta != test.beta) {
				t.Errorf("%s point %d: α = %v, β = %v", sc.Preset, i, d.Alpha, d.Beta)
			}
		}
	}
}

// TestNewtonSweepOneClient: with one client H_1 = H, so DKRR (and hence
// FedNewton, which starts there) is KRR exactly (docs/papers.md §4.1–4.2); and
// KRR's test MSE equals an independent dense solve of
// (ΦᵀΦ/|D| + λI) w = Φᵀy/|D| on the regenerated data of that trial.
func TestNewtonSweepOneClient(t *testing.T) {
	sc := preset(t, "newton-local-size", "rff_dim=15", "test_size=150", "total_samples=240")
	sc.Sweep.Grid = []float64{1, 3}
	sc.Trials = 2
	table, err := experiment.NewSweepTable(sc)
	if err != nil {
		t.Fatal(err)
	}
	var krr3 float64 // KRR's test MSE at point 1 (m = 3), trial 1
	err = experiment.RunSweep(context.Background(), sc, func(r experiment.TrialResult) {
		table.Add(r)
		if r.Point == 1 && r.Trial == 1 {
			krr3 = r.Values[0][0]
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	krr, _, _ := table.Stat(0, 0, 0)
	for r := 1; r < 6; r++ { // DKRR, FedNewton t = 1, 2, 4, 8
		if got, _, _ := table.Stat(0, r, 0); math.Abs(got-krr) > 1e-9*krr {
			t.Errorf("m = 1: %s test MSE %.12g, KRR %.12g", table.Labels[r], got, krr)
		}
	}
	// Independent KRR of point 1 (m = 3), trial 1, from the raw data.
	p, err := sc.PointScenario(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	d := cfg(p).Data
	nd, err := d.synthetic().Generate(p.Seed)
	if err != nil {
		t.Fatal(err)
	}
	fm := model.NewRFF(d.Dim, d.RFFDim, d.Bandwidth, p.Seed)
	features := func(s *datasets.Set) *mat.Dense {
		out := make([]float64, s.N*fm.Out)
		fm.MapTo(out, s.X, s.N)
		return mat.NewDense(s.N, fm.Out, out)
	}
	var phis []*mat.Dense
	var ys []float64
	for _, c := range nd.Clients {
		phis = append(phis, features(c))
		ys = append(ys, c.Y...)
	}
	n := len(ys)
	phi := mat.NewDense(n, fm.Out, nil)
	row := 0
	for _, f := range phis {
		r, _ := f.Dims()
		phi.Slice(row, row+r, 0, fm.Out).(*mat.Dense).Copy(f)
		row += r
	}
	var h mat.Dense
	h.Mul(phi.T(), phi)
	h.Scale(1/float64(n), &h)
	for k := 0; k < fm.Out; k++ {
		h.Set(k, k, h.At(k, k)+d.Lambda)
	}
	var b, w mat.VecDense
	b.MulVec(phi.T(), mat.NewVecDense(n, ys))
	b.ScaleVec(1/float64(n), &b)
	if err := w.SolveVec(&h, &b); err != nil {
		t.Fatal(err)
	}
	var pred mat.VecDense
	pred.MulVec(features(nd.Test), &w)
	var se float64
	for i, y := range nd.Test.Y {
		se += (pred.AtVec(i) - y) * (pred.AtVec(i) - y)
	}
	want := se / float64(nd.Test.N)
	if math.Abs(krr3-want) > 1e-6*want {
		t.Errorf("m = 3, trial 1: KRR test MSE %.10g, dense solve %.10g", krr3, want)
	}
}

// TestNewtonSweepConvergesToKRR: with α = β = 0 and large clients
// (|D_j| = 200 ≫ M = 15) the FedNewton contraction factor is small, so after
// 8 rounds FedNewton's test MSE is KRR's while DKRR's is not (Theorem 1 of
// paper 003, docs/papers.md §4.3).
func TestNewtonSweepConvergesToKRR(t *testing.T) {
	header, rows := newtonSweep(t, "newton-local-size", "rff_dim=15", "lambda=0.001")
	krr := num(t, cell(t, header, rows, "KRR", "5", "test_mse_mean"))
	t8 := num(t, cell(t, header, rows, "FedNewton t=8", "5", "test_mse_mean"))
	dkrr := num(t, cell(t, header, rows, "DKRR", "5", "test_mse_mean"))
	if math.Abs(t8-krr) > 1e-8*krr {
		t.Errorf("FedNewton t=8 %.12g, KRR %.12g", t8, krr)
	}
	if math.Abs(dkrr-krr) < 1e-6*krr {
		t.Errorf("DKRR %.12g equals KRR %.12g: the test cannot tell the rounds apart", dkrr, krr)
	}
	if ls := cell(t, header, rows, "KRR", "125", "local_size_mean"); ls != "8" {
		t.Errorf("local_size at m = 125 is %s, want 1000/125 = 8", ls)
	}
}

// TestNewtonSweepDivergence: with |D|/m = 8 samples per client against
// M = 20 features and a small λ, the local Hessians are poor and FedNewton
// diverges (the Υ > 1 regime, docs/papers.md §4.3): the sweep still succeeds,
// reports diverged = 1 and leaves the MSE of those trials out, while KRR
// never diverges.
func TestNewtonSweepDivergence(t *testing.T) {
	header, rows := newtonSweep(t, "newton-local-size", "lambda=1e-6")
	if d := num(t, cell(t, header, rows, "FedNewton t=8", "125", "diverged_mean")); d != 1 {
		t.Errorf("FedNewton t=8 at m = 125: diverged %v, want 1", d)
	}
	if mse := cell(t, header, rows, "FedNewton t=8", "125", "test_mse_mean"); mse != "" {
		t.Errorf("FedNewton t=8 at m = 125: test MSE %q of diverged trials, want empty", mse)
	}
	for _, r := range rows {
		if r[0] == "KRR" && num(t, cell(t, header, rows, "KRR", r[1], "diverged_mean")) != 0 {
			t.Errorf("KRR diverged at m = %s", r[1])
		}
	}
}

// TestNewtonSweepHeterogeneity checks the empirical measures (§4.6, §8):
// Δ_fj is exactly 0 when β = 0 and positive otherwise; Δ_Dj grows from
// α = 0 to α = 1 and, since β only changes the responses, does not depend on β.
func TestNewtonSweepHeterogeneity(t *testing.T) {
	header, rows := newtonSweep(t, "newton-heterogeneity")
	wantHeader := "algorithm,alpha,trials,test_mse_mean,test_mse_std,diverged_mean,diverged_std,diverged_trials_mean,diverged_trials_std,contraction_mean,contraction_std,delta_data_mean,delta_data_std,delta_model_mean,delta_model_std"
	if got := strings.Join(header, ","); got != wantHeader {
		t.Fatalf("header %s", got)
	}
	if lo, hi := num(t, cell(t, header, rows, "KRR", "0", "delta_data_mean")), num(t, cell(t, header, rows, "KRR", "1", "delta_data_mean")); !(hi > 2*lo && lo > 0) {
		t.Errorf("Δ_Dj at α = 0: %g, at α = 1: %g", lo, hi)
	}
	if df := cell(t, header, rows, "DKRR", "0.3", "delta_model_mean"); df != "0" {
		t.Errorf("Δ_fj with β = 0: %s", df)
	}
	bh, brows := newtonSweep(t, "newton-heterogeneity", "sweep=beta")
	if bh[1] != "beta" {
		t.Fatalf("sweep=beta: knob column %q", bh[1])
	}
	if df := num(t, cell(t, bh, brows, "KRR", "0.1", "delta_model_mean")); !(df > 0) {
		t.Errorf("Δ_fj at β = 0.1: %g", df)
	}
	if a, b := cell(t, bh, brows, "KRR", "0", "delta_data_mean"), cell(t, bh, brows, "KRR", "0.1", "delta_data_mean"); a != b {
		t.Errorf("Δ_Dj depends on β: %s at β = 0, %s at β = 0.1", a, b)
	}
	if a, b := cell(t, header, rows, "KRR", "0", "delta_data_mean"), cell(t, bh, brows, "KRR", "0", "delta_data_mean"); a != b {
		t.Errorf("α = β = 0 differs between the two sweeps: Δ_Dj %s and %s", a, b)
	}
	// sweep= is applied first, so the fixed α may come before it.
	_, both := newtonSweep(t, "newton-heterogeneity", "alpha=0.01", "sweep=beta")
	if cell(t, bh, both, "KRR", "0", "test_mse_mean") == cell(t, bh, brows, "KRR", "0", "test_mse_mean") {
		t.Error("alpha=0.01 before sweep=beta was ignored")
	}
}

// TestNewtonSweepSameBytes: same seed, same flags → byte-identical output
// under GOMAXPROCS 1 and 2 (docs/design.md), and another seed changes it.
func TestNewtonSweepSameBytes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, test := range []struct {
		preset string
		format experiment.Format
		sets   []string
	}{
		{"newton-local-size", experiment.CSV, nil},
		{"newton-heterogeneity", experiment.JSONL, []string{"sweep=beta"}},
	} {
		var outs []string
		for _, procs := range []int{1, 2, 1, 2} {
			runtime.GOMAXPROCS(procs)
			outs = append(outs, sweepOutput(t, test.preset, test.format, append(slices.Clone(test.sets), "seed=4")...))
		}
		for i, out := range outs[1:] {
			if out != outs[0] {
				t.Errorf("%s: run %d differs from run 0", test.preset, i+1)
			}
		}
		if out := sweepOutput(t, test.preset, test.format, append(slices.Clone(test.sets), "seed=5")...); out == outs[0] {
			t.Errorf("%s: seeds 4 and 5 give the same output", test.preset)
		}
	}
}
