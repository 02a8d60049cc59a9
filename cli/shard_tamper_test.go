package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The tests of this file check what merge proves about its shards (issue
// 22): a line changed, removed, repeated or moved after writing, a file cut
// short, an evaluation without every curve's numbers, a shard of another
// build, and shards of another format are refused with exit status 2 and
// one line naming the file, the line and the problem; honest shards, and
// shards whose racers are spelled differently but race the same
// algorithms, merge to the unsharded sweep's bytes.

// digestSuffix matches the digest field that ends every line of a shard.
var digestSuffix = regexp.MustCompile(`,"digest":"([0-9a-f]{64})"\}$`)

// resign recomputes the digests of shard lines as README describes them,
// independently of the writer: each is the SHA-256 of the previous line's
// digest followed by the line without its digest field. It stands for a
// writer that would write a wrong line and sign it.
func resign(t *testing.T, lines []string) []string {
	t.Helper()
	prev := ""
	out := make([]string, len(lines))
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\n")
		m := digestSuffix.FindStringSubmatchIndex(l)
		if m == nil {
			t.Fatalf("line %d has no digest field: %q", i+1, l)
		}
		body := l[:m[0]] + "}"
		sum := sha256.Sum256([]byte(prev + body))
		prev = hex.EncodeToString(sum[:])
		out[i] = l[:m[0]] + `,"digest":"` + prev + `"}` + "\n"
	}
	return out
}

// shardLines reads a shard file as lines with their newlines.
func shardLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	return lines[:len(lines)-1] // after the last newline: ""
}

// TestShardDigestsAreREADMEs checks the writer against resign: an honest
// shard signed again by the README's rule is byte for byte the same.
func TestShardDigestsAreREADMEs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if code, _, errs := cli("sweep", "--preset", "polynomial", "--trials", "2", "--set", "clients=3", "--shard", "1/3", "--out", path); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := shardLines(t, path)
	if got, want := strings.Join(resign(t, lines), ""), strings.Join(lines, ""); got != want {
		t.Errorf("the writer's digests are not README's rule:\n%s\nwant\n%s", head(got), head(want))
	}
	if !strings.Contains(lines[0], `"format":2`) || !strings.Contains(lines[0], `"build":"sha256:`) {
		t.Errorf("header %q lacks the format 2 and the build fingerprint", lines[0])
	}
}

// TestMergeRefusesTamperedShards alters an honest shard in every way the
// issue found merged silently, and some more.
func TestMergeRefusesTamperedShards(t *testing.T) {
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
	honest := shardLines(t, s1) // header, 10 evaluations, end line
	if len(honest) != 12 {
		t.Fatalf("shard 1/2 has %d lines, want 12", len(honest))
	}
	edit := func(lines []string, i int, f func(string) string) []string {
		out := append([]string(nil), lines...)
		out[i] = f(out[i])
		return out
	}
	// The first number of a line's values, and the first row.
	firstNumber := regexp.MustCompile(`"values":\[\[([^,\]]+),`)
	firstRow := regexp.MustCompile(`"values":\[(\[[^\]]*\]),`)
	without := func(i int) []string { return append(append([]string(nil), honest[:i]...), honest[i+1:]...) }

	for _, test := range []struct {
		name  string
		lines []string
		line  string // ":3:" names the line
		want  string
	}{
		{"a value removed", edit(honest, 2, func(l string) string { return firstNumber.ReplaceAllString(l, `"values":[[`) }),
			":3:", "does not match its digest"},
		{"a value made negative", edit(honest, 2, func(l string) string { return firstNumber.ReplaceAllString(l, `"values":[[-5,`) }),
			":3:", "does not match its digest"},
		{"a line removed", without(2), ":3:", "a line before it was removed"},
		{"two lines swapped", append(append(append([]string(nil), honest[:2]...), honest[3], honest[2]), honest[4:]...),
			":3:", "does not match its digest"},
		{"a line repeated", append(append(append([]string(nil), honest[:3]...), honest[2]), honest[3:]...),
			":4:", "does not match its digest"},
		{"a header parameter changed", edit(honest, 0, func(l string) string { return strings.Replace(l, `"noise":"0.5"`, `"noise":"0.3"`, 1) }),
			":1:", "header does not match its digest"},
		{"a digest removed", edit(honest, 5, func(l string) string { return digestSuffix.ReplaceAllString(strings.TrimSuffix(l, "\n"), "}") + "\n" }),
			":6:", "has no digest"},
		{"the end line removed", honest[:11], ":11:", "after all 10 of its evaluations, without the end line"},
		{"interrupted after 4 evaluations", honest[:5], ":5:", "after 4 of its 10 evaluations"},
		{"cut in the middle of a line", append(append([]string(nil), honest[:6]...), honest[6][:40]),
			":7:", "ends in the middle of this line"},
		{"another shard's file appended", append(append([]string(nil), honest...), shardLines(t, s0)...),
			":13:", "after the end line"},
		{"a curve's row missing, signed again", resign(t, edit(honest, 3, func(l string) string { return firstRow.ReplaceAllString(l, `"values":[`) })),
			":4:", "has 3 rows of numbers, the sweep has 4 curves (FedAvg s=1, FedAvg s=5, FedAvg s=10, FedProx)"},
		{"a number missing, signed again", resign(t, edit(honest, 8, func(l string) string { return firstNumber.ReplaceAllString(l, `"values":[[`) })),
			":9:", "has 2 numbers for FedAvg s=1, the other evaluations 3"},
		{"format 1", edit(honest, 0, func(l string) string { return strings.Replace(l, `"format":2`, `"format":1`, 1) }),
			":1:", "shard format 1, this fedscope reads format 2"},
	} {
		t.Run(test.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(test.name, " ", "-"))
			if err := os.WriteFile(path, []byte(strings.Join(test.lines, "")), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errs := cli("merge", s0, path)
			if code != ExitUsage || out != "" || strings.Count(errs, "\n") != 1 ||
				!strings.Contains(errs, path+test.line) || !strings.Contains(errs, test.want) {
				t.Errorf("merge: exit %d, stdout %q, stderr %q; want exit 2 and one line naming %s%s and %q",
					code, head(out), errs, filepath.Base(path), test.line, test.want)
			}
		})
	}
	// The honest pair merges.
	if code, _, errs := cli("merge", s0, s1); code != 0 {
		t.Errorf("honest shards: exit %d: %s", code, errs)
	}
}

