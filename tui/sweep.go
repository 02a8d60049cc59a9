package tui

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/model"
)

// SweepRunner runs a sweep scenario, calling emit once per finished (grid
// value, trial) evaluation. The real one is experiment.RunSweep; tests
// inject fakes.
type SweepRunner func(ctx context.Context, sc experiment.Scenario, emit func(experiment.TrialResult)) error

// WithSweepRunner replaces the sweep engine (tests use fakes).
func WithSweepRunner(r SweepRunner) Option { return func(m *Model) { m.sweepRunner = r } }

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

// sweepState extends the run states with a sweep stopped by the user.
const stateStopped runState = stateFailed + 1

// sweepView is the sweep screen: one chart per metric with x the swept knob
// and y the trial mean on a log axis, one series per racer, a dashed
// reference line where the metric has one (FG = 1), and a progress bar.
type sweepView struct {
	sc experiment.Scenario
	stream
	state  runState
	table  *experiment.SweepTable
	fatal  string
	notice string
	screen screen
	picker picker
	bar    progress.Model

	frame string
	// axisX labels the x axis with the sweep's axis metric (the empirical
	// Δ_Dj or Δ_fj of newton-heterogeneity) instead of the knob's values.
	axisX bool
}

// sweepKeys are the bindings of the sweep view: the run view's where they
// mean the same, plus stop, the FG ratio and the federated-error mode (the
// federation-gain sweeps) and the x labels (sweeps with an axis metric).
type sweepKeys struct {
	keyMap
	Stop, Ratio, FedError, AxisX key.Binding
	fedGain, axis                bool // which of the optional keys apply
}

func defaultSweepKeys(k keyMap, sc experiment.Scenario) sweepKeys {
	return sweepKeys{keyMap: k,
		Stop:     key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "stop (keep the trials done)")),
		Ratio:    key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "FG ratio: norms / squared")),
		FedError: key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "federated error: min / final / limit")),
		AxisX:    key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "x labels: knob / measured")),
		fedGain:  sc.Family == experiment.FamilyFedGain,
		axis:     sc.Sweep.Axis != "",
	}
}

// ShortHelp is the one-line reminder of the sweep view.
func (k sweepKeys) ShortHelp() []key.Binding {
	out := []key.Binding{withHelp("space", "pause", k.Pause), withHelp("x", "stop", k.Stop), withHelp("r", "restart", k.Restart)}
	if k.fedGain {
		out = append(out, withHelp("s", "FG²", k.Ratio), withHelp("f", "fed error", k.FedError))
	}
	if k.axis {
		out = append(out, withHelp("v", "x labels", k.AxisX))
	}
	return append(out, withHelp("?", "more keys", k.Help), k.Quit)
}

// FullHelp is the help overlay of the sweep view.
func (k sweepKeys) FullHelp() [][]key.Binding {
	var opt []key.Binding
	if k.fedGain {
		opt = append(opt, k.Ratio, k.FedError)
	}
	if k.axis {
		opt = append(opt, k.AxisX)
	}
	return [][]key.Binding{
		{k.Pause, k.Stop, k.Restart, k.NewSeed},
		append(opt, k.Log, k.Export),
		{k.Presets, k.Help, k.Quit},
	}
}

func withHelp(keys, desc string, b key.Binding) key.Binding {
	return key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(keys, desc))
}

// openSweep switches the model to the sweep view of sc and starts it.
func (m *Model) openSweep(sc experiment.Scenario) tea.Cmd {
	if err := sc.Validate(); err != nil {
		m.notice = err.Error()
		m.render()
		return nil
	}
	m.Close()
	m.runID++ // messages of the run view's last run are now stale
	m.sc = sc
	bar := progress.New(progress.WithoutPercentage())
	if m.styles.color {
		bar = progress.New(progress.WithoutPercentage(), progress.WithDefaultGradient())
	}
	m.sweep = &sweepView{sc: sc, bar: bar}
	return m.restartSweep()
}

