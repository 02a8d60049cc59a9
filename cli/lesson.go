package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/lesson"
	"github.com/fedscope/fedscope/tui"
)

// lessonCommand is `fedscope lesson NAME|FILE [--step K] [view flags]`,
// `fedscope lesson --list` and `fedscope lesson --check FILE`. A lesson is
// read and every step checked (preset, keys, values, stop) before the screen
// opens; a broken lesson is one line naming the file and the line, exit 2.
func (a *app) lessonCommand(ctx context.Context, args []string) int {
	fs := newFlagSet("lesson")
	list := fs.Bool("list", false, "list the built-in lessons")
	check := fs.Bool("check", false, "check a lesson file (every step's command and stop) without opening it")
	step := fs.String("step", "1", "open at step K (1-based), paused at its start")
	var vf viewFlags
	vf.register(fs)
	names, err := parseInterleaved(fs, args)
	if err != nil {
		return a.report(ctx, err)
	}
	if *list {
		if len(names) > 0 {
			return a.report(ctx, experiment.Errorf("lesson --list takes no lesson name (got %q)", names[0]))
		}
		return a.report(ctx, a.listLessons())
	}
	if len(names) != 1 {
		return a.report(ctx, experiment.Errorf("lesson: name one lesson, a built-in name or a file (fedscope lesson --list shows the built-in ones); got %d", len(names)))
	}
	l, err := a.loadLesson(names[0])
	if err != nil {
		return a.report(ctx, err)
	}
	if *check {
		fmt.Fprintf(a.stdout, "lesson %s: %d steps, every command and stop checked\n", l.Name, len(l.Steps))
		return ExitOK
	}
	k, err := experiment.ParseWhole(strings.TrimSpace(*step), 1, len(l.Steps))
	if err != nil {
		return a.report(ctx, experiment.Errorf("--step %q: allowed: a step in 1..%d", *step, len(l.Steps)))
	}
	// View flags given on the command line apply to every step (a teacher's
	// --theme light for the projector).
	view, err := vf.view(l.Steps[k-1].Scenario)
	if err != nil {
		return a.report(ctx, err)
	}
	if code, ok := a.needTerminal(l.Steps[k-1].Scenario); !ok {
		return code
	}
	var exitLine string
	opts := []tui.Option{tui.WithVersion(a.version), tui.WithExitLine(func(line string) { exitLine = line }), tui.WithLesson(l, k)}
	if flagsGiven(fs, "pace", "theme", "hide", "y", "linear", "cursor", "no-story", "no-theory") {
		opts = append(opts, tui.WithView(view))
	}
	return a.openExplorer(ctx, l.Steps[k-1].Scenario, opts, &exitLine)
}

// parseInterleaved parses flags that may come before or after the
// positional arguments, which it returns.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseWithArgs(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// flagsGiven reports whether any of the named flags was set.
func flagsGiven(fs *flag.FlagSet, names ...string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || slices.Contains(names, f.Name) })
	return found
}

// listLessons is `fedscope lesson --list`.
func (a *app) listLessons() error {
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	for _, f := range a.catalog.Lessons() {
		l, err := lesson.Parse(f.Name, f.Source)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s (%d steps)\n", f.Name, l.Title, len(l.Steps))
	}
	return tw.Flush()
}

// loadLesson reads a built-in lesson by name, or a lesson file, and resolves
// every step; problems are *InputErrors naming the file and the line.
func (a *app) loadLesson(name string) (*tui.Lesson, error) {
	var src []byte
	for _, f := range a.catalog.Lessons() {
		if f.Name == name {
			src = f.Source
		}
	}
	if src == nil {
		b, err := readLessonFile(name)
		switch {
		case errors.Is(err, os.ErrNotExist) && !strings.ContainsAny(name, "/.\\"):
			var names []string
			for _, f := range a.catalog.Lessons() {
				names = append(names, f.Name)
			}
			return nil, experiment.Errorf("lesson %q: no built-in lesson of that name%s and no such file; built-in: %s",
				name, experiment.DidYouMean(name, names), strings.Join(names, ", "))
		case err != nil:
			return nil, experiment.Errorf("lesson %s: cannot read the file: %v", name, unwrapPath(err))
		}
		src = b
	}
	l, err := lesson.Parse(name, src)
	if err != nil {
		return nil, &experiment.InputError{Msg: err.Error()}
	}
	return a.resolveLesson(l)
}

// maxLessonBytes bounds a lesson file: a lesson is a page of text.
const maxLessonBytes = 1 << 20

// readLessonFile reads a regular file of at most maxLessonBytes (a FIFO or
// a device would block or never end).
func readLessonFile(name string) ([]byte, error) {
	info, err := os.Stat(name)
	switch {
	case err != nil:
		return nil, err
	case info.IsDir():
		return nil, errors.New("it is a directory")
	case !info.Mode().IsRegular():
		return nil, errors.New("not a regular file")
	case info.Size() > maxLessonBytes:
		return nil, fmt.Errorf("%d bytes; a lesson file has at most %d", info.Size(), maxLessonBytes)
	}
	return os.ReadFile(name)
}

// unwrapPath drops the path os.ReadFile repeats in its error.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// resolveLesson checks every step's command line as the explorer reads its
// own, and its stop against the run's rounds.
func (a *app) resolveLesson(l *lesson.Lesson) (*tui.Lesson, error) {
	out := &tui.Lesson{Name: l.Name, Title: l.Title}
	var prev tui.LessonStep
	for i, s := range l.Steps {
		step := tui.LessonStep{Title: s.Title, Text: s.Text, Stop: s.Stop, Scenario: prev.Scenario, View: prev.View, Continues: s.Args == nil}
		if s.Args != nil {
			sc, view, err := a.stepScenario(s.Args)
			if err != nil {
				return nil, &experiment.InputError{Msg: (&lesson.Error{File: l.Name, Line: s.ArgsLine, Msg: err.Error()}).Error()}
			}
			step.Scenario, step.View = sc, view
		}
		if i == 0 && s.Args == nil {
			return nil, &experiment.InputError{Msg: (&lesson.Error{File: l.Name, Line: s.Line, Msg: "the first step has no ```fedscope block"}).Error()}
		}
		if s.Stop != lesson.End && !step.Scenario.IsSweep() && s.Stop > step.Scenario.Rounds {
			return nil, &experiment.InputError{Msg: (&lesson.Error{File: l.Name, Line: s.StopLine,
				Msg: fmt.Sprintf("stop: %d: the run has %d rounds; allowed: a round in 0..%d, or end", s.Stop, step.Scenario.Rounds, step.Scenario.Rounds)}).Error()}
		}
		out.Steps = append(out.Steps, step)
		prev = step
	}
	return out, nil
}

// stepScenario reads a step's command line: the explorer's scenario and
// view flags.
func (a *app) stepScenario(args []string) (experiment.Scenario, tui.View, error) {
	fs := newFlagSet("fedscope")
	var sf scenarioFlags
	sf.register(fs)
	var vf viewFlags
	vf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		var h helpRequest
		if errors.As(err, &h) {
			return experiment.Scenario{}, tui.View{}, experiment.Errorf("--help has no place in a lesson step")
		}
		return experiment.Scenario{}, tui.View{}, err
	}
	sc, err := sf.scenario(a.catalog)
	if err != nil {
		return sc, tui.View{}, err
	}
	view, err := vf.view(sc)
	return sc, view, err
}
