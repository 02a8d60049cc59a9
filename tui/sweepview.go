package tui

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/fedscope/fedscope/experiment"
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
}

func newSweepView(c *common, sc experiment.Scenario) *sweepView {
	bar := progress.New(progress.WithoutPercentage())
	if c.styles.color {
		bar = progress.New(progress.WithoutPercentage(), progress.WithDefaultGradient())
	}
	v := &sweepView{c: c, sc: sc, bar: bar, w: c.width, h: c.height}
	v.table, _ = experiment.NewSweepTable(sc) // its columns, for the help before the sweep starts
	return v
}

func (v *sweepView) scenario() experiment.Scenario { return v.sc }
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
	acts := []action{
		{keys: []string{" "}, help: "pause / resume the sweep", hint: "pause", group: "sweep", run: v.togglePause},
		{keys: []string{"S"}, help: "stop, keeping the trials done", hint: "stop", group: "sweep", run: func() tea.Cmd {
			if v.state == stateRunning {
				v.close()
				v.ch, v.waiting, v.state = nil, false, stateStopped
				v.elapsed = v.c.now().Sub(v.started)
				v.version++
			}
			return nil
		}},
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
		{keys: []string{"l"}, help: "log / linear y axis", group: "view", run: func() tea.Cmd { v.c.logY = !v.c.logY; v.c.version++; return nil }},
	}
	if v.sc.Sweep.Axis != "" {
		acts = append(acts, action{keys: []string{"x"}, help: "x axis labels: the knob / what was measured (" + axisName(v.sc.Sweep.Axis) + ")",
			hint: "x labels", group: "view", run: func() tea.Cmd { v.axisX = !v.axisX; v.version++; return nil }})
	}
	for _, k := range v.sc.Knobs() {
		if k.Live == nil || k.Name == v.sc.Sweep.Knob {
			continue
		}
		live := *k.Live
		step := func(up bool) func() tea.Cmd {
			return func() tea.Cmd {
				sc, err := live.Step(v.sc, up)
				if err != nil {
					v.c.notice = err.Error()
					return nil
				}
				return v.restart(sc)
			}
		}
		label := live.Down[0] + " " + live.Up[0]
		if slicesEqual(live.Down, live.Up) {
			label = live.Down[0]
			acts = append(acts, action{keys: live.Down, label: label, help: live.Desc, hint: live.Name, group: "parameters", run: step(true)})
			continue
		}
		acts = append(acts,
			action{keys: live.Down, label: label, help: live.Desc + " down / up", group: "parameters", run: step(false)},
			action{keys: live.Up, group: "parameters", run: step(true)})
	}
	hasTheory := false
	for _, m := range v.table.Metrics {
		hasTheory = hasTheory || len(m.Theory) > 0
	}
	acts = append(acts, explainActions(v.c, v.sc, hasTheory)...)
	intro := v.sc.Family.Help(v.sc) + " Sweeps average many trials per value of the swept knob; curves refine as trials arrive. Every change restarts the sweep at once."
	for _, m := range v.table.Metrics {
		for _, mk := range m.Marks {
			intro += " " + string(markGlyph) + " at " + strconv.FormatFloat(mk.At, 'g', 4, 64) + ": " + mk.Note + "."
		}
	}
	return intro, acts
}

// gridPosition returns the chart position (1-based, fractional) of a value
// of the swept knob: the grid is drawn evenly by index, so a value between
// two grid points sits between their positions (log-interpolated on a
// log-spaced grid).
func gridPosition(grid []float64, x float64) float64 {
	for i := 0; i+1 < len(grid); i++ {
		a, b := grid[i], grid[i+1]
		if x >= a && x <= b {
			f := (x - a) / (b - a)
			if a > 0 && b > a*1.5 {
				f = math.Log(x/a) / math.Log(b/a)
			}
			return float64(i+1) + f
		}
	}
	return -1
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
	return exportWith(v.c, v.sc, t.Rows(), partial, t.Done(), func(w io.Writer) error { return t.Write(w, experiment.CSV) })
}

func (v *sweepView) view() string {
	key := [5]int{v.version, v.c.version, v.w, v.h, v.cursor}
	return v.frame.get(key, v.draw)
}

