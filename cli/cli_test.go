package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/registry"
)

// run calls Main and returns its status and outputs.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	status := Main(context.Background(), args, "test", &out, &errb)
	return status, out.String(), errb.String()
}

// oneLineMessage checks that stderr is exactly one line with no control
// characters (a path with a line break, an ESC in a value).
func oneLineMessage(t *testing.T, stderr string) {
	t.Helper()
	if !strings.HasSuffix(stderr, "\n") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr is not exactly one line: %q", stderr)
	}
	for _, r := range strings.TrimSuffix(stderr, "\n") {
		if unicode.IsControl(r) {
			t.Errorf("stderr holds the control character %U: %q", r, stderr)
			break
		}
	}
}

// TestListedMessages checks the messages issue 13 lists: each is one line,
// exit status 2, and says the right thing.
func TestListedMessages(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "d.libsvm")
	os.WriteFile(data, []byte(strings.Repeat("1 1:1 2:0.5\n2 1:0.5 2:1\n", 10)), 0o644)
	for _, test := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--preset", "newton-rounds", "--set", "data=" + dir + "/a\nb"}, `a\nb`},
		{[]string{"run", "--preset", "mixture", "--set", "delta=1e-320"}, "too small"},
		{[]string{"run", "--preset", "mixture", "--set", "delta_assumed=1e-320"}, "too small"},
		{[]string{"run", "--preset", "paradox", "--set", "eta=NaN"}, "NaN is not a number"},
		{[]string{"run", "--preset", "paradox", "--set", "eta=1e-400"}, "too small"},
		{[]string{"run", "--preset", "newton-rounds", "--set", "clients=9223372036854775808"}, "too large; allowed: a whole number in 1..10000"},
		{[]string{"run", "--preset", "lowrank", "--set", "dim=1000"}, "allowed: a whole number in 1..100"},
		{[]string{"run", "--preset", "paradox", "--set", "gamma_scheme=z"}, `gamma_scheme="z": must be radius or exact`},
		{[]string{"run", "--preset", "newton-rounds", "--set", "test=" + data}, "applies only once data= is set"},
		{[]string{"sweep", "--preset", "newton-heterogeneity", "--set", "data=" + data}, "is a sweep, and data= opens a run"},
		{[]string{"run", "--preset", "newton-rounds", "--set", "data=" + dir}, "is a directory, not a data file"},
		{[]string{"run", "--preset", "paradox", "--format", "jsonl", "--out", filepath.Join(dir, "x.csv")}, "contradicts"},
		{[]string{"run", "--preset", "paradox", "--out", filepath.Join(dir, "nodir", "x.csv")}, "does not exist"},
		{[]string{"run", "--preset", "paradox", "--out", dir}, "is a directory"},
		{[]string{"run", "--preset", "newton-rounds", "--set", "data=" + data, "--out", data}, "a file this run reads"},
		{[]string{"run", "--preset", "paradox", "--out", ""}, "give a file name"},
	} {
		status, _, stderr := run(t, test.args...)
		if status != ExitUsage || !strings.Contains(stderr, test.want) {
			t.Errorf("%q: status %d, stderr %q; want 2 and %q", test.args, status, stderr, test.want)
		}
		oneLineMessage(t, stderr)
	}
	if st, err := os.Stat(data); err != nil || st.Size() != 240 {
		t.Errorf("the data file changed: %v, %v", st, err)
	}
}

// TestAllowedKeysAreAccepted checks that every key an unknown-key message
// lists for a preset is accepted by that preset with its own value: the
// lists name no key that is then refused.
func TestAllowedKeysAreAccepted(t *testing.T) {
	cat := registry.Catalog()
	for _, p := range cat.Presets() {
		sc := p.Scenario()
		err := cat.Set(&sc, "no_such_key", "1")
		_, list, ok := strings.Cut(err.Error(), "allowed keys: ")
		if !ok {
			t.Fatalf("%s: %v", p.Name, err)
		}
		for _, key := range strings.Split(list, ", ") {
			sc := p.Scenario()
			if _, err := cat.Apply(sc, []string{key + "=" + sc.Get(key)}); err != nil {
				t.Errorf("%s lists %s but refuses %s=%s: %v", p.Name, key, key, sc.Get(key), err)
			}
		}
	}
}

// TestScarceSamplesBackToZero sets scarce_samples to its default 0 again.
func TestScarceSamplesBackToZero(t *testing.T) {
	status, out, stderr := run(t, "run", "--preset", "paradox", "--rounds", "1", "--set", "scarce_samples=5", "--set", "scarce_samples=0")
	if status != ExitOK || !strings.HasPrefix(out, "algorithm,round,") {
		t.Errorf("status %d, stderr %q", status, stderr)
	}
}

