package experiment

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
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
		if r[0] == "KRR" && r[3] < "0.9" { // separable classes: KRR classifies the hold-out well
			t.Errorf("KRR test accuracy %s", r[3])
		}
	}
}

func TestBadDataFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.csv")
	os.WriteFile(path, []byte("y,a\n1,2\n0,abc\n"), 0o644)
	_, errs, code := command(t, "run", "--set", "data="+path)
	if code != ExitUsage || !strings.Contains(errs, "bad.csv:3: column 2") || strings.Count(errs, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want 2 and one line naming bad.csv:3", code, errs)
	}
}

func TestFamilyKnobs(t *testing.T) {
	for _, test := range []struct {
		args []string
		want string
	}{
		{[]string{"--preset", "newton-rounds", "--set", "gamma=1"}, "applies only to the paradox, minibatch, fedgain-model, fedgain-covariate preset(s)"},
		{[]string{"--preset", "paradox", "--set", "rank=3"}, "applies only to the lowrank preset(s)"},
		{[]string{"--preset", "lowrank", "--set", "algorithms=fednewton"}, "unknown algorithm"},
		{[]string{"--preset", "newton-rounds", "--set", "algorithms=fedlrgd"}, "unknown algorithm"},
		{[]string{"--preset", "newton-rounds", "--set", "test=/nonexistent/x"}, "cannot read data file"},
		{[]string{"--preset", "newton-rounds", "--set", "bandwidth=0"}, "median heuristic needs a data file"},
	} {
		_, errs, code := command(t, append([]string{"run"}, test.args...)...)
		if code != ExitUsage || !strings.Contains(errs, test.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", test.args, code, errs, test.want)
		}
	}
}

func TestNewtonRoundsShape(t *testing.T) {
	out, errs, code := command(t, "run", "--preset", "newton-rounds", "--rounds", "4")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, rows := readCSV(t, out)
	if got := strings.Join(labelsOf(rows), ","); got != "KRR,DKRR,FedNewton,FedAvg s=2,FedProx" {
		t.Errorf("racers %s", got)
	}
	again, _, _ := command(t, "run", "--preset", "newton-rounds", "--rounds", "4")
	if again != out {
		t.Error("same seed, different output")
	}
	lr, errs, code := command(t, "run", "--preset", "lowrank", "--rounds", "3", "--set", "algorithms=fedlrgd:r=4,fedavg")
	if code != ExitOK || !strings.HasPrefix(lr, "algorithm,round,suboptimality,oracle,comm_up,comm_down") {
		t.Errorf("lowrank: exit %d %s\n%s", code, errs, lr)
	}
}
