package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/registry"
)

// fuzzValues are the seed values tried for every key of every preset: the
// key's own value, the empty string, limits and their neighbours, NaN,
// numbers too large for an int or a float64 or too small for a float64,
// text, and values with a line break, a carriage return and an escape.
var fuzzValues = []string{"", "0", "-1", "1", "2", "1e400", "1e-400", "NaN", "-Inf", "9223372036854775808",
	"x", "a\nb", "a\rb", "\x1b[2J", " 3 ", "0.5", "1,2,3", "fedavg:s=0", "true"}

// FuzzCommandLine checks every message the command line gives before a run
// (the --set parser over every key of every preset, --preset, --format and
// --out): exit status 0 or 2, never a panic, and a refusal is exactly one
// line without control characters. It stops before running anything: the
// command is prepared (scenario validated, --out opened) and then given up.
// CI fuzzes it for 30 s (`go test -fuzz FuzzCommandLine -fuzztime 30s
// ./cli`); `go test` runs its seeds, every preset × key × value.
func FuzzCommandLine(f *testing.F) {
	cat := registry.Catalog()
	for _, p := range cat.Presets() {
		sc := p.Scenario()
		cmd := "run"
		if sc.IsSweep() {
			cmd = "sweep"
		}
		for _, key := range sc.KnobNames() {
			for _, v := range append([]string{sc.Get(key)}, fuzzValues...) {
				f.Add(cmd, p.Name, key, v, "", "")
			}
		}
	}
	for _, s := range []struct{ preset, format, out string }{
		{"nope", "", ""}, {"paradox\n", "", ""}, {"", "", ""}, {"paradox", "xml", ""}, {"paradox", "jsonl", "x.csv"},
		{"paradox", "", "x.jsonl"}, {"paradox", "", "-"}, {"paradox", "", "a\nb.csv"}, {"paradox", "", "nodir/x.csv"},
		{"paradox", "", "."}, {"paradox", "CSV", "x.CSV"}, {"paradox", "", "x\x1b.csv"},
		{"paradox", "", "(\x89\x1c\xb9\xf8\x8c(/0"}, // a missing directory whose name holds the separators of repeated
		{"paradox", "", "A\xbfk\xbaZ\xefu"},         // a file name that is not UTF-8: the stale-file scan once built a regexp from it
	} {
		f.Add("run", s.preset, "eta", "0.1", s.format, s.out)
	}
	f.Fuzz(func(t *testing.T, cmd, preset, key, value, format, out string) {
		if cmd != "run" && cmd != "sweep" {
			cmd = "run"
		}
		args := []string{"--preset", preset, "--set", key + "=" + value}
		if format != "" {
			args = append(args, "--format", format)
		}
		if out != "" {
			// Keep every --out inside a temporary directory.
			if out != "-" {
				if strings.Contains(out, "..") || strings.HasPrefix(out, "/") {
					return
				}
				out = filepath.Join(t.TempDir(), out)
			}
			args = append(args, "--out", out)
		}
		var stdout, stderr bytes.Buffer
		a := &app{catalog: cat, engine: experiment.NewEngine(), stdout: &stdout, stderr: &stderr}
		j, err := a.prepare(context.Background(), cmd, args)
		if err == nil {
			j.target.Abort()
			return
		}
		if status := a.report(context.Background(), err); status != ExitUsage {
			t.Fatalf("%s %q: status %d, want 2; %q", cmd, args, status, stderr.String())
		}
		msg := err.Error()
		for _, r := range msg {
			if unicode.IsControl(r) {
				t.Fatalf("%s %q: the message holds %U: %q", cmd, args, r, msg)
			}
		}
		if s := stderr.String(); strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "\n") {
			t.Fatalf("%s %q: stderr is not one line: %q", cmd, args, s)
		}
		if repeated(msg) {
			t.Fatalf("%s %q: the message repeats itself: %q", cmd, args, msg)
		}
	})
}

// repeated reports whether a message says the same clause twice: a run of
// 20 or more characters that appears again after a separator ("(…)", ";").
// Quoted values are left out first: a path given by the user may hold the
// separators, and a message may name both a path and its directory.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

func repeated(msg string) bool {
	msg = quoted.ReplaceAllString(msg, `"…"`)
	parts := strings.FieldsFunc(msg, func(r rune) bool { return r == ';' || r == '(' || r == ')' || r == ':' })
	seen := map[string]bool{}
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if len(p) < 20 {
			continue
		}
		if seen[p] {
			return true
		}
		seen[p] = true
	}
	return false
}