// draw lays out the sweep view.
func (v *sweepView) draw() string {
	st := v.c.styles
	w, h := v.w, v.h
	title := ansi.Truncate(st.title.Render("fedscope · "+v.sc.Preset)+"  "+st.summary.Render(v.sc.Summary()), w, "…")
	_, acts := v.help()
	messages := v.messages(w, acts)
	legend := v.legend(w)
	body := h - 3 - len(messages) - len(legend) // title, progress, status
	lines := []string{title, withStory(v.c, v.sc, w, body, v.charts)}
	lines = append(lines, legend...)
	lines = append(lines, v.progressLine(w), v.status(w))
	return fitBox(strings.Join(append(lines, messages...), "\n"), w, h)
}

// charts draws one chart per charted metric, stacked; the last carries the
// x axis labelled with the grid's values.
func (v *sweepView) charts(w, h int) string {
	st := v.c.styles
	t := v.table
	var charted []int
	for mi, metric := range t.Metrics {
		if !metric.TableOnly {
			charted = append(charted, mi)
		}
	}
	k := len(charted)
	if k == 0 {
		return fitBox("", w, h)
	}
	xLabel := func(col int) string {
		return strconv.FormatFloat(t.Grid[min(max(col-1, 0), len(t.Grid)-1)], 'g', 3, 64)
	}
	if v.axisX {
		xLabel = axisLabel(t, v.sc.Sweep.Axis)
	}
	scale := "log"
	if !v.c.logY {
		scale = "linear"
	}
	var parts []string
	left := h
	for ci, mi := range charted {
		metric := t.Metrics[mi]
		rows := h / k
		if ci == k-1 {
			rows = left
		}
		left -= rows
		spec := chartSpec{width: w, height: rows - 1, rounds: len(t.Grid), logY: v.c.logY, color: st.color, axisColor: st.axis(),
			xAxis: true, xLabel: xLabel, shared: sharedGlyph, loose: true, cursor: v.cursor,
			// A linear axis without a reference level fits the data (test MSEs
			// differ in the second digit); with one (FG = 1) it starts at 0.
			tight: !v.c.logY && math.IsNaN(metric.Ref)}
		spread := -1
		for k, m := range t.Metrics {
			if metric.Spread != "" && m.Name == metric.Spread {
				spread = k
			}
		}
		for r := range t.Labels {
			l := v.labelLooks[r]
			vals := make([]float64, len(t.Grid))
			for i := range vals {
				vals[i], _, _ = t.Stat(i, r, mi)
			}
			spec.curves = append(spec.curves, series{values: fillGaps(vals, v.c.logY), glyph: l.glyph, color: st.racerColor(l), racer: r})
			if spread >= 0 {
				sv := make([]float64, len(t.Grid))
				for i := range sv {
					sv[i], _, _ = t.Stat(i, r, spread)
				}
				spec.overlays = append(spec.overlays, series{values: fillGaps(sv, v.c.logY), glyph: spreadGlyph, color: st.racerColor(l), racer: -1})
			}
		}
		var notes []string
		if !math.IsNaN(metric.Ref) {
			spec.levels = append(spec.levels, level{value: metric.Ref, glyph: referenceGlyph, color: st.axis()})
			notes = append(notes, fmt.Sprintf("%c %s", referenceGlyph, metric.RefNote))
		}
		if spread >= 0 {
			notes = append(notes, fmt.Sprintf("%c %s", spreadGlyph, t.Metrics[spread].Caption))
		}
		for _, mk := range metric.Marks {
			spec.marks = append(spec.marks, gridPosition(t.Grid, mk.At))
			notes = append(notes, fmt.Sprintf("%c %s", markGlyph, mk.Note))
		}
		if v.c.theory {
			var drawn []series
			var labels []string
			for _, th := range metric.Theory {
				if th.Curve == nil {
					spec.marks = append(spec.marks, gridPosition(t.Grid, th.At))
					notes = append(notes, fmt.Sprintf("%c %s", markGlyph, th.Label))
					continue
				}
				// A prediction about one racer is drawn in its colour.
				color := st.axis()
				if i := slices.Index(t.Labels, th.Racer); i >= 0 {
					color = st.racerColor(v.labelLooks[i])
				}
				drawn = append(drawn, series{values: th.Curve, glyph: theoryGlyph, color: color, racer: -1})
				labels = append(labels, th.Label)
			}
			spec.overlays = append(spec.overlays, drawn...)
			for i, s := range drawn {
				note := st.paint(string(theoryGlyph), s.color) + " " + labels[i]
				if where := offChart(spec, s.values); where != "" {
					note += " (" + where + ")"
				}
				notes = append(notes, note)
			}
		}
		// The caption, then the notes on as many lines as they need (at
		// most three, taken from the chart): a note cut off would leave a
		// dashed curve without a name.
		head := []string{ansi.Truncate(st.caption.Render(metric.Caption)+st.muted.Render(" ("+scale+")"), w, "…")}
		if len(notes) > 0 {
			head = append(head, wrapLines([]string{strings.Join(notes, st.muted.Render("   "))}, w, min(3, max(rows-6, 1)))...)
		}
		spec.height = max(rows-len(head), 1)
		parts = append(parts, strings.Join(head, "\n"), plotChart(spec))
	}
	return strings.Join(parts, "\n")
}

