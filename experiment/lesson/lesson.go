// Package lesson reads fedscope's lesson files: a prepared sequence of
// steps a teacher walks through with a presentation clicker. A lesson is
// Markdown, kept small:
//
//	# The stationary-point paradox          ← optional header: the lesson's
//	A ten-minute walk through Fig. 1.          title and a line about it
//	---
//	## Gradient descent                     ← a step: its title,
//	FedAvg with one local step is gradient     1–4 sentences,
//	descent on the pooled data.
//	```fedscope                             ← optionally the command line the
//	--preset paradox --set algorithms=fedavg:s=1   step switches to,
//	```
//	stop: 60                                ← and the round where it holds
//	---
//	## The stall
//	…
//
// Steps are separated by lines of three dashes. A step without a command
// continues the previous step's run; the first step must have one. The stop
// is a round of the run, or "end" (the default). Reading checks the shape of
// the file; whether a command names a real preset and keys is the caller's
// check (Step.Line says where to point).
package lesson

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Lesson is a parsed lesson file.
type Lesson struct {
	Name        string // the file or built-in name it was read as
	Title       string // the header's title ("" when the file has none)
	Description string // the header's text
	Steps       []Step
}

// Step is one step of a lesson.
type Step struct {
	Title string
	Text  string   // its sentences, joined into one paragraph
	Args  []string // the command line after "fedscope", nil to continue
	Stop  int      // the round where the playback holds; End for the last
	// Line is the line of the step's title, ArgsLine of its command, and
	// StopLine of its stop (0 when absent): errors point there.
	Line, ArgsLine, StopLine int
}

// End is the stop of a step that plays its run to the last round.
const End = -1

// MaxSentences is the most sentences a step may have: a step is read aloud
// in the time one click takes.
const MaxSentences = 4

// Error is a problem of a lesson file: the file, the line (1-based; 0 when
// the file as a whole) and what is wrong, as one line.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("lesson %s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("lesson %s: %s", e.File, e.Msg)
}

// Parse reads a lesson from src, named name in its errors.
func Parse(name string, src []byte) (*Lesson, error) {
	p := parser{file: name, l: &Lesson{Name: name}}
	if !utf8.Valid(src) || bytes.IndexByte(src, 0) >= 0 {
		return nil, p.errorf(0, "not UTF-8 text")
	}
	lines := strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n")
	var chunk []line
	fenced, opened := false, 0
	for i, text := range lines {
		t := strings.TrimSpace(text)
		if strings.HasPrefix(t, "```") {
			fenced, opened = !fenced, i+1
		}
		if !fenced && isRule(t) {
			if err := p.chunk(chunk); err != nil {
				return nil, err
			}
			chunk = nil
			continue
		}
		chunk = append(chunk, line{i + 1, text})
	}
	if fenced {
		return nil, p.errorf(opened, "this ``` block is not closed")
	}
	if err := p.chunk(chunk); err != nil {
		return nil, err
	}
	if len(p.l.Steps) == 0 {
		return nil, p.errorf(0, "no step: a step is a heading (## Title), 1–%d sentences, and optionally a ```fedscope block and a stop: line, steps separated by ---", MaxSentences)
	}
	if p.l.Steps[0].Args == nil {
		return nil, p.errorf(p.l.Steps[0].Line, "the first step has no ```fedscope block: a lesson starts from a command line, e.g. --preset paradox")
	}
	return p.l, nil
}

// isRule reports whether a line separates steps: three or more dashes.
func isRule(t string) bool {
	return len(t) >= 3 && strings.Trim(t, "-") == ""
}

type line struct {
	n    int
	text string
}

type parser struct {
	file   string
	l      *Lesson
	chunks int
}

func (p *parser) errorf(line int, format string, args ...any) error {
	return &Error{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// chunk reads the lines between two rules: the header (a first chunk with a
// top-level title and no step heading) or a step; blank chunks are skipped.
func (p *parser) chunk(lines []line) error {
	first := -1
	for i, l := range lines {
		if strings.TrimSpace(l.text) != "" {
			first = i
			break
		}
	}
	p.chunks++
	if first < 0 {
		return nil
	}
	lines = lines[first:]
	head := strings.TrimSpace(lines[0].text)
	if p.chunks == 1 && strings.HasPrefix(head, "# ") && !hasStepHeading(lines[1:]) {
		p.l.Title = strings.TrimSpace(strings.TrimPrefix(head, "# "))
		p.l.Description = paragraph(lines[1:])
		return nil
	}
	return p.step(lines)
}

func hasStepHeading(lines []line) bool {
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l.text), "#") {
			return true
		}
	}
	return false
}