// restartSweep cancels the active sweep and starts its scenario afresh.
func (m *Model) restartSweep() tea.Cmd {
	v := m.sweep
	ctx := v.begin(m.ctx, m.now())
	v.table, _ = experiment.NewSweepTable(v.sc) // validated by openSweep and applySweep
	v.fatal, v.notice = "", ""
	v.state = stateRunning
	v.ch = startSweepStream(ctx, v.runID, m.sweepRunner, v.sc)
	m.renderSweep()
	return v.rearm()
}

// applySweep switches to a changed sweep scenario and restarts at once.
func (m *Model) applySweep(sc experiment.Scenario) tea.Cmd {
	if err := sc.Validate(); err != nil {
		m.sweep.notice = err.Error()
		m.renderSweep()
		return nil
	}
	m.sc, m.sweep.sc = sc, sc
	return m.restartSweep()
}

func (v *sweepView) rearm() tea.Cmd { return v.stream.rearm(waitForTrials) }

// updateSweep is Update while the sweep view is open.
func (m *Model) updateSweep(msg tea.Msg) (tea.Model, tea.Cmd) {
	v := m.sweep
	switch msg := msg.(type) {
	case tea.KeyMsg:
		if key.Matches(msg, m.keys.Quit) && (v.screen == screenRun || msg.String() == "ctrl+c") {
			v.close()
			return m, tea.Quit
		}
		return m, m.sweepKey(msg)
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.Width = msg.Width
		m.renderSweep()
	case trialsMsg:
		if msg.runID != v.runID {
			return m, nil
		}
		for _, r := range msg.results {
			v.table.Add(r)
		}
		cmd := v.received(m.now())
		if msg.tail != nil {
			_, tail := m.updateSweep(msg.tail)
			return m, tea.Batch(cmd, tail)
		}
		return m, tea.Batch(cmd, v.rearm())
	case sweepDoneMsg:
		if msg.runID != v.runID {
			return m, nil
		}
		v.ended(m.now())
		v.state = stateDone
		if msg.err != nil {
			v.state, v.fatal = stateFailed, msg.err.Error()
		}
		m.renderSweep()
	case frameMsg:
		if v.frameDue() {
			m.renderSweep()
		}
	case exportedMsg:
		v.notice = msg.notice()
		m.renderSweep()
	}
	return m, nil
}

