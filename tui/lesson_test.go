package tui

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/lesson"
	"github.com/fedscope/fedscope/internal/slowtest"
)

// resolveLesson reads a built-in lesson the way `fedscope lesson` does:
// every step's command line into its scenario and view (the flags the
// built-in lessons use).
func resolveLesson(t *testing.T, f experiment.LessonFile) *Lesson {
	t.Helper()
	l, err := lesson.Parse(f.Name, f.Source)
	if err != nil {
		t.Fatal(err)
	}
	out := &Lesson{Name: f.Name, Title: l.Title}
	var prev LessonStep
	for _, s := range l.Steps {
		step := LessonStep{Title: s.Title, Text: s.Text, Stop: s.Stop, Scenario: prev.Scenario, View: prev.View, Continues: s.Args == nil}
		if s.Args != nil {
			step.Scenario, step.View = stepOf(t, s.Args)
		}
		out.Steps = append(out.Steps, step)
		prev = step
	}
	return out
}

// stepOf reads a step's command line.
func stepOf(t *testing.T, args []string) (experiment.Scenario, View) {
	t.Helper()
	var cmd []string
	var v View
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "--paused":
			v.Paused = true
		case "--linear":
			v.Linear = true
		case "--no-story":
			v.NoStory = true
		case "--no-theory":
			v.NoTheory = true
		case "--cursor", "--hide", "--y", "--theme", "--pace":
			i++
			switch a {
			case "--cursor":
				v.Cursor, _ = strconv.Atoi(args[i])
			case "--hide":
				for _, n := range strings.Split(args[i], ",") {
					k, _ := strconv.Atoi(n)
					v.Hidden = append(v.Hidden, k)
				}
			case "--y":
				v.Y = args[i]
			case "--theme":
				v.Theme = args[i]
			case "--pace":
				v.Pace, _ = strconv.ParseFloat(args[i], 64)
			}
		default:
			cmd = append(cmd, a)
		}
	}
	return parseCommand(t, "fedscope "+experiment.Quote(cmd)), v
}

// TestBuiltinLessonsPlayThrough drives every built-in lesson through Update
// from step 1 to the end and back, as a teacher with a clicker would: each
// step opens paused (never blank), PageDown plays it to its stop and holds
// there, PageDown at the stop opens the next step, PageDown at the last stop
// says so, and PageUp goes back a step, drawn at its stop. The status line
// names the step all along.
func TestBuiltinLessonsPlayThrough(t *testing.T) {
	slowtest.Skip(t)
	files := catalog.Lessons()
	if len(files) == 0 {
		t.Fatal("no built-in lesson")
	}
	for _, f := range files {
		t.Run(f.Name, func(t *testing.T) {
			l := resolveLesson(t, f)
			h := newHarness(t, l.Steps[0].Scenario, WithLesson(l, 1), WithSweepRunner(fakeSweep), WithPace(50)).start()
			h.size(100, 30)
			K := len(l.Steps)
			atStep := func(k int) {
				t.Helper()
				screen := h.screen()
				want := "step " + strconv.Itoa(k) + "/" + strconv.Itoa(K) + " · " + l.Steps[k-1].Title
				if !strings.Contains(screen, want) {
					t.Fatalf("status lacks %q:\n%s", want, screen)
				}
				if !strings.Contains(strings.Join(strings.Fields(screen), " "), firstWords(l.Steps[k-1].Text, 4)) {
					t.Errorf("step %d's text is not on screen:\n%s", k, screen)
				}
			}
			settle := func() {
				for i := 0; i < 400; i++ {
					h.tick(100 * frameInterval)
					if r := h.m.v.playback(); r == nil || (r.holding() && r.paused) {
						return
					}
				}
				t.Fatalf("the playback never held at the step's stop:\n%s", h.screen())
			}
			h.tick(frameInterval)
			for k := 1; k <= K; k++ {
				atStep(k)
				r := h.m.v.playback()
				if r != nil {
					if !r.paused {
						t.Fatalf("step %d opened playing", k)
					}
					if k == 1 && r.revealed > 1 {
						t.Fatalf("step 1 opened at row %d, want round 0", r.revealed)
					}
					// A step that goes on from where the last one held may
					// already stand at its stop: PageDown then moves on.
					if !r.holding() {
						h.key("pgdown")
						settle()
					}
					stop, _ := r.stopPos()
					next := "PgDn: next step"
					if k == K {
						next = "the lesson's end"
					}
					if r.revealed != stop || !strings.Contains(h.screen(), next) {
						t.Fatalf("step %d held at row %d, want %d:\n%s", k, r.revealed, stop, h.screen())
					}
				}
				h.key("pgdown")
				h.tick(frameInterval)
			}
			if !strings.Contains(h.screen(), "last step") {
				t.Errorf("PgDn at the last stop does not say it is the last step:\n%s", h.screen())
			}
			for k := K - 1; k >= 1; k-- {
				h.key("pgup")
				settle()
				atStep(k)
				if r := h.m.v.playback(); r != nil {
					if stop, _ := r.stopPos(); r.revealed != stop {
						t.Errorf("back at step %d: row %d shown, want its stop %d", k, r.revealed, stop)
					}
				}
			}
			h.key("pgup")
			if !strings.Contains(h.screen(), "first step") {
				t.Errorf("PgUp at step 1 does not say it is the first step:\n%s", h.screen())
			}
		})
	}
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}

