package lesson

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

const good = "# Title\nAbout it.\n---\n## One\nFirst sentence. Second one!\n```fedscope\nfedscope --preset paradox --set 'algorithms=fedavg:s=1'\n```\nstop: 60\n---\n## Two\nGoes on, e.g. to the end.\n"

// TestParseReadsTheSteps checks a small lesson read back field by field.
func TestParseReadsTheSteps(t *testing.T) {
	l, err := Parse("x.md", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if l.Title != "Title" || l.Description != "About it." || len(l.Steps) != 2 {
		t.Fatalf("got %+v", l)
	}
	one, two := l.Steps[0], l.Steps[1]
	if one.Title != "One" || one.Text != "First sentence. Second one!" || one.Stop != 60 || one.Line != 4 || one.ArgsLine != 7 || one.StopLine != 9 {
		t.Errorf("step 1: %+v", one)
	}
	if want := []string{"--preset", "paradox", "--set", "algorithms=fedavg:s=1"}; !slices.Equal(one.Args, want) {
		t.Errorf("step 1 args %q, want %q", one.Args, want)
	}
	if two.Args != nil || two.Stop != End || two.Text != "Goes on, e.g. to the end." {
		t.Errorf("step 2: %+v", two)
	}
}

// TestBrokenLessons: every broken file gives one line naming the file and
// the line of the problem.
func TestBrokenLessons(t *testing.T) {
	for _, test := range []struct {
		name, src string
		line      int
		says      string
	}{
		{"empty", "", 0, "no step"},
		{"only a header", "# T\nabout\n", 0, "no step"},
		{"no command first", "## A\nText.\n", 1, "no ```fedscope block"},
		{"no heading", "---\nJust text.\n```fedscope\n--preset paradox\n```\n", 2, "starts with its title"},
		{"no sentence", "## A\n```fedscope\n--preset paradox\n```\n", 1, "no sentence"},
		{"too many sentences", "## A\nOne. Two. Three. Four. Five.\n```fedscope\n--preset paradox\n```\n", 1, "5 sentences"},
		{"bad stop", "## A\nText.\n```fedscope\n--preset paradox\n```\nstop: soon\n", 6, "stop: \"soon\""},
		{"negative stop", "## A\nText.\n```fedscope\n--preset paradox\n```\nstop: -3\n", 6, "whole number"},
		{"two stops", "## A\nText.\n```fedscope\n--preset paradox\n```\nstop: 3\nstop: 4\n", 7, "second stop"},
		{"two blocks", "## A\nText.\n```fedscope\n--preset paradox\n```\n```fedscope\n--preset mixture\n```\n", 6, "second ```fedscope"},
		{"other block", "## A\nText.\n```bash\nls\n```\n", 3, "must be ```fedscope"},
		{"open block", "## A\nText.\n```fedscope\n--preset paradox\n", 3, "not closed"},
		{"open quote", "## A\nText.\n```fedscope\n--set 'eta=0.1\n```\n", 4, "quote is not closed"},
		{"two headings", "## A\nText.\n```fedscope\n--preset paradox\n```\n## B\nMore.\n", 6, "second heading"},
		{"not text", "## A\x00\n", 0, "not UTF-8"},
	} {
		_, err := Parse("f.md", []byte(test.src))
		var le *Error
		if !errors.As(err, &le) {
			t.Errorf("%s: error %v, want a lesson error", test.name, err)
			continue
		}
		msg := err.Error()
		if le.Line != test.line || !strings.Contains(msg, test.says) || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "lesson f.md") {
			t.Errorf("%s: %q (line %d), want line %d saying %q", test.name, msg, le.Line, test.line, test.says)
		}
	}
}

// TestSentences counts sentences the way a teacher would.
func TestSentences(t *testing.T) {
	for text, want := range map[string]int{
		"":                            0,
		"One.":                        1,
		"No full stop":                1,
		"One. Two? Three!":            3,
		"See Fig. 1, e.g. the s=5.":   1,
		"η = 0.1 keeps it stable.":    1,
		"It stalls (at 0.0083). It …": 2,
	} {
		if got := sentences(text); got != want {
			t.Errorf("%q: %d sentences, want %d", text, got, want)
		}
	}
}

// FuzzParse: any input gives a lesson or a one-line error, never a panic;
// a lesson always has a first step with a command.
func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte("## A\nText.\n```fedscope\n--preset paradox\n```\nstop: 4\n---\n---\n## B\nMore.\n"))
	f.Add([]byte("```\n---\n```"))
	f.Fuzz(func(t *testing.T, src []byte) {
		l, err := Parse("fuzz.md", src)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("two-line error %q", err)
			}
			return
		}
		if len(l.Steps) == 0 || l.Steps[0].Args == nil {
			t.Fatalf("a lesson without a first command: %+v", l)
		}
		for _, s := range l.Steps {
			if s.Title == "" || sentences(s.Text) < 1 || sentences(s.Text) > MaxSentences {
				t.Fatalf("a step that should have been refused: %+v", s)
			}
		}
	})
}