// TestMergeRefusesAnotherBuild computes a shard as another build of
// fedscope would sign it (another executable fingerprint): merge refuses
// it, naming the file and both builds, and it refuses shards of two builds
// given together, whichever comes first.
func TestMergeRefusesAnotherBuild(t *testing.T) {
	dir := t.TempDir()
	base := []string{"sweep", "--preset", "polynomial", "--trials", "2", "--set", "clients=3"}
	ours := filepath.Join(dir, "ours")
	if code, _, errs := cli(append(base, "--shard", "0/2", "--out", ours)...); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	saved := buildFingerprint
	other := "sha256:" + strings.Repeat("0123456789abcdef", 4)
	buildFingerprint = func() (string, error) { return other, nil }
	theirs := filepath.Join(dir, "theirs")
	code, _, errs := cli(append(base, "--shard", "1/2", "--out", theirs)...)
	buildFingerprint = saved
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(strings.Join(shardLines(t, theirs)[:1], ""), other) {
		t.Fatal("the shard does not carry the build that computed it")
	}
	for _, order := range [][]string{{ours, theirs}, {theirs, ours}} {
		code, out, errs := cli(append([]string{"merge"}, order...)...)
		if code != ExitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, theirs+":1: computed by another build of fedscope") ||
			!strings.Contains(errs, "build sha256:0123456789ab…") {
			t.Errorf("merge %v: exit %d, stderr %q; want exit 2 naming %s:1 and its build", order, code, errs, filepath.Base(theirs))
		}
	}
}

// TestMergeEquivalentRacerSpellings: shards whose racers are spelled
// differently but race the same algorithms (an option pinned to the value
// the scenario gives anyway, a racer listed twice) merge to the unsharded
// sweep's bytes; spellings that race different algorithms do not, among
// them a pinned η on the covariate sweep, whose η follows r at every value.
func TestMergeEquivalentRacerSpellings(t *testing.T) {
	dir := t.TempDir()
	run := func(name string, args ...string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if code, _, errs := cli(append(args, "--out", path)...); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errs)
		}
		return path
	}
	poly := []string{"sweep", "--preset", "polynomial", "--trials", "2", "--set", "clients=3"}
	for _, pair := range [][2]string{
		{"fedavg:s=10,fedprox", "fedavg,fedprox"}, // local_steps=10
		{"fedavg:eta=0.1,fedprox:b=0", "fedavg,fedprox"},
		{"fedavg,fedavg:s=10,fedprox", "fedavg,fedprox,fedprox"},
		{"fedavg:s=1,fedprox", "fedavg:s=1:eta=0.1,fedprox"},
	} {
		a := run("a", append(poly, "--shard", "0/2", "--set", "algorithms="+pair[0])...)
		b := run("b", append(poly, "--shard", "1/2", "--set", "algorithms="+pair[1])...)
		want := run("want.csv", append(poly, "--set", "algorithms="+pair[0])...)
		code, out, errs := cli("merge", b, a)
		wantBytes, _ := os.ReadFile(want)
		if code != 0 || out != string(wantBytes) {
			t.Errorf("%s + %s: exit %d (%s), output\n%s\nwant the unsharded sweep's\n%s", pair[0], pair[1], code, errs, head(out), head(string(wantBytes)))
		}
	}
	for _, c := range []struct {
		args     []string
		one, two string
	}{
		{poly, "fedavg:s=2,fedprox", "fedavg,fedprox"},
		{[]string{"sweep", "--preset", "fedgain-covariate", "--trials", "1", "--rounds", "1", "--set", "clients=2", "--set", "scarce_clients=1",
			"--set", "samples=100", "--set", "scarce_samples=10", "--set", "fed_error=final"}, "fedavg:eta=0.1", "fedavg"},
	} {
		a := run("a", append(c.args, "--shard", "0/2", "--set", "algorithms="+c.one)...)
		b := run("b", append(c.args, "--shard", "1/2", "--set", "algorithms="+c.two)...)
		code, _, errs := cli("merge", a, b)
		if code != ExitUsage || !strings.Contains(errs, "shards of different sweeps: algorithms") {
			t.Errorf("%s + %s: exit %d, stderr %q; want a refusal naming algorithms", c.one, c.two, code, errs)
		}
	}
}
