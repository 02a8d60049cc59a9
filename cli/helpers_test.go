package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/registry"
)

// small shrinks the paradox preset so that a run takes milliseconds, even
// under -race, while keeping its four racers and their dynamics.
var small = []string{"--rounds", "20", "--set", "clients=6", "--set", "samples=80", "--set", "dim=12"}

// command runs `fedscope <args>` in-process and returns what it printed and
// its exit status; stderr leaves out the end-of-run summaries, which every
// run of the paper-000 family prints (rawCommand keeps them).
func command(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	out, errs, code := rawCommand(t, args...)
	return out, withoutSummaries(errs), code
}

// rawCommand is command with stderr as printed.
func rawCommand(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, "test", &out, &errb)
	return out.String(), errb.String(), code
}

// withoutSummaries drops the "fedscope: summary: …" lines of stderr.
func withoutSummaries(s string) string {
	var keep []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" && !strings.HasPrefix(l, "fedscope: summary: ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

// newApp returns an invocation of the real catalog with its own engine, for
// tests that run several commands on one cache or swap the catalog.
func newApp(cat *experiment.Catalog) *app {
	if cat == nil {
		cat = registry.Catalog()
	}
	return &app{catalog: cat, engine: experiment.NewEngine()}
}

// exec runs a headless subcommand on a, as Main does, and returns what it
// printed and its exit status.
func runCmd(ctx context.Context, a *app, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	a.stdout, a.stderr = &out, &errb
	code = a.report(ctx, a.command(ctx, args))
	return out.String(), withoutSummaries(errb.String()), code
}

// runSmall runs the reduced paradox with extra flags and fails the test
// unless it exits 0 with nothing on stderr.
func runSmall(t *testing.T, extra ...string) string {
	t.Helper()
	args := append(append([]string{"run", "--preset", "paradox"}, small...), extra...)
	out, errs, code := command(t, args...)
	if code != ExitOK || errs != "" {
		t.Fatalf("fedscope %s: exit %d, stderr %q", strings.Join(args, " "), code, errs)
	}
	return out
}

// readCSV parses CSV output into its header and rows.
func readCSV(t *testing.T, s string) (header []string, rows [][]string) {
	t.Helper()
	all, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	if err != nil {
		t.Fatalf("output is not CSV: %v\n%s", err, s)
	}
	if len(all) == 0 {
		t.Fatal("empty CSV output")
	}
	return all[0], all[1:]
}

// labelsOf returns the distinct algorithm labels in order of appearance.
func labelsOf(rows [][]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rows {
		if !seen[r[0]] {
			seen[r[0]] = true
			out = append(out, r[0])
		}
	}
	return out
}

// checkUsageError asserts exit status 2, exactly one line on stderr and
// nothing on stdout.
func checkUsageError(t *testing.T, stdout, stderr string, code int) {
	t.Helper()
	if code != ExitUsage {
		t.Errorf("exit status %d, want %d (stderr %q)", code, ExitUsage, stderr)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("stderr is not exactly one line: %q", stderr)
	}
	if strings.Contains(stderr, "panic") {
		t.Errorf("stderr mentions a panic: %q", stderr)
	}
	if stdout != "" {
		t.Errorf("stdout is not empty on bad input: %q", stdout)
	}
}
