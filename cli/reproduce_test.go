package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlotFlag: run --plot and sweep --plot write an SVG beside the rows,
// with the racers in its legend; a --plot that cannot be written is refused
// before any work (exit 2), and so is one with --shard.
func TestPlotFlag(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "paradox.svg")
	runSmall(t, "--plot", svg)
	raw, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "FedAvg s=1", "FedProx", "pooled least squares"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("run --plot: the SVG lacks %q", want)
		}
	}
	sweepSVG := filepath.Join(dir, "poly.svg")
	if _, errs, code := command(t, "sweep", "--preset", "polynomial", "--trials", "3", "--plot", sweepSVG); code != ExitOK {
		t.Fatalf("sweep --plot: exit %d: %s", code, errs)
	}
	if raw, err := os.ReadFile(sweepSVG); err != nil || !strings.Contains(string(raw), "FedAvg s=10") {
		t.Errorf("sweep --plot: %v", err)
	}
	for _, test := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--plot", filepath.Join(dir, "x.png")}, "ending in .svg"},
		{[]string{"run", "--plot", filepath.Join(dir, "missing", "x.svg")}, "does not exist"},
		{[]string{"run", "--plot", filepath.Join(dir, "x.svg"), "--out", filepath.Join(dir, "x.svg")}, "the same file as --out"},
		{[]string{"sweep", "--preset", "polynomial", "--shard", "0/2", "--plot", filepath.Join(dir, "x.svg")}, "--plot with --shard"},
	} {
		_, errs, code := command(t, test.args...)
		if code != ExitUsage || !strings.Contains(errs, test.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want 2 and one line saying %q", test.args, code, errs, test.want)
		}
	}
}

// TestReproduceCommand runs `fedscope reproduce` on one cheap experiment:
// report.md, its figure, the rows and the sidecar land in --out, the report
// holds only that experiment's paper, and stderr ends with the count.
// Bad input is refused with one line and exit 2.
func TestReproduceCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	_, errs, code := command(t, "reproduce", "002-bound", "--out", dir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, f := range []string{"report.md", "002-bound.svg", "002-bound.csv", "002-bound.jsonl", "002-bound.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("reproduce wrote no %s", f)
		}
	}
	report, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"| `002-thm21` | 002 | Thm 2.1 |", "reproduced", "| `002-rate` |", "differs",
		"`fedscope run --preset fedavg-bound --seed 1 --rounds 100 --format csv`"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strings.Contains(string(report), "000-fig1") {
		t.Error("report.md of 002-bound lists paper 000")
	}
	if !strings.Contains(errs, "fedscope: reproduce: 3 claims") || !strings.Contains(errs, "[1/1] 002-bound") {
		t.Errorf("stderr: %s", errs)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	for _, test := range []struct {
		args []string
		want string
	}{
		{[]string{"reproduce", "007"}, `unknown paper or experiment "007"`},
		{[]string{"reproduce", "--out", file}, "not a directory"},
		{[]string{"reproduce", "--data", file}, "--data"},
		{[]string{"reproduce", "--shard", "2/2"}, "--shard"},
		{[]string{"reproduce", "--merge"}, "no directory given"},
		{[]string{"reproduce", "--merge", "--quick", dir}, "merge takes only --out"},
		{[]string{"reproduce", "--merge", "--out", t.TempDir(), dir}, "not a shard's directory"},
	} {
		_, errs, code := command(t, test.args...)
		if code != ExitUsage || !strings.Contains(errs, test.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, %q; want 2 and one line saying %q", test.args, code, errs, test.want)
		}
	}
}

// TestReproduceInterrupted: an interrupt stops reproduce with 130 and one
// line saying where the finished experiments' files are, without a report.
func TestReproduceInterrupted(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb bytes.Buffer
	code := Main(ctx, []string{"reproduce", "002", "--out", dir}, "test", &out, &errb)
	if code != ExitInterrupted || !strings.Contains(errb.String(), "interrupted; the files of the experiments finished so far are in "+dir) {
		t.Errorf("exit %d: %q", code, errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "report.md")); err == nil {
		t.Error("an interrupted reproduce wrote report.md")
	}
}
