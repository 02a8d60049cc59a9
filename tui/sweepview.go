package tui

import (
	"context"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/tui/chart"
)

// SweepRunner runs a sweep scenario, calling emit once per finished (grid
// value, trial) evaluation. The real one is experiment.RunSweep; tests
// inject fakes.
type SweepRunner func(ctx context.Context, sc experiment.Scenario, emit func(experiment.TrialResult)) error

// Messages of a sweep, tagged with the id of the sweep that sent them.
type (
	trialMsg struct {
		runID  int
		result experiment.TrialResult
	}
	// trialsMsg is a batch of trials drained at once; tail is the non-trial
	// message that ended the batch, if any.
	trialsMsg struct {
		runID   int
		results []experiment.TrialResult
		tail    tea.Msg
	}
	sweepDoneMsg struct {
		runID int
		err   error
	}
)

// stateStopped is a sweep stopped by the user.
const stateStopped runState = stateFailed + 1

// sweepView is the sweep screen: one chart per metric with x the swept knob
// and y the trial mean, one series per racer, a dashed reference line where
// the metric has one (FG = 1), and a progress bar. Curves refine as trials
// arrive: sweeps need no pacing.
type sweepView struct {
	c  *common
	sc experiment.Scenario
	stream
	state      runState
	paused     bool
	table      *experiment.SweepTable
	fatal      string
	bar        progress.Model
	started    time.Time
	elapsed    time.Duration
	frameDue   bool // a redraw tick is pending
	cursor     int  // the grid value the legend reads (1-based; 0: none)
	version    int
	axisX      bool // label the x axis with the sweep's measured axis metric
	w, h       int
	frame      frameCache
	labelLooks []look
	hidden     map[int]bool // curves hidden (1–9)
	chart      int          // the chart shown when only one fits (tab)
}

func newSweepView(c *common, sc experiment.Scenario) *sweepView {
	bar := progress.New(progress.WithoutPercentage())
	if c.styles.color {
		bar = progress.New(progress.WithoutPercentage(), progress.WithDefaultGradient())
	}
	v := &sweepView{c: c, sc: sc, bar: bar, w: c.width, h: c.height, hidden: map[int]bool{}}
	v.table, _ = experiment.NewSweepTable(sc) // its columns, for the help before the sweep starts
	return v
}

func (v *sweepView) scenario() experiment.Scenario { return v.sc }
func (v *sweepView) playback() *race               { return nil }
func (v *sweepView) setSize(w, h int)              { v.w, v.h = w, h }

// start cancels the running sweep and starts its scenario afresh.
func (v *sweepView) start() tea.Cmd {
	ctx := v.begin(v.c.ctx, &v.c.ids)
	v.table, _ = experiment.NewSweepTable(v.sc) // validated before the view opened
	v.fatal, v.state, v.paused = "", stateRunning, false
	v.started, v.elapsed = v.c.now(), 0
	v.labelLooks = nil
	for i := range v.table.Labels {
		v.labelLooks = append(v.labelLooks, look{glyph: glyphs[i%len(glyphs)], color: i})
	}
	v.ch = startSweepStream(ctx, v.runID, v.c.sweeper, v.sc)
	v.version++
	v.frameDue = false // a frame of the old run still pending is dropped by its id
	if v.cursor > len(v.table.Grid) {
		v.cursor = 0
	}
	return v.read()
}

func (v *sweepView) read() tea.Cmd { return v.rearm(waitForTrials, v.paused) }

// restart switches to a changed sweep scenario and starts it.
func (v *sweepView) restart(sc experiment.Scenario) tea.Cmd {
	if err := sc.Validate(); err != nil {
		v.c.notice = err.Error()
		return nil
	}
	v.sc = sc
	return v.start()
}

