package cli

import (
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"
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
// sweep preset of paper 000: algorithm,<knob>,trials, then
// <metric>_mean,<metric>_std; one row per (racer, grid value) with every
// trial counted; finite numbers.
func TestSweepCSVShape(t *testing.T) {
	for _, test := range []struct {
		preset, knob string
		metrics      []string
		points       int
		trials       string
	}{
		{"fedgain-model", "gamma", fgColumns("gamma_realised"), 25, "3"},
		{"fedgain-covariate", "subspace_dim", fgColumns(), 100, "1"},
		{"polynomial", "samples", []string{"mse_mean", "mse_std", "inv_mse_mean", "inv_mse_std", "inv_mse_trial_mean", "inv_mse_trial_std",
			"total_samples_mean", "total_samples_std"}, 10, "7"},
	} {
		t.Run(test.preset, func(t *testing.T) {
			header, rows := readCSV(t, sweepSmall(t, test.preset))
			want := append([]string{"algorithm", test.knob, "trials"}, test.metrics...)
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
					name := header[k+1]
					// No standard deviation of one trial, and none of 1/(mean MSE),
					// a statistic of the trials' mean.
					if f == "" && strings.HasSuffix(name, "_std") && (test.trials == "1" || name == "inv_mse_std") {
						continue
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
// under GOMAXPROCS 1 and 2, in both formats (docs/design.md).
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

// TestNewtonSweepBadInput: the newton sweeps' bad input exits 2 with one
// line naming the key, the value and what is allowed.
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
		// The key and the value are named as for any key of another preset:
		// `key "trials" (value "3")`.
		{[]string{"run", "--preset", "newton-rounds", "--set", "trials=3"}, []string{`"trials"`, `"3"`, "not a sweep", "newton-local-size"}},
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

// fgColumns are the columns of a federation-gain sweep (docs/papers.md §8
// CORRECTED): per gainer the mean and spread of the per-trial FG, its
// median and 10–90 % quantiles; then any extra statistic with mean and std.
func fgColumns(extra ...string) []string {
	var out []string
	for _, g := range []string{"fg_scarce", "fg_rich"} {
		out = append(out, g+"_mean", g+"_std", g+"_median", g+"_p10", g+"_p90")
	}
	for _, e := range extra {
		out = append(out, e+"_mean", e+"_std")
	}
	return out
}