// axisLabel labels x position col (1-based) with the trial mean, at that
// grid point, of the metric named axis (a property of the data, equal for
// every racer: racer 0's is read), or "…" before its first trial.
func axisLabel(t *experiment.SweepTable, axis string) func(col int) string {
	mi := -1
	for k, m := range t.Metrics {
		if m.Name == axis {
			mi = k
		}
	}
	return func(col int) string {
		i := min(max(col-1, 0), len(t.Grid)-1)
		if mi < 0 || len(t.Labels) == 0 {
			return "…"
		}
		mean, _, n := t.Stat(i, 0, mi)
		if n == 0 {
			return "…"
		}
		if mean == math.Trunc(mean) && math.Abs(mean) < 1e6 {
			return strconv.FormatFloat(mean, 'f', 0, 64) // a count such as |D_j|
		}
		return strconv.FormatFloat(mean, 'g', 2, 64)
	}
}

// diverged names, per racer, the grid values at which some trials
// diverged (a metric "diverged", the fraction of trials), with how many of
// the trials done: the means there average the other trials only, and a
// value where all diverged is a gap in the curve. "" when none did.
func diverged(t *experiment.SweepTable, knob string) string {
	mi := -1
	for k, m := range t.Metrics {
		if m.Name == "diverged" {
			mi = k
		}
	}
	if mi < 0 {
		return ""
	}
	var parts []string
	for r, label := range t.Labels {
		var at []string
		for i, x := range t.Grid {
			frac, _, k := t.Stat(i, r, mi)
			if k == 0 || !(frac > 0) {
				continue
			}
			n := int(math.Round(frac * float64(k)))
			what := fmt.Sprintf("%d/%d", n, k)
			if n == k {
				what = "all " + strconv.Itoa(k)
			}
			v := experiment.FormatFloat(x)
			if len(at) == 0 {
				v = knob + "=" + v
			}
			at = append(at, fmt.Sprintf("%s (%s)", v, what))
		}
		if len(at) > 0 {
			parts = append(parts, label+" at "+strings.Join(at, ", "))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "diverged trials, left out of the means: " + strings.Join(parts, "; ")
}

// fillGaps joins the grid points that have data by straight lines (in log
// space on a log axis) so that the coarse first pass already reads as a
// curve; points outside the known range stay empty.
func fillGaps(vals []float64, logY bool) []float64 {
	out := append([]float64(nil), vals...)
	ok := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) && (!logY || x > 0) }
	prev := -1
	for i, x := range vals {
		if !ok(x) {
			continue
		}
		if prev >= 0 && i-prev > 1 {
			a, b := vals[prev], x
			for j := prev + 1; j < i; j++ {
				f := float64(j-prev) / float64(i-prev)
				if logY {
					out[j] = math.Exp((1-f)*math.Log(a) + f*math.Log(b))
				} else {
					out[j] = (1-f)*a + f*b
				}
			}
		}
		prev = i
	}
	return out
}

// legend shows each curve's glyph and label in its colour, and with the
// cursor on a grid value the racer's charted means there (a curve hidden
// under another's glyphs is read here); a racer without any value yet says
// so. Names are never cut (they wrap).
func (v *sweepView) legend(w int) []string {
	st := v.c.styles
	t := v.table
	var entries []string
	for i, l := range t.Labels {
		lk := v.labelLooks[i]
		entry := st.paint(string(lk.glyph)+" "+l, st.racerColor(lk))
		any := false
		var vals []string
		for mi, m := range t.Metrics {
			if m.TableOnly {
				continue
			}
			for p := range t.Grid {
				if mean, _, _ := t.Stat(p, i, mi); !math.IsNaN(mean) && !math.IsInf(mean, 0) {
					any = true
				}
			}
			if v.cursor > 0 {
				mean, _, k := t.Stat(v.cursor-1, i, mi)
				s := "–"
				if k > 0 && !math.IsNaN(mean) && !math.IsInf(mean, 0) {
					s = formatValue(mean)
				}
				vals = append(vals, m.Name+" "+s)
			}
		}
		switch {
		case len(vals) > 0:
			entry += "  " + strings.Join(vals, "  ")
		case !any && t.Done() > 0:
			entry += st.muted.Render("  (no value yet)")
		}
		entries = append(entries, entry)
	}
	return packEntries(entries, w)
}