func (v *sweepView) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case trialsMsg:
		if msg.runID != v.runID {
			return nil
		}
		v.arrived()
		for _, r := range msg.results {
			v.table.Add(r)
		}
		v.elapsed = v.c.now().Sub(v.started)
		cmds := []tea.Cmd{v.schedule()}
		if msg.tail != nil {
			cmds = append(cmds, v.update(msg.tail))
		} else {
			cmds = append(cmds, v.read())
		}
		return tea.Batch(cmds...)
	case sweepDoneMsg:
		if msg.runID != v.runID {
			return nil
		}
		v.ended()
		v.elapsed = v.c.now().Sub(v.started)
		v.state = stateDone
		if msg.err != nil {
			v.state, v.fatal = stateFailed, msg.err.Error()
		}
		v.version++
	case sweepFrameMsg:
		if msg.id == v.runID {
			v.frameDue = false
			v.version++
		}
	}
	return nil
}

// sweepFrameMsg redraws a sweep at most once per frame however fast its
// trials arrive.
type sweepFrameMsg struct{ id int }

func (v *sweepView) schedule() tea.Cmd {
	if v.frameDue {
		return nil
	}
	v.frameDue = true
	id := v.runID
	return v.c.tick(frameInterval, func(time.Time) tea.Msg { return sweepFrameMsg{id} })
}

func (v *sweepView) help() (string, []action) {
	acts := v.sweepActions()
	acts = append(acts,
		action{keys: []string{"l"}, help: "log / linear y axis", group: "view", run: func() tea.Cmd { v.c.logY = !v.c.logY; v.c.version++; return nil }})
	if v.sc.Sweep.Axis != "" {
		acts = append(acts, action{keys: []string{"x"}, help: "x axis labels: the knob / what was measured (" + axisName(v.sc.Sweep.Axis) + ")",
			hint: "x labels", group: "view", run: func() tea.Cmd { v.axisX = !v.axisX; v.version++; return nil }})
	}
	acts = append(acts, toggleActions(v.c, len(v.table.Labels), "curve", "curves", func(i int) { v.hidden[i] = !v.hidden[i]; v.version++ })...)
	if n := len(v.charted()); n > 1 {
		acts = append(acts, tabAction(v.c, func() bool { return v.stacked(v.bodyRows()) }, func() { v.chart = (v.chart + 1) % n; v.version++ }))
	}
	acts = append(acts, liveActions(v.c, v.sc, v.sc.Sweep.Knob, v.restart)...)
	hasTheory := false
	for _, m := range v.table.Metrics {
		hasTheory = hasTheory || len(m.Theory) > 0
	}
	acts = append(acts, explainActions(v.c, v.sc, hasTheory)...)
	return v.intro(), acts
}

// sweepActions are the keys of the sweep itself: pause, stop, restart, the
// grid cursor, a new seed, export.
func (v *sweepView) sweepActions() []action {
	return []action{
		{keys: []string{" "}, help: "pause / resume the sweep", hint: "pause", group: "sweep", run: v.togglePause},
		{keys: []string{"S"}, help: "stop, keeping the trials done", hint: "stop", group: "sweep", run: v.stop},
		{keys: []string{"r"}, help: "restart", hint: "restart", group: "sweep", run: v.start},
		{keys: []string{"left"}, label: "← →", help: "cursor on the previous / next value: the legend reads the means there", hint: "cursor", group: "sweep",
			run: func() tea.Cmd { return v.moveCursor("left") }},
		{keys: []string{"right"}, group: "sweep", run: func() tea.Cmd { return v.moveCursor("right") }},
		{keys: []string{"home"}, label: "home end", help: "cursor on the first / last value", group: "sweep",
			run: func() tea.Cmd { return v.moveCursor("home") }},
		{keys: []string{"end"}, group: "sweep", run: func() tea.Cmd { return v.moveCursor("end") }},
		{keys: []string{"n"}, help: "new seed", group: "sweep", run: func() tea.Cmd {
			sc := v.sc
			sc.Seed++
			return v.restart(sc)
		}},
		{keys: []string{"e"}, help: "export the rows so far as CSV", group: "sweep", run: v.export},
	}
}