// TestSettingsWithoutEffectAreNamed: a --set that changes nothing runs, and
// stderr says which setting and why; the same key where it acts, or an
// inert key left at its preset value, says nothing.
func TestSettingsWithoutEffectAreNamed(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // "" for no warning
	}{
		{[]string{"--preset", "paradox", "--set", "batch_norm=batch"}, "batch_norm=batch has no effect: no racer takes minibatch steps"},
		{[]string{"--preset", "paradox", "--set", "batch=10", "--set", "batch_norm=batch"}, ""},
		{[]string{"--preset", "paradox", "--set", "algorithms=fedavg:b=5", "--set", "batch_norm=batch"}, ""},
		{[]string{"--preset", "paradox", "--set", "gamma_scheme=exact"}, "gamma_scheme=exact has no effect: gamma=0"},
		{[]string{"--preset", "paradox", "--set", "gamma=1", "--set", "gamma_scheme=exact"}, ""},
		{[]string{"--preset", "paradox", "--set", "algorithms=fedavg:s=2,fedprox", "--set", "local_steps=4"}, "local_steps=4 has no effect"},
		{[]string{"--preset", "paradox", "--set", "algorithms=fedavg:eta=0.1,fedprox:eta=0.2", "--set", "eta=0.05"}, "eta=0.05 has no effect: every racer pins its own eta"},
		{[]string{"--preset", "paradox", "--set", "algorithms=fedavg:b=5,fedprox:b=5", "--set", "batch=10"}, "batch=10 has no effect: every racer pins its own b"},
		{[]string{"--preset", "newton-rounds", "--set", "algorithms=krr,fednewton", "--set", "lambda_prox=1"}, "lambda_prox=1 has no effect: no FedProx racer"},
		{[]string{"--preset", "newton-rounds", "--set", "lambda_prox=1"}, ""},
	} {
		args := append([]string{"run", "--rounds", "1"}, c.args...)
		status, _, stderr := run(t, args...)
		if status != ExitOK {
			t.Errorf("%v: status %d, stderr %q", c.args, status, stderr)
			continue
		}
		got := strings.Contains(stderr, "has no effect")
		if c.want == "" && got || c.want != "" && !strings.Contains(stderr, "fedscope: warning: "+c.want) {
			t.Errorf("%v: stderr %q, want the warning %q", c.args, stderr, c.want)
		}
	}
}

// TestEmptyDataReturnsToSynthetic checks that data= with no path after a
// file goes back to the synthetic data (it complained about the bandwidth).
func TestEmptyDataReturnsToSynthetic(t *testing.T) {
	data := filepath.Join(t.TempDir(), "d.libsvm")
	os.WriteFile(data, []byte("1 1:1\n2 1:2\n"), 0o644)
	status, out, stderr := run(t, "run", "--preset", "newton-rounds", "--rounds", "1", "--set", "data="+data, "--set", "data=")
	if status != ExitOK || !strings.Contains(out, "FedNewton,1,") {
		t.Errorf("status %d, stderr %q; want a synthetic run", status, stderr)
	}
}

// TestCSVWithBOM races a CSV file that starts with a byte-order mark.
func TestCSVWithBOM(t *testing.T) {
	data := filepath.Join(t.TempDir(), "bom.csv")
	var b strings.Builder
	b.WriteString("\xef\xbb\xbflabel,a,b\n")
	for i := range 40 {
		fmt.Fprintf(&b, "%d,%g,%g\n", i%2, float64(i%5)/5, float64(i%3)/3)
	}
	os.WriteFile(data, []byte(b.String()), 0o644)
	status, _, stderr := run(t, "run", "--preset", "newton-rounds", "--rounds", "1", "--set", "data="+data, "--set", "clients=2", "--set", "rff_dim=20")
	if status != ExitOK {
		t.Errorf("status %d, stderr %q", status, stderr)
	}
}

// TestOutTargets runs with --out pointing at each kind of target the
// command line meets and checks the target's kind and content afterwards
// (cli/output tests every kind in detail).
func TestOutTargets(t *testing.T) {
	dir := t.TempDir()
	args := func(out string) []string {
		return []string{"run", "--preset", "paradox", "--rounds", "2", "--out", out}
	}

	regular := filepath.Join(dir, "regular.csv")
	os.WriteFile(regular, []byte("old\n"), 0o640)
	if status, _, stderr := run(t, args(regular)...); status != ExitOK {
		t.Fatalf("regular: %d %q", status, stderr)
	}
	checkCSV(t, regular, 13) // header + 4 racers × rounds 0..2
	if st, _ := os.Stat(regular); st.Mode().Perm() != 0o640 {
		t.Errorf("regular: mode %v, want 0640 kept", st.Mode().Perm())
	}

	jsonl := filepath.Join(dir, "rows.jsonl")
	if status, _, _ := run(t, args(jsonl)...); status != ExitOK {
		t.Fatal("jsonl")
	}
	if b, _ := os.ReadFile(jsonl); !bytes.HasPrefix(b, []byte(`{"record":"header"`)) {
		t.Errorf("--out rows.jsonl wrote %.40q, want JSON lines (format from the extension)", b)
	}

	link := filepath.Join(dir, "link.csv")
	os.Symlink("regular.csv", link)
	run(t, args(link)...)
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the symbolic link was replaced")
	}
	checkCSV(t, regular, 13) // header + 4 racers × rounds 0..2

	readonly := filepath.Join(dir, "ro.csv")
	os.WriteFile(readonly, []byte("keep\n"), 0o444)
	if status, _, _ := run(t, args(readonly)...); status != ExitUsage {
		t.Errorf("read-only: status %d, want 2", status)
	}
	if b, _ := os.ReadFile(readonly); string(b) != "keep\n" {
		t.Errorf("read-only file now holds %q", b)
	}

	var out bytes.Buffer
	if status := Main(context.Background(), args("-"), "test", &out, io.Discard); status != ExitOK || !strings.HasPrefix(out.String(), "algorithm,round,") {
		t.Errorf("--out -: status %d, stdout %.40q", status, out.String())
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`--out - created a file named "-"`)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".fedscope-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// checkCSV checks that path holds a whole CSV table of rows rows (header
// included), every row as wide as the header.
func checkCSV(t *testing.T, path string, rows int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != rows || recs[0][0] != "algorithm" {
		t.Errorf("%s: %d records, err %v; want %d starting with the header", path, len(recs), err, rows)
	}
}