// dataAtCursor lists the table-only metrics that are properties of the
// data at the cursor's value, equal for every racer (FedNewton's Υ, the
// local size, the empirical heterogeneity, the realised Γ): what the x axis
// means there. Per-racer counts (diverged trials, epochs) are left out.
func (v *sweepView) dataAtCursor() []string {
	t := v.table
	var out []string
	for mi, m := range t.Metrics {
		if !m.TableOnly || strings.HasPrefix(m.Name, "diverged") {
			continue
		}
		val, same, seen := 0.0, true, false
		for r := range t.Labels {
			mean, _, k := t.Stat(v.cursor-1, r, mi)
			if k == 0 || math.IsNaN(mean) {
				continue
			}
			if seen && math.Abs(mean-val) > 1e-9*math.Max(math.Abs(val), 1) {
				same = false
			}
			val, seen = mean, true
		}
		if seen && same {
			out = append(out, m.Name+" "+formatValue(val))
		}
	}
	return out
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

// progressLine is the progress bar with trials done, elapsed time and ETA.
func (v *sweepView) progressLine(w int) string {
	p := experiment.SweepProgress{Done: v.table.Done(), Total: v.table.Total(), Elapsed: v.elapsed}
	text := fmt.Sprintf(" %d/%d · %s", p.Done, p.Total, clock(p.Elapsed))
	if v.state == stateRunning && p.Done > 0 {
		text += " · ETA " + clock(p.ETA())
	}
	v.bar.Width = max(w-ansi.StringWidth(text)-1, 10)
	return ansi.Truncate(v.bar.ViewAs(p.Fraction())+text, w, "…")
}

func (v *sweepView) status(w int) string {
	state := map[runState]string{stateRunning: "running", stateDone: "done", stateFailed: "failed", stateStopped: "stopped"}[v.state]
	if v.paused && v.state == stateRunning {
		state = "paused"
	}
	x := "x: " + v.sc.Sweep.Label
	if v.axisX {
		x = fmt.Sprintf("x: %s, labelled with %s", v.sc.Sweep.Label, axisName(v.sc.Sweep.Axis))
	}
	parts := []string{state, "seed " + strconv.FormatUint(v.sc.Seed, 10), x}
	if v.cursor > 0 {
		at := fmt.Sprintf("cursor: %s=%s", v.sc.Sweep.Knob, experiment.FormatFloat(v.table.Grid[v.cursor-1]))
		for _, p := range v.dataAtCursor() {
			at += "  " + p
		}
		parts = append([]string{at}, parts...) // first: it is what the legend reads
	}
	if fe := v.sc.Get("fed_error"); fe != "" {
		parts = append(parts, "fed error: "+fe)
	}
	return ansi.Truncate(v.c.styles.status.Render(strings.Join(parts, " · ")), w, "…")
}

func (v *sweepView) messages(w int, acts []action) []string {
	st := v.c.styles
	var msgs []string
	if v.fatal != "" {
		msgs = append(msgs, st.errorLine.Render(v.fatal))
	}
	if v.c.notice != "" {
		msgs = append(msgs, st.notice.Render(v.c.notice))
	}
	if d := diverged(v.table, v.sc.Sweep.Knob); d != "" {
		msgs = append(msgs, st.notice.Render(d))
	}
	if len(msgs) == 0 {
		return []string{hintBar(st, acts, w)}
	}
	return wrapLines(msgs, w, 3)
}

// axisName is how the status line names an axis metric.
func axisName(axis string) string {
	switch axis {
	case "delta_data":
		return "the empirical Δ_Dj"
	case "delta_model":
		return "the empirical Δ_fj"
	case "local_size":
		return "|D_j|"
	}
	return axis
}

// clock formats a duration as m:ss (or h:mm:ss).
func clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
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
