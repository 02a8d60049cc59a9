package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/experiment/registry"
)

// TestLessonList: --list names every built-in lesson with its title.
func TestLessonList(t *testing.T) {
	out, errs, code := command(t, "lesson", "--list")
	if code != ExitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	files := registry.Catalog().Lessons()
	if len(files) == 0 {
		t.Fatal("no built-in lesson")
	}
	for _, f := range files {
		if !strings.Contains(out, f.Name+" ") {
			t.Errorf("--list lacks %s:\n%s", f.Name, out)
		}
		// Every built-in lesson passes its own check.
		if out, errs, code := command(t, "lesson", "--check", f.Name); code != ExitOK || !strings.Contains(out, "steps") {
			t.Errorf("--check %s: exit %d, %q %q", f.Name, code, out, errs)
		}
	}
}

// TestBrokenLessonFiles: a broken lesson is refused before any screen opens,
// with one line naming the file, the line and the problem, exit status 2 —
// whether its shape is wrong or a step's command names a preset, key or
// value that does not exist, or a stop beyond the run.
func TestBrokenLessonFiles(t *testing.T) {
	dir := t.TempDir()
	step := func(cmd, stop string) string {
		return "# L\n---\n## A\nText.\n```fedscope\n" + cmd + "\n```\n" + stop + "\n"
	}
	for _, test := range []struct {
		name, src, says string
		line            int
	}{
		{"unknown preset", step("--preset nosuch", ""), `unknown preset "nosuch"`, 6},
		{"unknown key", step("--preset paradox --set nosuchkey=1", ""), `unknown key "nosuchkey"`, 6},
		{"bad value", step("--preset paradox --set eta=abc", ""), `eta="abc"`, 6},
		{"bad flag", step("--preset paradox --speed 3", ""), "unknown flag --speed", 6},
		{"bad view flag", step("--preset paradox --hide 9", ""), "--hide", 6},
		{"stop beyond the run", step("--preset paradox --rounds 20", "stop: 21"), "the run has 20 rounds", 8},
		{"bad stop", step("--preset paradox", "stop: later"), `stop: "later"`, 8},
		{"no step", "# Only a title\n", "no step", 0},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(test.name, " ", "_")+".md")
		if err := os.WriteFile(path, []byte(test.src), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"lesson", "--check", path}, {"lesson", path}} {
			out, errs, code := command(t, args...)
			want := "lesson " + path
			if test.line > 0 {
				want += ":" + strconv.Itoa(test.line)
			}
			if code != ExitUsage || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, want) || !strings.Contains(errs, test.says) {
				t.Errorf("%s, %v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q and %q", test.name, args[:2], code, out, errs, want, test.says)
			}
		}
	}
	for _, args := range [][]string{
		{"lesson", filepath.Join(dir, "missing.md")},
		{"lesson", dir},
		{"lesson", "nosuchlesson"},
		{"lesson"},
		{"lesson", "paradox", "--step", "99"},
		{"lesson", "paradox", "--step", "x"},
		{"lesson", "--list", "paradox"},
	} {
		out, errs, code := command(t, args...)
		if code != ExitUsage || out != "" || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line", args, code, out, errs)
		}
	}
}

// TestLessonNeedsATerminal: a good lesson into a pipe says how to run the
// step headless instead of drawing.
func TestLessonNeedsATerminal(t *testing.T) {
	_, errs, code := command(t, "lesson", "paradox", "--theme", "light")
	if code != ExitUsage || !strings.Contains(errs, "not a terminal") {
		t.Errorf("exit %d, %q", code, errs)
	}
}

// TestReadmeLessonExample: the README's complete example is the file
// docs/lessons/local-steps.md, byte for byte, and it passes --check.
func TestReadmeLessonExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	start := strings.Index(s, "````markdown\n")
	end := strings.Index(s[start+1:], "````\n")
	if start < 0 || end < 0 {
		t.Fatal("README has no ````markdown example")
	}
	example := s[start+len("````markdown\n") : start+1+end]
	file, err := os.ReadFile("../docs/lessons/local-steps.md")
	if err != nil || string(file) != example {
		t.Fatalf("docs/lessons/local-steps.md differs from the README's example (%v)", err)
	}
	if out, errs, code := command(t, "lesson", "--check", "../docs/lessons/local-steps.md"); code != ExitOK {
		t.Errorf("--check: exit %d, %q %q", code, out, errs)
	}
}
