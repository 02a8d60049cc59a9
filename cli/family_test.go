package cli

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// writeLIBSVM writes a small three-class LIBSVM file whose classes are
// separable in the first two features.
func writeLIBSVM(t testing.TB, n int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 1))
	var b strings.Builder
	for i := 0; i < n; i++ {
		c := 1 + i%3
		fmt.Fprintf(&b, "%d 1:%.4f 2:%.4f 3:%.4f\n", c, float64(c)+0.3*rng.NormFloat64(), -float64(c)+0.3*rng.NormFloat64(), rng.Float64())
	}
	path := filepath.Join(t.TempDir(), "d.libsvm")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDataFileRun: `--set data=` switches the default preset to a run of
// paper 003's family on the file (docs/papers.md §4.7, E003-6), with the other
// assignments applied to it.
func TestDataFileRun(t *testing.T) {
	path := writeLIBSVM(t, 200)
	out, errs, code := command(t, "run", "--set", "data="+path, "--set", "clients=4", "--set", "rff_dim=100",
		"--set", "lambda=1e-2", "--set", "algorithms=krr,dkrr,fednewton", "--rounds", "3")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	header, rows := readCSV(t, out)
	if strings.Join(header, ",") != "algorithm,round,test_mse,test_acc,grad_norm,krr_dist" {
		t.Errorf("header %v", header)
	}
	if len(rows) != 9 {
		t.Fatalf("%d rows, want 3 racers × 3 rounds", len(rows))
	}
	for _, r := range rows {
		// Separable classes: KRR classifies the hold-out well.
		if acc, err := strconv.ParseFloat(r[3], 64); r[0] == "KRR" && (err != nil || acc < 0.9) {
			t.Errorf("KRR test accuracy %s", r[3])
		}
	}
}

// TestBadDataFile: a malformed data file is bad input (exit 2), reported in
// one line naming the file, the line and the column.
func TestBadDataFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(path, []byte("y,a\n1,2\n0,abc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := command(t, "run", "--set", "data="+path)
	if code != ExitUsage || !strings.Contains(errs, "bad.csv:3: column 2") || strings.Count(errs, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want 2 and one line naming bad.csv:3", code, errs)
	}
}

// TestFamilyKnobs: a key of another family is refused with a sentence
// naming the presets it applies to, and each family checks its own racers
// and data keys (exit 2).
func TestFamilyKnobs(t *testing.T) {
	for _, test := range []struct {
		args []string
		want string
	}{
		{[]string{"--preset", "newton-rounds", "--set", "gamma=1"}, "applies only to the paradox, minibatch, fedgain-model, fedgain-covariate preset(s)"},
		{[]string{"--preset", "paradox", "--set", "rank=3"}, "applies only to the lowrank, lowrank-complexity preset(s)"},
		{[]string{"--preset", "lowrank", "--set", "algorithms=fednewton"}, "unknown algorithm"},
		{[]string{"--preset", "newton-rounds", "--set", "algorithms=fedlrgd"}, "unknown algorithm"},
		{[]string{"--preset", "newton-rounds", "--set", "test=/nonexistent/x"}, "applies only once data= is set"},
		{[]string{"--preset", "newton-rounds", "--set", "data=/nonexistent/x"}, "cannot read data file"},
		{[]string{"--preset", "newton-rounds", "--set", "bandwidth=0"}, "median heuristic needs a data file"},
	} {
		_, errs, code := command(t, append([]string{"run"}, test.args...)...)
		if code != ExitUsage || !strings.Contains(errs, test.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", test.args, code, errs, test.want)
		}
	}
}

// TestMixtureKnobs checks the family rules of --set on the mixture preset:
// keys of another family are refused with a sentence naming the presets
// they apply to, and bad mixture values name what is allowed (exit 2, one
// line). (That good mixture keys change the scenario is checked by the
// mixture package's TestMixtureKnobs.)
func TestMixtureKnobs(t *testing.T) {
	for _, test := range []struct {
		preset, set, want string
	}{
		{"mixture", "gamma=1", "applies only to the paradox, minibatch"},
		{"mixture", "algorithms=fedavg", "applies only to the paradox"},
		{"paradox", "k=4", "applies only to the mixture"},
		{"paradox", "delta=1", "applies only to the mixture"},
		{"mixture", "k=1", "2..16"},
		{"mixture", "oi_iters=7", "even"},
		{"mixture", "epsilon=0.3", "(0, 0.25)"},
		{"mixture", "anchors=2", "at least k=3"},
		{"mixture", "weights=1,2", "need k=3"},
		{"mixture", "local=sgd", "fedavg or fedprox"},
		{"mixture", "reuse_data=maybe", "true or false"},
		{"mixture", "nosuch=1", "allowed keys"},
	} {
		_, errs, code := command(t, "run", "--preset", test.preset, "--rounds", "1", "--set", test.set)
		if code != ExitUsage || !strings.Contains(errs, test.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s --set %s: exit %d, %q (want %q)", test.preset, test.set, code, errs, test.want)
		}
	}
}
