package tui

import (
	"fmt"
	"strconv"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fedscope/fedscope/experiment"
)

// Lesson is a lesson resolved for the explorer: every step with the
// scenario and view it shows (the command line reads and checks them
// before the screen opens).
type Lesson struct {
	Name  string // how `fedscope lesson` names it: a built-in name or a file
	Title string
	Steps []LessonStep
}

// LessonStep is one step of a lesson.
type LessonStep struct {
	Title, Text string
	Scenario    experiment.Scenario
	View        View
	// Stop is the round where the playback holds (−1: the last round).
	Stop int
	// Continues is set when the step has no command of its own: it goes on
	// with the previous step's run instead of starting one.
	Continues bool
}

// View is the state of the explorer's view that a command line carries
// besides the scenario: everything y writes and --flags set.
type View struct {
	Theme  string  // dark, light or mono; "" for the terminal's
	Pace   float64 // rounds per second; 0 for the preset's
	Hidden []int   // racer numbers (1-based) hidden
	Y      string  // auto, full or tail; "" for auto
	Linear bool    // linear y axes
	Cursor int     // the round the cursor reads (the playback shows at least that far); 0 for none
	Paused bool
	// NoStory and NoTheory hide the story and the theory overlays.
	NoStory, NoTheory bool
}

// lessonRun is the lesson being taught and its step.
type lessonRun struct {
	lesson *Lesson
	step   int
}

func (l *lessonRun) current() LessonStep { return l.lesson.Steps[l.step] }

// last reports whether the lesson is at its last step.
func (l *lessonRun) last() bool { return l.step == len(l.lesson.Steps)-1 }

// lessonStatus is the status line's part of the lesson: "step 2/6 · The
// stall"; "" outside a lesson.
func (c *common) lessonStatus() string {
	if c.lesson == nil {
		return ""
	}
	return fmt.Sprintf("step %d/%d · %s", c.lesson.step+1, len(c.lesson.lesson.Steps), c.lesson.current().Title)
}

// explain shows the step's sentences as the side panel or the caption.
func (l *lessonRun) explain(out *layout) {
	s := l.current()
	out.panel = fmt.Sprintf("Step %d/%d · %s", l.step+1, len(l.lesson.Steps), s.Title)
	out.story = s.Text
	out.caption = s.Title + " — " + s.Text
	out.short = s.Text // the status line names the step
	out.capLines = 4
	out.keepCap = true
}

// lessonActions are the clicker's keys: PageDown plays the step to its stop,
// and at the stop goes to the next step; PageUp goes back a step, drawn at
// its stop.
func (m *Model) lessonActions() []action {
	if m.c.lesson == nil {
		return nil
	}
	return []action{
		{keys: []string{"pgdown"}, label: "PgDn", help: "play the step to its stop; at the stop, the next step (a presentation clicker's forward key)",
			hint: "next", group: "lesson", run: m.lessonForward},
		{keys: []string{"pgup"}, label: "PgUp", help: "the previous step, drawn at its stop (a clicker's back key)", group: "lesson", run: m.lessonBack},
	}
}

// lessonForward is PageDown.
func (m *Model) lessonForward() tea.Cmd {
	l := m.c.lesson
	if r := m.v.playback(); r != nil && !r.holding() && sameScenario(m.c, r.sc, l.current().Scenario) {
		return r.playTo(l.current().Stop)
	}
	if l.step+1 >= len(l.lesson.Steps) {
		m.c.notice = fmt.Sprintf("this is the last step of %s (PgUp goes back, q quits)", l.lesson.Name)
		return nil
	}
	return m.openStep(l.step+1, false)
}

// lessonBack is PageUp.
func (m *Model) lessonBack() tea.Cmd {
	l := m.c.lesson
	if l.step == 0 {
		m.c.notice = "this is the first step (PgDn plays it)"
		return nil
	}
	return m.openStep(l.step-1, true)
}

