package experiment

import (
	"context"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/mat"
)

// Small versions of the newton sweeps: the presets' grids and racers with
// few random features and test points, so that a sweep takes well under a
// second even under -race.
var (
	smallLocalSize = []string{"--trials", "2", "--set", "rff_dim=20", "--set", "test_size=100", "--set", "total_samples=1000"}
	smallHetero    = []string{"--trials", "2", "--set", "rff_dim=20", "--set", "test_size=100", "--set", "clients=4", "--set", "samples=60"}
)

func newtonSweep(t *testing.T, preset string, args ...string) (header []string, rows [][]string) {
	t.Helper()
	small := smallLocalSize
	if preset == "newton-heterogeneity" {
		small = smallHetero
	}
	all := append(append([]string{"sweep", "--preset", preset}, small...), args...)
	out, errs, code := command(t, all...)
	if code != ExitOK || errs != "" {
		t.Fatalf("fedscope %s: exit %d, stderr %q", strings.Join(all, " "), code, errs)
	}
	return readCSV(t, out)
}

// cell returns the field named col of the row of racer at knob value x.
func cell(t *testing.T, header []string, rows [][]string, racer, x, col string) string {
	t.Helper()
	k := slices.Index(header, col)
	if k < 0 {
		t.Fatalf("no column %q in %v", col, header)
	}
	for _, r := range rows {
		if r[0] == racer && r[1] == x {
			return r[k]
		}
	}
	t.Fatalf("no row %s at %s", racer, x)
	return ""
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return v
}

// TestNewtonSweepPresets checks the presets against PAPERS.md §4.7 and §8:
// the m grid of E003-2 at |D| = 10000 (|D_j| = 2000 … 80, α = β = 0), the α
// and β grids of E003-3/4 at m = 20, |D_j| = 500 with the other
// heterogeneity off, 10 trials, and the racers' labels.
func TestNewtonSweepPresets(t *testing.T) {
	wantLabels := []string{"KRR", "DKRR", "FedNewton t=1", "FedNewton t=2", "FedNewton t=4", "FedNewton t=8", "FedAvg s=2", "FedProx"}
	beta := sweepScenario(t, "newton-heterogeneity")
	if err := beta.SetAll([]string{"sweep=beta"}); err != nil {
		t.Fatal(err)
	}
	for _, test := range []struct {
		sc          Scenario
		knob        string
		grid        []float64
		samples     []int // |D_j| at each grid value
		alpha, beta float64
	}{
		{sweepScenario(t, "newton-local-size"), "clients", []float64{5, 10, 20, 25, 40, 50, 80, 100, 125},
			[]int{2000, 1000, 500, 400, 250, 200, 125, 100, 80}, 0, 0},
		{sweepScenario(t, "newton-heterogeneity"), "alpha", []float64{0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1},
			[]int{500, 500, 500, 500, 500, 500, 500, 500}, -1, 0},
		{beta, "beta", []float64{0, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1},
			[]int{500, 500, 500, 500, 500, 500, 500, 500}, 0, -1},
	} {
		sc := test.sc
		if sc.Sweep.Knob != test.knob || !slices.Equal(sc.Sweep.Grid, test.grid) || sc.Trials != 10 {
			t.Errorf("%s: knob %s, grid %v, trials %d", sc.Preset, sc.Sweep.Knob, sc.Sweep.Grid, sc.Trials)
		}
		fam, _ := sc.sweepFamily()
		if got := fam.labelsOf(sc); !slices.Equal(got, wantLabels) {
			t.Errorf("%s: racers %q", sc.Preset, got)
		}
		for i := range sc.Sweep.Grid {
			p, err := sc.PointScenario(i, 3)
			if err != nil {
				t.Fatal(err)
			}
			if p.Seed != sc.Seed+3 || p.Data.Samples != test.samples[i] || p.Data.Dim != 10 || p.Newton.RFFDim != 200 || p.Newton.TestSize != 2500 {
				t.Errorf("%s point %d: seed %d, |D_j| %d, d %d, M %d, test %d", sc.Preset, i, p.Seed, p.Data.Samples, p.Data.Dim, p.Newton.RFFDim, p.Newton.TestSize)
			}
			if test.knob != "clients" && p.Data.Clients != 20 {
				t.Errorf("%s: m = %d, want 20", sc.Preset, p.Data.Clients)
			}
			if (test.alpha >= 0 && p.Newton.Alpha != test.alpha) || (test.beta >= 0 && p.Newton.Beta != test.beta) {
				t.Errorf("%s point %d: α = %v, β = %v", sc.Preset, i, p.Newton.Alpha, p.Newton.Beta)
			}
		}
	}
}