func (m *Model) sweepKey(msg tea.KeyMsg) tea.Cmd {
	v := m.sweep
	switch v.screen {
	case screenHelp:
		if key.Matches(msg, m.keys.Help) || msg.String() == "esc" || msg.String() == "q" {
			v.screen = screenRun
			m.renderSweep()
		}
		return nil
	case screenPresets:
		var res pickerResult
		v.picker, res = v.picker.update(msg)
		switch res {
		case pickerCancelled:
			v.screen = screenRun
		case pickerApplied:
			v.screen = screenRun
			p, err := experiment.LookupPreset(v.picker.items[v.picker.cursor].preset)
			if err != nil {
				v.notice = err.Error()
				break
			}
			if sc := p.Scenario(); sc.IsSweep() {
				return m.applySweep(sc)
			}
			// Back to the run view.
			v.close()
			m.sweep = nil
			m.screen = screenRun
			return m.apply(p.Scenario())
		}
		m.renderSweep()
		return nil
	}
	k := defaultSweepKeys(m.keys, v.sc)
	v.notice = ""
	sc := v.sc
	switch {
	case key.Matches(msg, k.Help):
		v.screen = screenHelp
	case key.Matches(msg, k.Pause):
		return m.toggleSweepPause()
	case key.Matches(msg, k.Stop):
		if v.state == stateRunning {
			v.close()
			v.ch, v.waiting, v.state = nil, false, stateStopped
			v.elapsed = m.now().Sub(v.started)
		}
	case key.Matches(msg, k.Restart):
		return m.restartSweep()
	case key.Matches(msg, k.NewSeed):
		sc.Seed++
		return m.applySweep(sc)
	case key.Matches(msg, k.Ratio):
		if sc.Family != experiment.FamilyFedGain {
			v.notice = "the FG ratio applies to the federation-gain sweeps only"
			break
		}
		sc.Squared = !sc.Squared
		return m.applySweep(sc)
	case key.Matches(msg, k.FedError):
		if sc.Family == experiment.FamilyPolynomial {
			v.notice = fmt.Sprintf("this sweep uses the closed-form limit (iterating would need %d rounds per fit)", sc.Rounds)
			break
		}
		if sc.Family != experiment.FamilyFedGain {
			v.notice = "the federated-error mode applies to the federation-gain sweeps only"
			break
		}
		sc.FedError = model.FedErrors[(int(sc.FedError)+1)%len(model.FedErrors)]
		return m.applySweep(sc)
	case key.Matches(msg, k.AxisX):
		if sc.Sweep.Axis == "" {
			v.notice = "this sweep has no empirical measure to label the x axis with"
			break
		}
		v.axisX = !v.axisX
	case key.Matches(msg, k.Log):
		m.logY = !m.logY
	case key.Matches(msg, k.Presets):
		v.screen, v.picker = screenPresets, presetPicker(sc.Preset)
	case key.Matches(msg, k.Export):
		t := v.table.Snapshot()
		base := fmt.Sprintf("fedscope-%s-seed%d", sc.Preset, sc.Seed)
		return func() tea.Msg {
			path, err := experiment.ExportNew(base, ".csv", func(w io.Writer) error { return t.Write(w, experiment.CSV) })
			return exportedMsg{path: path, rows: t.Rows(), err: err}
		}
	}
	m.renderSweep()
	return nil
}

func (m *Model) toggleSweepPause() tea.Cmd {
	v := m.sweep
	v.paused = !v.paused
	var cmd tea.Cmd
	if !v.paused && !v.waiting && v.state == stateRunning {
		v.started = m.now().Add(-v.elapsed)
		cmd = v.rearm()
	}
	m.renderSweep()
	return cmd
}

// renderSweep lays out and draws the sweep view into its frame.
func (m *Model) renderSweep() {
	v := m.sweep
	v.dirty = false
	w, h := m.width, m.height
	if w <= 0 || h <= 0 {
		v.frame = ""
		return
	}
	title := m.styles.title.Render("fedscope · "+v.sc.Preset) + "  " + m.styles.summary.Render(v.sc.SweepSummary())
	status := m.sweepStatus()
	if w < minWidth || h < minHeight {
		msg := fmt.Sprintf("enlarge the terminal to at least %d×%d (now %d×%d)", minWidth, minHeight, w, h)
		v.frame = fitBox(strings.Join([]string{title, status, msg}, "\n"), w, h)
		return
	}
	messages := m.sweepMessages(w)
	body := h - 4 - len(messages) // title, legend, progress, status
	var middle string
	switch v.screen {
	case screenHelp:
		intro := "Sweeps average many trials per value of the swept knob; curves refine as trials arrive. " +
			"Every change restarts the sweep at once."
		switch {
		case v.sc.Family == experiment.FamilyFedGain:
			intro += " The dashed line is FG = 1: above it, joining helps."
		case v.sc.Sweep.Axis != "":
			intro += " A racer's trials that diverged are left out of its mean (the last line names them); " +
				"v labels the x axis with what was measured at each value (" + axisName(v.sc.Sweep.Axis) + ")."
		}
		middle = fitBox(m.styles.caption.Render("Help")+"\n\n"+ansi.Wrap(intro, w, " ")+"\n\n"+
			fullHelpView(m.help, defaultSweepKeys(m.keys, v.sc), m.width)+"\n\n"+m.styles.muted.Render("press ? or esc to close"), w, body)
	case screenPresets:
		middle = v.picker.view(m.styles, w, body)
	default:
		middle = m.sweepCharts(w, body)
	}
	lines := []string{ansi.Truncate(title, w, "…"), middle, m.sweepLegend(w), m.sweepProgress(w),
		ansi.Truncate(status, w, "…")}
	v.frame = fitBox(strings.Join(append(lines, messages...), "\n"), w, h)
}

