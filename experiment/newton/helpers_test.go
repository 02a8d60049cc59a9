package newton

import (
	"bytes"
	"context"
	"encoding/csv"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/experiment"
)

// catalog holds the one family of these tests.
var catalog = experiment.NewCatalog(Family)

// Small versions of the newton sweeps: the presets' grids and racers with
// few random features and test points, so that a sweep takes well under a
// second even under -race. Both use 2 trials.
var (
	smallLocalSize = []string{"rff_dim=20", "test_size=100", "total_samples=1000"}
	smallHetero    = []string{"rff_dim=20", "test_size=100", "clients=4", "samples=60"}
)

// preset returns a preset with assignments applied as `--set` applies them
// (the early ones, sweep=, first).
func preset(t testing.TB, name string, sets ...string) experiment.Scenario {
	t.Helper()
	sc, err := catalog.Scenario(name, sets...)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// sweepOutput runs a newton sweep preset, shrunk to its small version with 2
// trials, with extra assignments, and returns its table in the given format.
func sweepOutput(t *testing.T, name string, f experiment.Format, sets ...string) string {
	t.Helper()
	small := smallLocalSize
	if name == "newton-heterogeneity" {
		small = smallHetero
	}
	sc := preset(t, name, append(slices.Clone(small), sets...)...)
	sc.Trials = 2
	table, err := experiment.NewSweepTable(sc)
	if err != nil {
		t.Fatal(err)
	}
	if err := experiment.RunSweep(context.Background(), sc, table.Add); err != nil {
		t.Fatalf("%s %v: %v", name, sets, err)
	}
	var b bytes.Buffer
	if err := table.Write(&b, f); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// newtonSweep is sweepOutput as CSV, parsed.
func newtonSweep(t *testing.T, name string, sets ...string) (header []string, rows [][]string) {
	t.Helper()
	return readCSV(t, sweepOutput(t, name, experiment.CSV, sets...))
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

// cfg reads a scenario's configuration back.
func cfg(sc experiment.Scenario) Config { return sc.Config.(Config) }