// TestNewtonSweepOneClient: with one client H_1 = H, so DKRR (and hence
// FedNewton, which starts there) is KRR exactly (PAPERS.md §4.1–4.2); and
// KRR's test MSE equals an independent dense solve of
// (ΦᵀΦ/|D| + λI) w = Φᵀy/|D| on the regenerated data of that trial.
func TestNewtonSweepOneClient(t *testing.T) {
	sc := sweepScenario(t, "newton-local-size")
	if err := sc.SetAll([]string{"rff_dim=15", "test_size=150", "total_samples=240"}); err != nil {
		t.Fatal(err)
	}
	sc.Sweep.Grid = []float64{1, 3}
	sc.Trials = 2
	table, _ := NewSweepTable(sc)
	if err := RunSweep(context.Background(), sc, table.Add); err != nil {
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
	nd, err := p.newtonData().Generate(p.Seed)
	if err != nil {
		t.Fatal(err)
	}
	fm := model.NewRFF(p.Data.Dim, p.Newton.RFFDim, p.Newton.Bandwidth, p.Seed)
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
		h.Set(k, k, h.At(k, k)+p.Newton.Lambda)
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
	got := table.cells[1][1][0][0]
	if math.Abs(got-want) > 1e-6*want {
		t.Errorf("m = 3, trial 1: KRR test MSE %.10g, dense solve %.10g", got, want)
	}
}

// TestNewtonSweepConvergesToKRR: with α = β = 0 and large clients
// (|D_j| = 200 ≫ M = 15) the FedNewton contraction factor is small, so after
// 8 rounds FedNewton's test MSE is KRR's while DKRR's is not (Theorem 1 of
// paper 003, PAPERS.md §4.3).
func TestNewtonSweepConvergesToKRR(t *testing.T) {
	header, rows := newtonSweep(t, "newton-local-size", "--set", "rff_dim=15", "--set", "lambda=0.001")
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
// diverges (the Υ > 1 regime): the sweep still succeeds, reports
// diverged = 1 and leaves the MSE of those trials out, while KRR never
// diverges.
func TestNewtonSweepDivergence(t *testing.T) {
	header, rows := newtonSweep(t, "newton-local-size", "--set", "lambda=1e-6")
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
	wantHeader := "algorithm,alpha,trials,test_mse_mean,test_mse_std,diverged_mean,diverged_std,delta_data_mean,delta_data_std,delta_model_mean,delta_model_std"
	if got := strings.Join(header, ","); got != wantHeader {
		t.Fatalf("header %s", got)
	}
	if lo, hi := num(t, cell(t, header, rows, "KRR", "0", "delta_data_mean")), num(t, cell(t, header, rows, "KRR", "1", "delta_data_mean")); !(hi > 2*lo && lo > 0) {
		t.Errorf("Δ_Dj at α = 0: %g, at α = 1: %g", lo, hi)
	}
	if df := cell(t, header, rows, "DKRR", "0.3", "delta_model_mean"); df != "0" {
		t.Errorf("Δ_fj with β = 0: %s", df)
	}
	bh, brows := newtonSweep(t, "newton-heterogeneity", "--set", "sweep=beta")
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
	_, both := newtonSweep(t, "newton-heterogeneity", "--set", "alpha=0.01", "--set", "sweep=beta")
	if cell(t, bh, both, "KRR", "0", "test_mse_mean") == cell(t, bh, brows, "KRR", "0", "test_mse_mean") {
		t.Error("alpha=0.01 before sweep=beta was ignored")
	}
}

// TestNewtonSweepSameBytes: same seed, same flags → byte-identical output
// under GOMAXPROCS 1 and 2 (DESIGN.md), and another seed changes it.
func TestNewtonSweepSameBytes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, args := range [][]string{
		append([]string{"sweep", "--preset", "newton-local-size", "--seed", "4"}, smallLocalSize...),
		append([]string{"sweep", "--preset", "newton-heterogeneity", "--seed", "4", "--set", "sweep=beta", "--format", "jsonl"}, smallHetero...),
	} {
		var outs []string
		for _, procs := range []int{1, 2, 1, 2} {
			runtime.GOMAXPROCS(procs)
			out, errs, code := command(t, args...)
			if code != ExitOK {
				t.Fatalf("%v: exit %d: %s", args, code, errs)
			}
			outs = append(outs, out)
		}
		for i, out := range outs[1:] {
			if out != outs[0] {
				t.Errorf("%v: run %d differs from run 0", args[2], i+1)
			}
		}
		other := append(slices.Clone(args), "--seed", "5")
		if out, _, _ := command(t, other...); out == outs[0] {
			t.Errorf("%v: seeds 4 and 5 give the same output", args[2])
		}
	}
}

// TestNewtonSweepBadInput: exit 2 and one line naming the key, the value
// and what is allowed.
func TestNewtonSweepBadInput(t *testing.T) {
	for _, test := range []struct {
		args []string
		want []string
	}{
		{[]string{"sweep", "--preset", "newton-heterogeneity", "--set", "sweep=gamma"}, []string{"sweep", "gamma", "alpha or beta"}},
		{[]string{"sweep", "--preset", "newton-heterogeneity", "--set", "alpha=0.1"}, []string{"alpha", "0.1", "any other key"}},
		{[]string{"sweep", "--preset", "newton-heterogeneity", "--set", "sweep=beta", "--set", "beta=1"}, []string{"beta", "any other key"}},
		{[]string{"sweep", "--preset", "newton-heterogeneity", "--set", "total_samples=500"}, []string{"total_samples", "500", "newton-local-size"}},
		{[]string{"sweep", "--preset", "newton-heterogeneity", "--set", "lambda=0"}, []string{"lambda", "0", "> 0"}},
		{[]string{"sweep", "--preset", "newton-local-size", "--set", "samples=100"}, []string{"samples", "100", "total_samples"}},
		{[]string{"sweep", "--preset", "newton-local-size", "--set", "total_samples=100"}, []string{"clients=125", "samples=0"}},
		{[]string{"sweep", "--preset", "newton-local-size", "--set", "clients=4"}, []string{"clients", "any other key"}},
		{[]string{"sweep", "--preset", "newton-local-size", "--set", "trials=0"}, []string{"trials", "0", "1..100000"}},
		{[]string{"sweep", "--preset", "newton-local-size", "--set", "algorithms=fedsgd"}, []string{"fedsgd", "krr, dkrr, fednewton"}},
		{[]string{"sweep", "--preset", "newton-rounds"}, []string{"newton-rounds", "not a sweep", "newton-local-size"}},
		{[]string{"run", "--preset", "newton-rounds", "--set", "sweep=alpha"}, []string{"sweep", "alpha", "newton-heterogeneity"}},
		{[]string{"run", "--preset", "newton-rounds", "--set", "trials=3"}, []string{"trials=3", "not a sweep"}},
		{[]string{"run", "--preset", "newton-heterogeneity"}, []string{"newton-heterogeneity", "fedscope sweep"}},
	} {
		stdout, stderr, code := command(t, test.args...)
		checkUsageError(t, stdout, stderr, code)
		for _, w := range test.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: message %q does not mention %q", test.args, stderr, w)
			}
		}
	}
}
