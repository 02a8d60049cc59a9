package experiment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/fedscope/fedscope/algorithms"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// smallSweeps shrink each sweep preset so that it takes milliseconds, even
// under -race, keeping its grid, racers and families.
var smallSweeps = map[string][]string{
	"fedgain-model": {"--trials", "3", "--set", "clients=6", "--set", "dim=12", "--set", "samples=40",
		"--set", "scarce_clients=3", "--set", "scarce_samples=6", "--set", "rounds=30"},
	"fedgain-covariate": {"--trials", "1", "--set", "clients=2", "--set", "dim=100", "--set", "samples=101",
		"--set", "scarce_clients=1", "--set", "scarce_samples=5"},
	"polynomial": {"--trials", "7"},
}

func sweepSmall(t *testing.T, preset string, extra ...string) string {
	t.Helper()
	args := append(append([]string{"sweep", "--preset", preset}, smallSweeps[preset]...), extra...)
	out, errs, code := command(t, args...)
	if code != ExitOK || errs != "" {
		t.Fatalf("fedscope %s: exit %d, stderr %q", strings.Join(args, " "), code, errs)
	}
	return out
}

// TestSweepCSVShape checks the column contract of `fedscope sweep` for every
// sweep preset: algorithm,<knob>,trials, then <metric>_mean,<metric>_std;
// one row per (racer, grid value) with every trial counted; finite numbers.
func TestSweepCSVShape(t *testing.T) {
	for _, test := range []struct {
		preset, knob string
		metrics      []string
		points       int
		trials       string
	}{
		{"fedgain-model", "gamma", []string{"fg_scarce", "fg_rich"}, 25, "3"},
		{"fedgain-covariate", "subspace_dim", []string{"fg_scarce", "fg_rich"}, 100, "1"},
		{"polynomial", "samples", []string{"mse", "inv_mse"}, 10, "7"},
	} {
		t.Run(test.preset, func(t *testing.T) {
			header, rows := readCSV(t, sweepSmall(t, test.preset))
			want := []string{"algorithm", test.knob, "trials"}
			for _, m := range test.metrics {
				want = append(want, m+"_mean", m+"_std")
			}
			if strings.Join(header, ",") != strings.Join(want, ",") {
				t.Fatalf("header %v, want %v", header, want)
			}
			labels := labelsOf(rows)
			if got := strings.Join(labels, "|"); got != "FedAvg s=1|FedAvg s=5|FedAvg s=10|FedProx" {
				t.Errorf("racers %s", got)
			}
			if len(rows) != 4*test.points {
				t.Fatalf("%d rows, want %d racers × %d values", len(rows), 4, test.points)
			}
			for _, r := range rows {
				if r[2] != test.trials {
					t.Fatalf("row %v: trials %s, want %s", r, r[2], test.trials)
				}
				for k, f := range r[1:] {
					if f == "" && test.trials == "1" && k >= 3 && k%2 == 1 {
						continue // no standard deviation of one trial
					}
					if v, err := strconv.ParseFloat(f, 64); err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
						t.Fatalf("row %v: field %q is not a finite number ≥ 0", r, f)
					}
				}
			}
		})
	}
}

// TestSweepSameBytes: same seed, same flags → byte-identical sweep output
// under GOMAXPROCS 1 and 2, in both formats (DESIGN.md).
func TestSweepSameBytes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, preset := range []string{"fedgain-model", "polynomial"} {
		for _, format := range []string{"csv", "jsonl"} {
			var outs []string
			for _, procs := range []int{1, 2, 1, 2} {
				runtime.GOMAXPROCS(procs)
				outs = append(outs, sweepSmall(t, preset, "--seed", "5", "--format", format))
			}
			for i, out := range outs[1:] {
				if out != outs[0] {
					t.Errorf("%s %s: run %d differs from run 0", preset, format, i+1)
				}
			}
			if other := sweepSmall(t, preset, "--seed", "6", "--format", format); other == outs[0] {
				t.Errorf("%s %s: seeds 5 and 6 give the same output", preset, format)
			}
		}
	}
}