// TestYCarriesTheWholeView: after hiding a racer, changing the theme, the y
// range, the scale, the pace and the cursor, and pausing, y writes a command
// line whose flags, read back, give the same view; in a lesson it names the
// lesson and the step. On screen it wraps between arguments only.
func TestYCarriesTheWholeView(t *testing.T) {
	slowtest.Skip(t)
	h := newHarness(t, small(t, "eta=0.05"), WithPace(10)).start()
	h.tick(3 * time.Second)
	for _, k := range []string{"2", "T", "z", "l", ">", "left", "left", " "} {
		h.key(k)
	}
	h.key("y")
	line := strings.ReplaceAll(h.m.c.notice, "\u00a0", " ")
	for _, want := range []string{"--hide 2", "--theme dark", "--y full", "--linear", "--pace 20", "--cursor ", "--paused", "--set eta=0.05"} {
		if !strings.Contains(line, want) {
			t.Errorf("y wrote %q, which lacks %q", line, want)
		}
	}
	r := h.race()
	fields := strings.Fields(strings.TrimPrefix(line, "fedscope "))
	sc, view := stepOf(t, fields)
	h2 := newHarness(t, sc, WithView(view)).start()
	h2.tick(frameInterval)
	r2 := h2.race()
	if r2.visible(1) || h2.m.c.theme != h.m.c.theme || r2.ymode != r.ymode || h2.m.c.logY != h.m.c.logY ||
		r2.pace != r.pace || !r2.paused || r2.roundAt(r2.cursorRound()) != r.roundAt(r.cursorRound()) {
		t.Errorf("%q reads back as another view: hidden %v, theme %d/%d, y %v/%v, log %v/%v, pace %v/%v, paused %v, cursor round %d/%d",
			line, !r2.visible(1), h2.m.c.theme, h.m.c.theme, r2.ymode, r.ymode, h2.m.c.logY, h.m.c.logY, r2.pace, r.pace, r2.paused,
			r2.roundAt(r2.cursorRound()), r.roundAt(r.cursorRound()))
	}
	// Wrapped at 50 columns, every line break falls between two arguments.
	for _, l := range wrapLines([]string{unbreakable("fedscope --preset paradox --set 'data=/a path/with spaces/file.csv' --set eta=0.05")}, 50, 10) {
		if strings.Count(l, "'")%2 != 0 {
			t.Errorf("a line break inside a quoted argument: %q", l)
		}
	}
	// In a lesson, y names the lesson and the step.
	l := resolveLesson(t, catalog.Lessons()[0])
	h3 := newHarness(t, l.Steps[0].Scenario, WithLesson(l, 2)).start()
	h3.key("y")
	if got := h3.m.c.notice; !strings.HasPrefix(got, "fedscope lesson "+l.Name+" --step 2") {
		t.Errorf("in a lesson, y wrote %q", got)
	}
}

// TestLessonKeepsEveryChartAtTalkSize: at 80×24 and 100×30, every step of
// every built-in lesson shows its sentences and all of its charts at once,
// at round 0 and at the step's stop (when the warnings of the run have
// come) — a class cannot press tab to find the second chart. The cluster
// view is the exception at 80×24: its grid and charts take turns there.
func TestLessonKeepsEveryChartAtTalkSize(t *testing.T) {
	slowtest.Skip(t)
	for _, f := range catalog.Lessons() {
		l := resolveLesson(t, f)
		for _, size := range [][2]int{{80, 24}, {100, 30}} {
			for k := range l.Steps {
				h := newHarness(t, l.Steps[k].Scenario, WithLesson(l, k+1), WithSweepRunner(fakeSweep), WithPace(50)).start()
				h.size(size[0], size[1])
				h.tick(frameInterval)
				check := func(when string) {
					t.Helper()
					screen := h.screen()
					_, cluster := h.m.v.(*clusterView)
					if strings.Contains(screen, "next chart (") && !(cluster && size[0] < 100) {
						t.Errorf("%s step %d at %dx%d, %s: one chart at a time:\n%s", f.Name, k+1, size[0], size[1], when, screen)
					}
					if v, ok := h.m.v.(*runView); ok {
						chartsReadable(t, fmt.Sprintf("%s step %d at %dx%d, %s", f.Name, k+1, size[0], size[1], when), v, screen)
					}
					if !strings.Contains(strings.Join(strings.Fields(screen), " "), firstWords(l.Steps[k].Text, 4)) {
						t.Errorf("%s step %d at %dx%d, %s: the step's text is not on screen:\n%s", f.Name, k+1, size[0], size[1], when, screen)
					}
				}
				check("at its start")
				if r := h.m.v.playback(); r != nil && !r.holding() {
					h.key("pgdown")
					for i := 0; i < 400 && !(r.holding() && r.paused); i++ {
						h.tick(100 * frameInterval)
					}
					check("at its stop")
				}
			}
		}
	}
}