// step reads one step.
func (p *parser) step(lines []line) error {
	head := strings.TrimSpace(lines[0].text)
	title := strings.TrimSpace(strings.TrimLeft(head, "#"))
	if !strings.HasPrefix(head, "#") || title == "" {
		return p.errorf(lines[0].n, "a step starts with its title as a heading, e.g. \"## The stall\"; found %q", short(head))
	}
	s := Step{Title: title, Line: lines[0].n, Stop: End}
	var text []line
	for i := 1; i < len(lines); i++ {
		l := lines[i]
		t := strings.TrimSpace(l.text)
		switch {
		case strings.HasPrefix(t, "```"):
			end := i + 1
			for end < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[end].text), "```") {
				end++
			}
			if err := p.block(&s, l, lines[i+1:end]); err != nil {
				return err
			}
			i = end
		case strings.HasPrefix(strings.ToLower(t), "stop:"):
			if s.StopLine > 0 {
				return p.errorf(l.n, "a second stop: line (the first is on line %d); a step holds at one round", s.StopLine)
			}
			v := strings.TrimSpace(t[len("stop:"):])
			s.StopLine = l.n
			if strings.EqualFold(v, "end") {
				continue
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return p.errorf(l.n, "stop: %q: the stop is a round (a whole number ≥ 0) or \"end\"", v)
			}
			s.Stop = n
		case strings.HasPrefix(t, "#"):
			return p.errorf(l.n, "a second heading in one step; separate steps with a line of ---")
		default:
			text = append(text, l)
		}
	}
	s.Text = paragraph(text)
	n := sentences(s.Text)
	switch {
	case n == 0:
		return p.errorf(s.Line, "step %q has no sentence: say in 1–%d sentences what to look at", s.Title, MaxSentences)
	case n > MaxSentences:
		return p.errorf(s.Line, "step %q has %d sentences; at most %d fit a step (split it in two)", s.Title, n, MaxSentences)
	}
	p.l.Steps = append(p.l.Steps, s)
	return nil
}

// block reads a fenced block of a step: the one ```fedscope block.
func (p *parser) block(s *Step, open line, body []line) error {
	lang := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(open.text), "```"))
	if lang != "fedscope" {
		return p.errorf(open.n, "a step's block must be ```fedscope (a command line); found ```%s", lang)
	}
	if s.ArgsLine > 0 {
		return p.errorf(open.n, "a second ```fedscope block (the first is on line %d); a step switches to one command line", s.ArgsLine)
	}
	var words []string
	at := open.n + 1
	for i, l := range body {
		w, err := split(l.text)
		if err != nil {
			return p.errorf(l.n, "%v", err)
		}
		if len(w) > 0 && len(words) == 0 {
			at = body[i].n
		}
		words = append(words, w...)
	}
	if len(words) > 0 && words[0] == "fedscope" {
		words = words[1:]
	}
	s.Args, s.ArgsLine = words, at
	if s.Args == nil {
		s.Args = []string{}
	}
	return nil
}

// split cuts a command line into words as a POSIX shell would for plain
// words, single and double quotes (no variables, no escapes in single
// quotes).
func split(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote != 0 && r == quote:
			quote = 0
		case quote == '\'':
			cur.WriteRune(r)
		case r == '\\':
			escaped, in = true, true
		case quote == '"':
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case unicode.IsSpace(r):
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("a %c quote is not closed", quote)
	}
	if in {
		out = append(out, cur.String())
	}
	return out, nil
}

// paragraph joins the lines of a text into one paragraph.
func paragraph(lines []line) string {
	var words []string
	for _, l := range lines {
		words = append(words, strings.Fields(l.text)...)
	}
	return strings.Join(words, " ")
}

// abbreviations end in a dot without ending a sentence.
var abbreviations = []string{"e.g.", "i.e.", "Fig.", "Figs.", "Eq.", "Thm.", "cf.", "vs.", "al.", "approx."}

// sentences counts the sentences of a paragraph: words ending in . ! or ?
// (abbreviations aside), and a last sentence without one.
func sentences(text string) int {
	n := 0
	words := strings.Fields(text)
	for i, w := range words {
		w = strings.TrimRight(w, ")\"'”’*_")
		end := strings.HasSuffix(w, ".") || strings.HasSuffix(w, "!") || strings.HasSuffix(w, "?")
		for _, a := range abbreviations {
			if strings.EqualFold(w, a) {
				end = false
			}
		}
		if end || i == len(words)-1 {
			n++
		}
	}
	return n
}

func short(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}