// openStep shows step k: its scenario (the run on screen goes on when it is
// the step's), its view, paused at the start of what the step adds — or,
// going back, drawn at its stop.
func (m *Model) openStep(k int, back bool) tea.Cmd {
	l := m.c.lesson
	l.step = k
	s := l.current()
	m.c.version++
	var cmds []tea.Cmd
	r := m.v.playback()
	switch {
	case r == nil || !sameScenario(m.c, r.sc, s.Scenario):
		m.c.paused = true
		m.applyView(s.View, true)
		cmds = append(cmds, m.open(s.Scenario))
		if r = m.v.playback(); r != nil {
			r.applyView(s.View)
		}
	case !s.Continues:
		m.applyView(s.View, false)
	}
	if r == nil {
		return tea.Batch(cmds...)
	}
	if back {
		return tea.Batch(append(cmds, r.jumpTo(s.Stop))...)
	}
	r.stopAt, r.paused = s.Stop, true
	if s.Stop < 0 {
		r.stopAt = r.sc.Rounds
	}
	r.version++
	return tea.Batch(cmds...)
}

// applyView sets the view state a command line carries; keepRun leaves the
// race on screen as it is (hidden racers, y range, cursor).
func (m *Model) applyView(v View, keepRun bool) {
	c := m.c
	if v.Theme != "" {
		for i, t := range themes {
			if t.name == v.Theme && c.theme != i {
				c.theme = i
				c.styles = newStyles(themes[i], c.profile)
			}
		}
	}
	if v.Pace != 0 {
		c.pace = v.Pace // a step without --pace keeps the pace the teacher chose
	}
	c.logY = !v.Linear
	c.story, c.theory = !v.NoStory, !v.NoTheory
	if r := m.v.playback(); r != nil && !keepRun {
		r.applyView(v)
	}
}

// applyView sets a race's part of a view state: hidden racers, y mode,
// cursor, pace.
func (r *race) applyView(v View) {
	r.hidden = map[string]bool{}
	for _, n := range v.Hidden {
		if n >= 1 && n <= len(r.specs) {
			r.hidden[r.specs[n-1].String()] = true
		}
	}
	r.ymode = yAuto
	for i, name := range yModeNames {
		if name == v.Y {
			r.ymode = yMode(i)
		}
	}
	switch {
	case v.Pace != 0:
		r.pace = v.Pace
	case r.c.pace != 0:
		r.pace = r.c.pace
	}
	if v.Cursor > 0 {
		r.seek = v.Cursor
	}
	r.version++
}

// viewFlags writes the view state of the screen as command-line flags
// (those that differ from a fresh start), for y.
func (m *Model) viewFlags() []string {
	c := m.c
	var args []string
	if c.theme != c.startTheme {
		args = append(args, "--theme", themes[c.theme].name)
	}
	if !c.logY {
		args = append(args, "--linear")
	}
	if !c.story {
		args = append(args, "--no-story")
	}
	if !c.theory {
		args = append(args, "--no-theory")
	}
	r := m.v.playback()
	if r == nil {
		return args
	}
	if c.pace != 0 {
		args = append(args, "--pace", paceName(c.pace))
	}
	var hidden []string
	for i, s := range r.specs {
		if r.hidden[s.String()] {
			hidden = append(hidden, strconv.Itoa(i+1))
		}
	}
	if len(hidden) > 0 {
		args = append(args, "--hide", joinComma(hidden))
	}
	if r.ymode != yAuto {
		args = append(args, "--y", yModeNames[r.ymode])
	}
	switch {
	case r.cursor > 0:
		args = append(args, "--cursor", strconv.Itoa(r.roundAt(r.cursor)))
	case r.paused && r.revealed > 1:
		args = append(args, "--cursor", strconv.Itoa(r.roundAt(r.revealed)))
	}
	if r.paused {
		args = append(args, "--paused")
	}
	return args
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}