// sweepCharts draws one chart per metric, stacked; the last carries the x
// axis labelled with the grid's values.
func (m *Model) sweepCharts(w, h int) string {
	v := m.sweep
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
	xLabel := gridLabel(t.Grid)
	if v.axisX {
		xLabel = axisLabel(t, v.sc.Sweep.Axis)
	}
	plotRows := h - k - 2 // one caption per chart, and the x axis
	scale := "log"
	if !m.logY {
		scale = "linear"
	}
	var parts []string
	for ci, mi := range charted {
		metric := t.Metrics[mi]
		rows := plotRows / k
		if ci == k-1 {
			rows = plotRows - rows*(k-1) + 2
		}
		curves := make([]series, len(t.Labels))
		for r := range t.Labels {
			vals := make([]float64, len(t.Grid))
			for i := range vals {
				vals[i], _, _ = t.Stat(i, r, mi)
			}
			look := lookOf(r)
			curves[r] = series{values: fillGaps(vals, m.logY), glyph: look.charSet(), color: look.color}
		}
		spec := chartSpec{width: w, height: rows, rounds: len(t.Grid), logY: m.logY, curves: curves,
			color: m.styles.color, xAxis: ci == k-1, xLabel: xLabel,
			// A linear axis without a reference level fits the data (test MSEs
			// differ in the second digit); with one (FG = 1) it starts at 0.
			tight: !m.logY && math.IsNaN(metric.Ref)}
		note := ""
		if !math.IsNaN(metric.Ref) {
			ref := make([]float64, len(t.Grid))
			for i := range ref {
				ref[i] = metric.Ref
			}
			spec.reference = &series{values: ref, glyph: referenceCharSet, color: referenceColor}
			note = "   " + referenceGlyph + " " + metric.RefNote
		}
		parts = append(parts, m.styles.caption.Render(metric.Caption)+m.styles.muted.Render(" ("+scale+")"+note),
			plotChart(spec))
	}
	return strings.Join(parts, "\n")
}

// gridLabel labels x position v (1-based, as the chart counts points) with
// the grid value there: a log-spaced grid is spaced evenly by index and
// labelled with its real values.
func gridLabel(grid []float64) func(v float64) string {
	return func(v float64) string {
		i := min(max(int(math.Round(v))-1, 0), len(grid)-1)
		return strconv.FormatFloat(grid[i], 'g', 3, 64)
	}
}