// TestSweepCompletionOrder: the table's output does not depend on the order
// in which trials arrive. Real trial results are added in several random
// orders, and the output must match byte for byte.
func TestSweepCompletionOrder(t *testing.T) {
	sc := sweepScenario(t, "fedgain-model")
	sc.Trials = 4
	var results []TrialResult
	if err := RunSweep(context.Background(), sc, func(r TrialResult) { results = append(results, r) }); err != nil {
		t.Fatal(err)
	}
	if len(results) != len(sc.Sweep.Grid)*sc.Trials {
		t.Fatalf("%d results, want %d", len(results), len(sc.Sweep.Grid)*sc.Trials)
	}
	var first string
	rng := rand.New(rand.NewPCG(1, 1))
	for k := range 6 {
		rng.Shuffle(len(results), func(i, j int) { results[i], results[j] = results[j], results[i] })
		table, _ := NewSweepTable(sc)
		for _, r := range results {
			table.Add(r)
		}
		var b bytes.Buffer
		table.Write(&b, CSV)
		if k == 0 {
			first = b.String()
		} else if b.String() != first {
			t.Fatalf("order %d: output differs", k)
		}
	}
}

func sweepScenario(t *testing.T, preset string) Scenario {
	t.Helper()
	fs := NewFlagSet("test")
	var sf ScenarioFlags
	sf.Register(fs)
	args := []string{"--preset", preset}
	for i := 0; i < len(smallSweeps[preset]); i++ {
		if smallSweeps[preset][i] == "--trials" {
			i++
			continue
		}
		args = append(args, smallSweeps[preset][i])
	}
	if err := ParseFlags(fs, args); err != nil {
		t.Fatal(err)
	}
	sc, err := sf.Scenario()
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestFedGainAgainstRawData recomputes one trial of fedgain-model from the
// raw data with gonum: the local estimate of each gain client by SVD
// pseudo-inverse, and the federated model by QR least squares on the pooled
// data — with Γ = 0 the limit of FedAvg s = 1 is pooled least squares
// (PAPERS.md §1.6) — so FG_j = ‖X_j⁺y_j − θ*‖ / ‖θ_LS − θ*‖.
func TestFedGainAgainstRawData(t *testing.T) {
	sc := sweepScenario(t, "fedgain-model")
	p, err := sc.PointScenario(0, 2)
	if err != nil {
		t.Fatal(err)
	}
	p.Data.Gamma = 0
	p.FedError = model.FedErrorLimit
	p.Racers = []RacerSpec{{Kind: KindFedAvg, LocalSteps: 1, Batch: -1}}
	got, err := evalFedGain(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	fed, _ := p.Data.Generate(p.Seed)
	var xs, ys []float64
	for _, c := range fed.Clients {
		xs, ys = append(xs, c.X...), append(ys, c.Y...)
	}
	var ls mat.VecDense
	if err := ls.SolveVec(mat.NewDense(len(ys), fed.Dim, xs), mat.NewVecDense(len(ys), ys)); err != nil {
		t.Fatal(err)
	}
	fedErr := floats.Distance(ls.RawVector().Data, fed.Truth, 2)
	for k, j := range []int{0, p.Data.ScarceClients} {
		c := fed.Clients[j]
		var svd mat.SVD
		svd.Factorize(mat.NewDense(c.N, fed.Dim, c.X), mat.SVDThin)
		var est mat.Dense
		svd.SolveTo(&est, mat.NewDense(c.N, 1, c.Y), svd.Rank(1e-12))
		want := floats.Distance(mat.Col(nil, 0, &est), fed.Truth, 2) / fedErr
		if math.Abs(got[0][k]-want) > 1e-8*want {
			t.Errorf("client %d: FG = %v, want %v", j, got[0][k], want)
		}
	}
}

// TestFedErrorModes checks the three federated-error modes against each
// other: min ≤ final, and final → limit for many rounds.
func TestFedErrorModes(t *testing.T) {
	sc := sweepScenario(t, "fedgain-model")
	p, _ := sc.PointScenario(12, 0)
	p.Squared = false
	byMode := map[model.FedError][][]float64{}
	for _, mode := range model.FedErrors {
		p.FedError = mode
		p.Rounds = 3000
		v, err := evalFedGain(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		byMode[mode] = v
	}
	for r := range byMode[model.FedErrorMin] {
		for k := range byMode[model.FedErrorMin][r] {
			// FG is local/federated: the minimum error gives the largest gain.
			mn, fi, li := byMode[model.FedErrorMin][r][k], byMode[model.FedErrorFinal][r][k], byMode[model.FedErrorLimit][r][k]
			if mn < fi*(1-1e-12) {
				t.Errorf("racer %d client %d: FG(min) = %v < FG(final) = %v", r, k, mn, fi)
			}
			if math.Abs(fi-li) > 1e-6*li {
				t.Errorf("racer %d client %d: FG(final, 3000 rounds) = %v, FG(limit) = %v", r, k, fi, li)
			}
		}
	}
	p.Squared = true
	p.FedError = model.FedErrorLimit
	sq, _ := evalFedGain(context.Background(), p)
	if a, b := sq[1][0], byMode[model.FedErrorLimit][1][0]; math.Abs(a-b*b) > 1e-9*a {
		t.Errorf("squared FG %v, want %v² = %v", a, b, b*b)
	}
}

// TestSweepOrderCoarseFirst: the first trial visits the grid coarse to fine
// and every (point, trial) exactly once.
func TestSweepOrderCoarseFirst(t *testing.T) {
	order := sweepOrder(100, 3)
	if len(order) != 300 {
		t.Fatalf("%d tasks", len(order))
	}
	seen := map[sweepTask]bool{}
	for _, task := range order {
		if seen[task] {
			t.Fatalf("task %v twice", task)
		}
		seen[task] = true
	}
	// After 10 tasks the first trial spans the whole grid with gaps ≤ 32.
	var pts []int
	for _, task := range order[:10] {
		pts = append(pts, task.point)
	}
	if fmt.Sprint(pts[:4]) != "[0 99 64 32]" {
		t.Errorf("first tasks %v", pts)
	}
	for _, task := range order[:100] {
		if task.trial != 0 {
			t.Fatalf("a later trial before the first is complete: %v", task)
		}
	}
}

// TestSweepInterrupted: a sweep cancelled midway writes the rows of every
// value with at least one trial, counts trials honestly and exits 130.
func TestSweepInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(300*time.Millisecond, cancel)
	var out, errb bytes.Buffer
	code := Command(ctx, []string{"sweep", "--preset", "fedgain-covariate", "--trials", "1000"}, &out, &errb)
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d; stderr %q", code, ExitInterrupted, errb.String())
	}
	header, rows := readCSV(t, out.String())
	if header[1] != "subspace_dim" || len(rows) == 0 {
		t.Fatalf("header %v, %d rows", header, len(rows))
	}
	for _, r := range rows {
		if n, _ := strconv.Atoi(r[2]); n < 1 || n >= 1000 {
			t.Fatalf("row %v: trials %s", r, r[2])
		}
	}
	if !strings.Contains(errb.String(), "interrupted") || strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("stderr %q", errb.String())
	}
}