// stop ends the sweep, keeping the trials done.
func (v *sweepView) stop() tea.Cmd {
	if v.state == stateRunning {
		v.close()
		v.ch, v.waiting, v.state = nil, false, stateStopped
		v.elapsed = v.c.now().Sub(v.started)
		v.version++
	}
	return nil
}

// intro is the sweep's help text: the family's, then the marks and theory
// curves in full.
func (v *sweepView) intro() string {
	intro := v.sc.Family.Help(v.sc) + " Sweeps average many trials per value of the swept knob; curves refine as trials arrive. Every change restarts the sweep at once."
	for _, m := range v.table.Metrics {
		for _, mk := range m.Marks {
			intro += " " + string(chart.MarkGlyph) + " at " + strconv.FormatFloat(mk.At, 'g', 4, 64) + ": " + mk.Note + "."
		}
		for _, th := range m.Theory {
			intro += " " + string(theoryGlyph) + " " + th.Label + "."
		}
	}
	return intro
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

func (v *sweepView) togglePause() tea.Cmd {
	v.paused = !v.paused
	v.version++
	if !v.paused && v.state == stateRunning {
		v.started = v.c.now().Add(-v.elapsed)
		return v.read()
	}
	return nil
}

func (v *sweepView) export() tea.Cmd {
	t := v.table.Snapshot()
	partial := v.state != stateDone
	return exportWith(v.c, v.sc, t.Rows(), partial, t.Done(), nil, func(w io.Writer) error { return t.Write(w, experiment.CSV) })
}

func (v *sweepView) view() string {
	key := [5]int{v.version, v.c.version, v.w, v.h, v.cursor}
	return v.frame.get(key, v.draw)
}

// draw lays out the sweep view.
func (v *sweepView) draw() string {
	st := v.c.styles
	_, acts := v.help()
	l := layout{title: st.title.Render("fedscope · "+v.sc.Preset) + "  " + st.summary.Render(v.sc.Summary()),
		body: v.charts, minBody: v.minBody(), messages: v.messages(), status: v.statusText(), acts: acts, globals: v.c.globals,
		legend: func(w int) []string { return append(v.legend(w, false), v.progressLine(w)) },
		tight:  v.tightLegend}
	v.c.explain(&l, v.sc)
	return l.render(st, v.w, v.h)
}

// moveCursor moves the grid cursor (0: none) by delta, or to the first or
// last value.
func (v *sweepView) moveCursor(to string) tea.Cmd {
	n := len(v.table.Grid)
	switch {
	case to == "home":
		v.cursor = 1
	case to == "end":
		v.cursor = n
	case v.cursor == 0:
		v.cursor = n
	case to == "left":
		v.cursor = max(v.cursor-1, 1)
	case to == "right":
		v.cursor = min(v.cursor+1, n)
	}
	v.version++
	return nil
}

// startSweepStream runs the sweep runner in a producer goroutine (see
// produce).
func startSweepStream(ctx context.Context, runID int, run SweepRunner, sc experiment.Scenario) <-chan tea.Msg {
	return produce(ctx, func(send func(tea.Msg)) tea.Msg {
		err := run(ctx, sc, func(r experiment.TrialResult) { send(trialMsg{runID, r}) })
		return sweepDoneMsg{runID, err}
	})
}

// waitForTrials reads the next message of a sweep, draining every trial that
// is already waiting into one batch.
func waitForTrials(ch <-chan tea.Msg) tea.Cmd {
	return func() tea.Msg {
		return nextBatch(ch,
			func(msg tea.Msg) (int, experiment.TrialResult, bool) {
				t, ok := msg.(trialMsg)
				return t.runID, t.result, ok
			},
			func(runID int, results []experiment.TrialResult, tail tea.Msg) tea.Msg {
				return trialsMsg{runID: runID, results: results, tail: tail}
			})
	}
}

// tightLegend is the legend of a short screen: curves two to a line where
// they fit, and the progress bar only while trials remain (the status line
// says done).
func (v *sweepView) tightLegend(w int) []string {
	lines := v.legend(w, true)
	if v.state != stateDone {
		lines = append(lines, v.progressLine(w))
	}
	return lines
}