// axisLabel labels x position v with the trial mean, at that grid point, of
// the metric named axis (a property of the data, equal for every racer:
// racer 0's is read), or "…" before its first trial.
func axisLabel(t *experiment.SweepTable, axis string) func(v float64) string {
	mi := -1
	for k, m := range t.Metrics {
		if m.Name == axis {
			mi = k
		}
	}
	return func(v float64) string {
		i := min(max(int(math.Round(v))-1, 0), len(t.Grid)-1)
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

// diverged names the racers with a metric "diverged" above 0 at some grid
// value, and how many values; "" when none did.
func diverged(t *experiment.SweepTable) string {
	mi := -1
	for k, m := range t.Metrics {
		if m.Name == experiment.DivergedMetric {
			mi = k
		}
	}
	if mi < 0 {
		return ""
	}
	var parts []string
	for r, label := range t.Labels {
		n := 0
		for i := range t.Grid {
			if mean, _, k := t.Stat(i, r, mi); k > 0 && mean > 0 {
				n++
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s (%d of %d values)", label, n, len(t.Grid)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "diverged, left out of the means: " + strings.Join(parts, ", ")
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

func (m *Model) sweepLegend(w int) string {
	labels := m.sweep.table.Labels
	if width := len(labels) * 5; width+len(strings.Join(labels, "")) > w {
		labels = compactLabels(labels)
	}
	var parts []string
	for i, l := range labels {
		look := lookOf(i)
		parts = append(parts, m.styles.paint(look.glyph+" "+l, look.color))
	}
	legend := strings.Join(parts, "  ")
	if sc := m.sweep.sc; sc.Family == experiment.FamilyFedGain {
		// The ratio plotted, named as the issue asks: norms by default,
		// squared norms (Definition 1 of paper 000) on request.
		ratio := "FG = ‖θ̂−θ*‖/‖θ_fed−θ*‖"
		if sc.Squared {
			ratio = "FG = ‖θ̂−θ*‖²/‖θ_fed−θ*‖²"
		}
		legend += "   " + ratio
	}
	return ansi.Truncate(legend, w, "…")
}

// compactLabels drops from each label the words it shares with the label
// before it ("FedNewton t=1", "FedNewton t=2" → "FedNewton t=1", "t=2"), so
// that the eight racers of the newton sweeps fit in 80 columns.
func compactLabels(labels []string) []string {
	out := make([]string, len(labels))
	for i, l := range labels {
		out[i] = l
		if i == 0 {
			continue
		}
		prev, cur := strings.Fields(labels[i-1]), strings.Fields(l)
		k := 0
		for k < len(prev) && k < len(cur)-1 && prev[k] == cur[k] {
			k++
		}
		if k > 0 {
			out[i] = strings.Join(cur[k:], " ")
		}
	}
	return out
}

// sweepProgress is the progress bar with trials done, elapsed time and ETA.
func (m *Model) sweepProgress(w int) string {
	v := m.sweep
	p := experiment.Progress{Done: v.table.Done(), Total: v.table.Total(), Elapsed: v.elapsed}
	text := fmt.Sprintf(" %d/%d · %s", p.Done, p.Total, clock(p.Elapsed))
	if v.state == stateRunning && p.Done > 0 {
		text += " · ETA " + clock(p.ETA())
	}
	v.bar.Width = max(w-ansi.StringWidth(text)-1, 10)
	return ansi.Truncate(v.bar.ViewAs(p.Fraction())+text, w, "…")
}

func (m *Model) sweepStatus() string {
	v := m.sweep
	state := map[runState]string{stateRunning: "running", stateDone: "done", stateFailed: "failed", stateStopped: "stopped"}[v.state]
	if v.paused && v.state == stateRunning {
		state = "paused"
	}
	x := "x: " + v.sc.Sweep.Label
	if v.axisX {
		x = fmt.Sprintf("x: %s, labelled with %s", v.sc.Sweep.Label, axisName(v.sc.Sweep.Axis))
	}
	parts := []string{state, "seed " + itoa(int(v.sc.Seed)), x}
	if v.sc.Family == experiment.FamilyFedGain {
		parts = append(parts, "fed error: "+v.sc.FedError.String())
	}
	return m.styles.status.Render(strings.Join(parts, " · "))
}

func (m *Model) sweepMessages(w int) []string {
	v := m.sweep
	var msgs []string
	if v.fatal != "" {
		msgs = append(msgs, m.styles.errorLine.Render(v.fatal))
	}
	if v.notice != "" {
		msgs = append(msgs, m.styles.notice.Render(v.notice))
	}
	if d := diverged(v.table); d != "" {
		msgs = append(msgs, m.styles.notice.Render(d))
	}
	if len(msgs) == 0 {
		return []string{m.help.ShortHelpView(defaultSweepKeys(m.keys, v.sc).ShortHelp())}
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

var _ help.KeyMap = sweepKeys{}
