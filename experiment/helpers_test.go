package experiment

import (
	"bytes"
	"context"
	"encoding/csv"
	"strings"
	"testing"
)

// small shrinks the paradox preset so that a run takes milliseconds, even
// under -race, while keeping its four racers and their dynamics.
var small = []string{"--rounds", "20", "--set", "clients=6", "--set", "samples=80", "--set", "dim=12"}

// command runs `fedscope <args>` in-process and returns what it printed and
// its exit status.
func command(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Command(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
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

// resetProblems empties the cache of prepared data so that the next run
// generates the federation and its statistics afresh.
func resetProblems() {
	problems.clear()
}
