package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/experiment/registry"
	"github.com/fedscope/fedscope/internal/slowtest"
)

// shardCases are the sweep presets with inputs small enough for a test: every
// sweep preset of the catalog must appear (TestShardsCoverEverySweep).
var shardCases = []struct {
	preset string
	args   []string
}{
	{"fedgain-model", []string{"--trials", "2", "--rounds", "20", "--set", "clients=4", "--set", "scarce_clients=2",
		"--set", "dim=10", "--set", "samples=20", "--set", "scarce_samples=5"}},
	// The closed-form limit, with NaN-free squared ratios.
	{"fedgain-model", []string{"--trials", "3", "--set", "clients=3", "--set", "scarce_clients=1", "--set", "dim=6",
		"--set", "samples=12", "--set", "scarce_samples=3", "--set", "fed_error=limit", "--set", "fg_ratio=squared"}},
	{"fedgain-covariate", []string{"--trials", "1", "--rounds", "10", "--set", "clients=2", "--set", "scarce_clients=1",
		"--set", "samples=100", "--set", "scarce_samples=10", "--set", "fed_error=final", "--set", "algorithms=fedavg:s=2,fedprox"}},
	{"polynomial", []string{"--trials", "3", "--set", "clients=4"}},
	{"lowrank-complexity", []string{"--trials", "2", "--rounds", "30", "--set", "clients=10", "--set", "samples=20"}},
	{"newton-local-size", []string{"--trials", "1", "--rounds", "2", "--set", "total_samples=400", "--set", "rff_dim=10",
		"--set", "test_size=20"}},
	{"newton-heterogeneity", []string{"--trials", "2", "--rounds", "2", "--set", "clients=3", "--set", "samples=20",
		"--set", "rff_dim=10", "--set", "test_size=20"}},
	{"newton-heterogeneity", []string{"--trials", "1", "--rounds", "2", "--set", "sweep=beta", "--set", "clients=3",
		"--set", "samples=20", "--set", "rff_dim=10", "--set", "test_size=20"}},
}

// cli runs fedscope with args and returns its exit status and output.
func cli(args ...string) (int, string, string) {
	var out, errs bytes.Buffer
	code := Main(context.Background(), args, "test", &out, &errs)
	return code, out.String(), errs.String()
}

// TestShardsCoverEverySweep keeps shardCases in step with the catalog.
func TestShardsCoverEverySweep(t *testing.T) {
	for _, name := range registry.Catalog().SweepPresetNames() {
		if !slices.ContainsFunc(shardCases, func(c struct {
			preset string
			args   []string
		}) bool {
			return c.preset == name
		}) {
			t.Errorf("sweep preset %s has no case in shardCases", name)
		}
	}
}

// TestShardMerge checks that 1, 2 and 3 shards of every sweep preset merge
// to the same bytes as the unsharded sweep, in CSV and JSON lines, with one
// and with two CPUs (a shard's evaluations, and so the merged statistics,
// must not depend on which shard or how many CPUs computed them).
func TestShardMerge(t *testing.T) {
	slowtest.Skip(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	dir := t.TempDir()
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		for ci, c := range shardCases {
			base := append([]string{"sweep", "--preset", c.preset}, c.args...)
			want := map[string]string{}
			for _, format := range []string{"csv", "jsonl"} {
				code, out, errs := cli(append(base, "--format", format)...)
				if code != 0 {
					t.Fatalf("%s %v: exit %d: %s", c.preset, c.args, code, errs)
				}
				want[format] = out
			}
			for n := 1; n <= 3; n++ {
				var files []string
				for i := 0; i < n; i++ {
					path := filepath.Join(dir, fmt.Sprintf("p%d-c%d-%d-of-%d.jsonl", procs, ci, i, n))
					if code, _, errs := cli(append(base, "--shard", fmt.Sprintf("%d/%d", i, n), "--out", path)...); code != 0 {
						t.Fatalf("%s shard %d/%d: exit %d: %s", c.preset, i, n, code, errs)
					}
					files = append(files, path)
				}
				// Shards may come in any order.
				slices.Reverse(files)
				for _, format := range []string{"csv", "jsonl"} {
					code, out, errs := cli(append([]string{"merge", "--format", format}, files...)...)
					if code != 0 {
						t.Fatalf("%s: merge of %d shards: exit %d: %s", c.preset, n, code, errs)
					}
					if out != want[format] {
						t.Errorf("GOMAXPROCS=%d %s %v: %d shards merge (%s) to\n%s\nwant the unsharded sweep's\n%s",
							procs, c.preset, c.args, n, format, head(out), head(want[format]))
					}
				}
			}
		}
	}
}

func head(s string) string {
	lines := strings.SplitN(s, "\n", 4)
	return strings.Join(lines[:min(3, len(lines))], "\n")
}

// TestShardErrors checks that bad shard specifications and shards that do
// not belong together are refused with exit status 2 and one line naming
// the problem.
func TestShardErrors(t *testing.T) {
	dir := t.TempDir()
	base := []string{"sweep", "--preset", "polynomial", "--trials", "2", "--set", "clients=3"}
	shard := func(name string, extra ...string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if code, _, errs := cli(append(append(base, extra...), "--out", path)...); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errs)
		}
		return path
	}
	s0, s1 := shard("s0", "--shard", "0/2"), shard("s1", "--shard", "1/2")
	seed := shard("seed", "--shard", "1/2", "--seed", "7")
	noise := shard("noise", "--shard", "1/2", "--set", "noise=0.3")
	three := shard("three", "--shard", "1/3")
	full, err := os.ReadFile(s1)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(full), "\n")
	cut := filepath.Join(dir, "cut")
	os.WriteFile(cut, []byte(strings.Join(lines[:len(lines)-2], "")), 0o644) // no end line
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("algorithm,samples\n"), 0o644)

	for _, test := range []struct {
		args []string
		want string // in the message
	}{
		{append(base, "--shard", "2/2"), "shard indices run from 0 to 1"},
		{append(base, "--shard", "-1/2"), "must lie in 0..1"},
		{append(base, "--shard", "0/0"), "number of shards"},
		{append(base, "--shard", "1"), "must be i/n"},
		{append(base, "--shard", "a/b"), "must be i/n"},
		{append(base, "--shard", "0/2", "--format", "csv"), "JSON lines"},
		{[]string{"merge", s0}, "shard 1/2 missing"},
		{[]string{"merge", s0, seed}, "seed 1 vs 7"},
		{[]string{"merge", s0, noise}, "noise 0.5 vs 0.3"},
		{[]string{"merge", s0, three}, "number of shards 2 vs 3"},
		{[]string{"merge", s0, s0}, "given twice"},
		{[]string{"merge", s0, cut}, "without the end line"},
		{[]string{"merge", s0, junk}, "not a shard file"},
		{[]string{"merge", s0, filepath.Join(dir, "nope")}, "cannot read"},
		{[]string{"merge"}, "no shard files"},
		{[]string{"merge", "--format", "xml", s0, s1}, "allowed formats"},
		{[]string{"merge", s0, s1, "--out", "x"}, "flags go before"},
	} {
		code, out, errs := cli(test.args...)
		if code != 2 || out != "" || !strings.Contains(errs, test.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("fedscope %s: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q",
				strings.Join(test.args, " "), code, head(out), errs, test.want)
		}
	}
	if code, _, errs := cli("merge", s1, s0); code != 0 {
		t.Errorf("merge of the two shards: exit %d: %s", code, errs)
	}
}