// TestSweepCancel: RunSweep returns context.Canceled soon after
// cancellation, and emits nothing afterwards.
func TestSweepCancel(t *testing.T) {
	sc, _ := LookupPreset("fedgain-model")
	ctx, cancel := context.WithCancel(context.Background())
	var after int
	cancelled := false
	start := time.Now()
	err := RunSweep(ctx, sc.Scenario(), func(TrialResult) {
		if cancelled {
			after++
		}
		cancel()
		cancelled = true
	})
	if !errors.Is(err, context.Canceled) || after != 0 {
		t.Errorf("err %v, %d results after cancel", err, after)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("cancellation took %v", d)
	}
}

// TestSweepBadInput checks the bad-input contract of `fedscope sweep`: exit
// 2 and one line naming the key, the value and what is allowed.
func TestSweepBadInput(t *testing.T) {
	for _, test := range []struct {
		args []string
		want []string
	}{
		{[]string{"sweep", "--preset", "fedgain-model", "--set", "gamma=1"}, []string{"gamma", "1", "any other key"}},
		{[]string{"sweep", "--preset", "fedgain-model", "--set", "nosuchknob=1"}, []string{"nosuchknob", "allowed keys"}},
		{[]string{"sweep", "--preset", "fedgain-model", "--set", "fed_error=best"}, []string{"fed_error", "best", "min, final or limit"}},
		{[]string{"sweep", "--preset", "fedgain-model", "--set", "fg_ratio=cubed"}, []string{"fg_ratio", "cubed", "norm or squared"}},
		{[]string{"sweep", "--preset", "fedgain-model", "--set", "batch=20"}, []string{"batch", "20", "batch=0"}},
		{[]string{"sweep", "--preset", "fedgain-model", "--trials", "0"}, []string{"--trials", "0", "1..100000"}},
		{[]string{"sweep", "--preset", "fedgain-covariate", "--set", "dim=50"}, []string{"subspace_dim", "51", "dim=50"}},
		{[]string{"sweep", "--preset", "polynomial", "--set", "dim=4"}, []string{"dim=4", "6..12"}},
		{[]string{"sweep", "--preset", "paradox"}, []string{"paradox", "not a sweep", "fedgain-model"}},
		{[]string{"sweep"}, []string{"--preset", "fedgain-model"}},
		{[]string{"sweep", "--preset", "fedgain-model", "--format", "xml"}, []string{"xml", "csv"}},
		{[]string{"run", "--preset", "polynomial"}, []string{"polynomial", "fedscope sweep"}},
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

// TestProgressETA checks the ETA arithmetic.
func TestProgressETA(t *testing.T) {
	p := Progress{Done: 25, Total: 100, Elapsed: 10 * time.Second}
	if p.ETA() != 30*time.Second || p.Fraction() != 0.25 {
		t.Errorf("ETA %v, fraction %v", p.ETA(), p.Fraction())
	}
	if (Progress{Total: 5}).ETA() != 0 || (Progress{Done: 5, Total: 5, Elapsed: time.Second}).ETA() != 0 {
		t.Error("ETA before the start or after the end is not 0")
	}
}

// TestPolynomialSweepRate checks the shape the minimax theory predicts for
// E000-5 (PAPERS.md §1.9): for FedAvg s = 1, the pooled least-squares fit,
// MSE falls like 1/N: N·MSE changes by less than a factor 2 over N = 20…200
// while MSE itself falls by about 10, with 200 trials.
func TestPolynomialSweepRate(t *testing.T) {
	_, rows := readCSV(t, sweepSmall(t, "polynomial", "--trials", "200", "--set", "algorithms=fedavg:s=1"))
	first, _ := strconv.ParseFloat(rows[0][3], 64)
	last, _ := strconv.ParseFloat(rows[9][3], 64)
	if ratio := first / last; ratio < 6 || ratio > 15 {
		t.Errorf("MSE(N=20)/MSE(N=200) = %v, want about 10", ratio)
	}
}

// TestSweepStatsAgainstGonum: a family without its own aggregation reports
// gonum's stat.MeanStdDev of the per-trial values.
func TestSweepStatsAgainstGonum(t *testing.T) {
	sc := sweepScenario(t, "polynomial")
	sc.Trials = 5
	table, _ := NewSweepTable(sc)
	var results []TrialResult
	if err := RunSweep(context.Background(), sc, func(r TrialResult) { results = append(results, r); table.Add(r) }); err != nil {
		t.Fatal(err)
	}
	for m := range table.Metrics {
		var xs []float64
		for _, r := range results {
			if r.Point == 3 {
				xs = append(xs, r.Values[2][m])
			}
		}
		wantMean, wantStd := stat.MeanStdDev(xs, nil)
		mean, std, n := table.Stat(3, 2, m)
		if n != sc.Trials || math.Abs(mean-wantMean) > 1e-12*math.Abs(wantMean) || math.Abs(std-wantStd) > 1e-10*wantStd {
			t.Errorf("metric %d: Stat = (%v, %v, %d), gonum (%v, %v, %d)", m, mean, std, n, wantMean, wantStd, sc.Trials)
		}
	}
}

// TestFedGainStatSection8 checks the FG statistic against PAPERS.md §8,
// computed here from each trial's own evaluation: the trial-averaged local
// error over the minimum across rounds of the trial-averaged federated error
// curve, the curves recomputed by iterating FedAvg independently of the
// sweep's round maps; and with one trial it equals the per-trial FG.
func TestFedGainStatSection8(t *testing.T) {
	sc := sweepScenario(t, "fedgain-model")
	sc.Trials = 3
	sc.Rounds = 40
	sc.Racers = []RacerSpec{{Kind: KindFedAvg, LocalSteps: 5, Batch: -1}}
	const point = 18 // a large Γ: the error against θ_j* dips, then rises
	table, _ := NewSweepTable(sc)
	var local [2][]float64
	var curves [2][][]float64
	for trial := 0; trial < sc.Trials; trial++ {
		p, err := sc.PointScenario(point, trial)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := evalFedGainRaw(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		table.Add(TrialResult{Point: point, Trial: trial, Values: raw})
		// Independent: FedAvg through algorithms.FedAvg's round loop.
		fed, _ := p.Data.Generate(p.Seed)
		prob := model.NewProblem(fed)
		scarce, rich := model.GainClients(fed)
		for k, j := range []int{scarce, rich} {
			c := &fed.Clients[j]
			local[k] = append(local[k], model.Distance(model.MinNormLeastSquaresOn(c.X, c.Y, c.N, fed.Dim, c.Support), c.Truth))
			curve := []float64{model.Norm(c.Truth)} // t = 0: θ_0 = 0
			alg := algorithms.FedAvg{Eta: p.Eta, LocalSteps: 5}
			if err := alg.Run(context.Background(), prob, p.Rounds, func(r algorithms.Round) {
				curve = append(curve, model.Distance(r.Theta, c.Truth))
			}); err != nil {
				t.Fatal(err)
			}
			curves[k] = append(curves[k], curve)
		}
	}
	for k := range 2 {
		var localMean float64
		for _, v := range local[k] {
			localMean += v / float64(sc.Trials)
		}
		minMean := math.Inf(1)
		for r := range curves[k][0] {
			var m float64
			for trial := range curves[k] {
				m += curves[k][trial][r] / float64(sc.Trials)
			}
			minMean = math.Min(minMean, m)
		}
		want := localMean / minMean
		got, _, n := table.Stat(point, 0, k)
		if n != sc.Trials || math.Abs(got-want) > 1e-9*want {
			t.Errorf("gainer %d: FG = %v (n=%d), want %v", k, got, n, want)
		}
	}
	// One trial: the statistic is that trial's own FG.
	one, _ := NewSweepTable(sc)
	p, _ := sc.PointScenario(point, 0)
	raw, _ := evalFedGainRaw(context.Background(), p)
	one.Add(TrialResult{Point: point, Trial: 0, Values: raw})
	per, _ := evalFedGain(context.Background(), p)
	for k := range 2 {
		if got, _, _ := one.Stat(point, 0, k); math.Abs(got-per[0][k]) > 1e-12*per[0][k] {
			t.Errorf("gainer %d, one trial: FG = %v, per-trial FG %v", k, got, per[0][k])
		}
	}
}