// interrupt returns an app whose command is cancelled, with the cause
// Signal{sig}, from inside the stream once k rows (rounds or sweep
// evaluations) have arrived: no clock is involved.
func interrupt(k int, sig os.Signal) (*app, context.Context, *bytes.Buffer) {
	ctx, cancel := context.WithCancelCause(context.Background())
	var errb bytes.Buffer
	a := &app{catalog: registry.Catalog(), engine: experiment.NewEngine(), stdout: io.Discard, stderr: &errb}
	seen := 0
	a.onRow = func() {
		if seen++; seen == k {
			cancel(Signal{sig})
		}
	}
	return a, ctx, &errb
}

// TestInterruptedRunKeepsRows cancels a run after 10 rounds: the rows so
// far are written whole and counted in the message, and the status is
// 128 + the signal (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).
func TestInterruptedRunKeepsRows(t *testing.T) {
	for _, test := range []struct {
		sig    os.Signal
		status int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}, {syscall.SIGHUP, 129}} {
		path := filepath.Join(t.TempDir(), "rows.csv")
		a, ctx, errb := interrupt(10, test.sig)
		status := a.report(ctx, a.command(ctx, []string{"run", "--preset", "paradox", "--rounds", "1000", "--out", path}))
		if status != test.status {
			t.Errorf("%v: status %d, want %d (stderr %q)", test.sig, status, test.status, errb)
		}
		b, _ := os.ReadFile(path)
		rows := strings.Count(string(b), "\n") - 1
		if rows < 10 || rows >= 4000 || !strings.Contains(errb.String(), fmt.Sprintf("wrote the %d rows computed so far", rows)) {
			t.Errorf("%v: %d rows in the file, stderr %q; want 10 or more (not all 4000) and the count in the message", test.sig, rows, errb)
		}
		checkCSV(t, path, rows+1)
	}
}

// TestInterruptedSweepKeepsRows cancels a sweep after 3 evaluations: the
// values done are written with their trial counts.
func TestInterruptedSweepKeepsRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sweep.csv")
	a, ctx, errb := interrupt(3, syscall.SIGTERM)
	status := a.report(ctx, a.command(ctx, []string{"sweep", "--preset", "polynomial", "--trials", "50", "--out", path}))
	if status != 143 {
		t.Errorf("status %d, want 143 (stderr %q)", status, errb)
	}
	b, _ := os.ReadFile(path)
	rows := strings.Count(string(b), "\n") - 1
	if rows < 1 || !strings.Contains(errb.String(), fmt.Sprintf("wrote the %d rows computed so far", rows)) {
		t.Errorf("%d rows, stderr %q", rows, errb)
	}
}

// TestInterruptBeforeAnyRowLeavesTarget cancels before the first row: an
// existing --out file is left as it was.
func TestInterruptBeforeAnyRowLeavesTarget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keep.csv")
	os.WriteFile(path, []byte("precious\n"), 0o644)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(Signal{syscall.SIGINT})
	var errb bytes.Buffer
	status := Main(ctx, []string{"run", "--preset", "paradox", "--out", path}, "test", io.Discard, &errb)
	if b, _ := os.ReadFile(path); status != 130 || string(b) != "precious\n" || !strings.Contains(errb.String(), "is as it was") {
		t.Errorf("status %d, file %q, stderr %q; want 130, the file untouched and a message saying so", status, b, errb.String())
	}
}

// TestExplorerWithoutTerminal says in one line how to run headless.
func TestExplorerWithoutTerminal(t *testing.T) {
	status, _, stderr := run(t, "--preset", "fedgain-model")
	if status != ExitUsage || !strings.Contains(stderr, "fedscope sweep --preset fedgain-model") {
		t.Errorf("status %d, stderr %q", status, stderr)
	}
	oneLineMessage(t, stderr)
}
