package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
)

// screen is what fills the area between the title and the status lines.
type screen int

const (
	screenRun screen = iota
	screenHelp
	screenAlgorithms
	screenPresets
	screenData
)

func (s screen) String() string {
	return [...]string{"run", "help", "algorithms", "presets", "data"}[s]
}

// runState is the state shown in the status line.
type runState int

const (
	statePreparing runState = iota
	stateRunning
	stateDone
	stateFailed
)

// frameInterval caps redraws at about 30 per second however fast the
// simulation streams.
const frameInterval = 33 * time.Millisecond

// Minimum terminal size for the charts; smaller terminals get a notice.
const (
	minWidth  = 50
	minHeight = 14
)

type frameMsg struct{}

type exportedMsg struct {
	path string
	rows int
	err  error
}

// notice is the sentence an export leaves in the status area.
func (msg exportedMsg) notice() string {
	if msg.err != nil {
		return "export failed: " + msg.err.Error()
	}
	return fmt.Sprintf("exported %d rows to %s", msg.rows, msg.path)
}

// Model is the root Bubble Tea model: the run view with its overlays.
type Model struct {
	ctx    context.Context
	runner Runner
	now    func() time.Time
	sc     experiment.Scenario

	width, height int
	styles        styles
	keys          keyMap
	help          help.Model
	screen        screen
	picker        picker

	// The current run (stream.go). Messages from any other runID are stale.
	stream
	state     runState
	table     *experiment.Table
	facts     experiment.Facts // NaN fields until the data are ready
	failures  []error
	fatal     string
	notice    string
	logY      bool
	oracleX   bool            // lowrank: x axis is the oracle complexity
	dataErr   string          // why the typed data file cannot be used
	dataInput textinput.Model // the data-file prompt

	// Rendering is throttled (stream.scheduleFrame): points mark the charts
	// dirty and a frame tick redraws them, so View only joins cached strings.
	frame string

	// sweep is the sweep view (sweep.go), non-nil while a sweep preset is
	// open; it then receives every message.
	sweep       *sweepView
	sweepRunner SweepRunner
	cluster     clusterState // the cluster view of the mixture family
}

// Option configures a Model.
type Option func(*Model)

// WithRunner replaces the simulation (tests use fakes).
func WithRunner(r Runner) Option { return func(m *Model) { m.runner = r } }

// WithClock replaces time.Now (tests pin the rounds-per-second figure).
func WithClock(now func() time.Time) Option { return func(m *Model) { m.now = now } }

// NewModel returns the run view for a scenario; Init starts the run.
func NewModel(ctx context.Context, sc experiment.Scenario, opts ...Option) *Model {
	m := &Model{ctx: ctx, runner: experimentRunner, now: time.Now, sc: sc, styles: newStyles(),
		keys: defaultKeyMap(), help: newHelp(), logY: true, width: 80, height: 24, facts: experiment.NoFacts()}
	m.sweepRunner = experiment.RunSweep
	for _, o := range opts {
		o(m)
	}
	m.table = experiment.NewTable(sc, math.NaN()) // drawable before Init
	return m
}

// Init starts the first run.
func (m *Model) Init() tea.Cmd {
	if m.sc.IsSweep() {
		return m.openSweep(m.sc)
	}
	return m.restart()
}

// Close cancels the active run; tui.Main defers it.
func (m *Model) Close() {
	if m.cancel != nil {
		m.cancel()
	}
	if m.sweep != nil {
		m.sweep.close()
	}
}

// restart cancels the active run and starts the current scenario afresh.
func (m *Model) restart() tea.Cmd {
	if m.sweep != nil {
		m.sweep.close()
	}
	ctx := m.begin(m.ctx, m.now())
	m.table = experiment.NewTable(m.sc, math.NaN())
	m.facts = experiment.NoFacts()
	m.failures, m.fatal = nil, ""
	m.state = statePreparing
	m.ch = startStream(ctx, m.runID, m.runner, m.sc)
	m.render()
	return tea.Batch(m.rearm(), m.clusterInfoCmd())
}

// Update handles global keys first, then sizes, run messages, and finally
// the keys of the active screen.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if m.sweep != nil {
		return m.updateSweep(msg)
	}
	switch msg := msg.(type) {
	case tea.KeyMsg:
		if key.Matches(msg, m.keys.Quit) && (m.screen == screenRun || msg.String() == "ctrl+c") {
			m.Close()
			return m, tea.Quit
		}
		return m, m.handleKey(msg)
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.Width = msg.Width
		m.render()
		return m, nil
	case readyMsg:
		if msg.runID != m.runID {
			return m, nil
		}
		m.facts, m.table.LSError = msg.facts, msg.facts.LSError
		if msg.facts.Note != "" && m.notice == "" {
			m.notice = msg.facts.Note // e.g. the bandwidth a data file resolved to
			m.render()
		}
		m.state = stateRunning
		return m, m.rearm()
	case pointsMsg:
		if msg.runID != m.runID {
			return m, nil
		}
		for _, p := range msg.points {
			m.table.Add(p)
		}
		m.state = stateRunning
		cmd := m.received(m.now())
		if msg.tail != nil {
			_, tailCmd := m.Update(msg.tail)
			return m, tea.Batch(cmd, tailCmd)
		}
		return m, tea.Batch(cmd, m.rearm())
	case runDoneMsg:
		if msg.runID != m.runID {
			return m, nil
		}
		m.ended(m.now())
		m.finish(msg.res, msg.err)
		m.render()
		return m, nil
	case frameMsg:
		if m.frameDue() {
			m.render()
		}
		return m, nil
	case clusterInfoMsg:
		return m, m.onClusterInfo(msg)
	case exportedMsg:
		m.notice = msg.notice()
		m.render()
		return m, nil
	}
	return m, nil
}

// rearm waits for the next message of the current run unless paused.
func (m *Model) rearm() tea.Cmd { return m.stream.rearm(waitForStream) }

func (m *Model) finish(res experiment.Result, err error) {
	if err != nil {
		m.state, m.fatal = stateFailed, err.Error()
		return
	}
	m.state = stateDone
	m.failures = res.Failed()
}

func (m *Model) handleKey(msg tea.KeyMsg) tea.Cmd {
	switch m.screen {
	case screenHelp:
		if key.Matches(msg, m.keys.Help) || msg.String() == "esc" || msg.String() == "q" {
			m.screen = screenRun
			m.render()
		}
		return nil
	case screenAlgorithms, screenPresets:
		return m.handlePicker(msg)
	case screenData:
		return m.handleDataInput(msg)
	}
	k := m.keys
	m.notice = ""
	switch {
	case key.Matches(msg, k.Help):
		m.screen = screenHelp
	case key.Matches(msg, k.Pause):
		return m.togglePause()
	case key.Matches(msg, k.Restart):
		return m.restart()
	case key.Matches(msg, k.NewSeed):
		sc := m.sc
		sc.Seed++
		return m.apply(sc)
	case key.Matches(msg, k.EtaDown), key.Matches(msg, k.EtaUp):
		sc := m.sc
		sc.Eta = stepLadder(etaLadder, sc.Eta, key.Matches(msg, k.EtaUp))
		return m.apply(sc)
	case key.Matches(msg, k.StepsDown), key.Matches(msg, k.StepsUp):
		sc := m.sc
		sc.LocalSteps = int(stepLadder(stepsLadder, float64(sc.LocalSteps), key.Matches(msg, k.StepsUp)))
		if !followsLocalSteps(sc) {
			m.sc = sc
			m.notice = fmt.Sprintf("local_steps=%d, but no racer follows it: add “FedAvg s=N” with a", sc.LocalSteps)
			m.render()
			return nil
		}
		return m.apply(sc)
	case key.Matches(msg, k.HeteroDown), key.Matches(msg, k.HeteroUp):
		if m.sc.Family == experiment.FamilyMixture {
			return m.stepSeparation(key.Matches(msg, k.HeteroUp))
		}
		sc := m.sc
		up := key.Matches(msg, k.HeteroUp)
		switch sc.Family {
		case experiment.FamilyNewton:
			sc.Newton.Alpha = stepLadder(alphaLadder, sc.Newton.Alpha, up)
		case experiment.FamilyLowRank:
			sc.LowRank.Rank = int(stepLadder(rankLadder, float64(sc.LowRank.Rank), up))
		default:
			sc.Data.Gamma = stepLadder(gammaLadder, sc.Data.Gamma, up)
		}
		return m.apply(sc)
	case key.Matches(msg, k.SubspaceDown), key.Matches(msg, k.SubspaceUp):
		if m.sc.Family != experiment.FamilyLinear {
			m.notice = "the covariate subspace r applies to the paradox and minibatch presets"
			break
		}
		return m.apply(stepSubspace(m.sc, key.Matches(msg, k.SubspaceUp)))
	case key.Matches(msg, k.OracleX):
		if m.sc.Family != experiment.FamilyLowRank {
			m.notice = "x (oracle-complexity axis) applies to the lowrank preset"
		}
		m.oracleX = !m.oracleX
	case key.Matches(msg, k.Data):
		m.screen, m.dataErr = screenData, ""
		m.dataInput = newDataInput(m.sc.Newton.DataPath)
		m.dataInput.Width = max(10, m.width-len(m.dataInput.Prompt)-2)
	case key.Matches(msg, k.BatchDown), key.Matches(msg, k.BatchUp):
		if m.sc.Family == experiment.FamilyMixture {
			m.notice = "minibatches apply to the paradox and minibatch presets"
			break
		}
		sc := m.sc
		sc.Batch = stepBatch(sc.Batch, sc.Data.Samples, key.Matches(msg, k.BatchUp))
		return m.apply(sc)
	case key.Matches(msg, k.Log):
		m.logY = !m.logY
	case key.Matches(msg, k.NextRacer) && m.sc.Family == experiment.FamilyMixture:
		m.nextRacer()
	case key.Matches(msg, k.Algorithms) && m.sc.Family == experiment.FamilyMixture:
		m.notice = "mixture races FedMD + FedX against a random start; run with --set local=fedprox for FedProx"
	case key.Matches(msg, k.Algorithms):
		m.screen, m.picker = screenAlgorithms, algorithmPicker(m.sc)
	case key.Matches(msg, k.Presets):
		m.screen, m.picker = screenPresets, presetPicker(m.sc.Preset)
	case key.Matches(msg, k.Export):
		return m.export()
	}
	m.render()
	return nil
}

// apply switches to a changed scenario and restarts at once, or keeps the
// old one and explains why the change is not allowed.
func (m *Model) apply(sc experiment.Scenario) tea.Cmd {
	if sc.IsSweep() {
		return m.openSweep(sc)
	}
	if err := sc.Validate(); err != nil {
		m.notice = err.Error()
		m.render()
		return nil
	}
	m.sc = sc
	return m.restart()
}

func (m *Model) togglePause() tea.Cmd {
	m.paused = !m.paused
	if !m.paused && !m.waiting && (m.state == statePreparing || m.state == stateRunning) {
		m.started = m.now().Add(-m.elapsed)
		m.render()
		return m.rearm()
	}
	m.render()
	return nil
}

func (m *Model) handlePicker(msg tea.KeyMsg) tea.Cmd {
	var res pickerResult
	m.picker, res = m.picker.update(msg)
	switch res {
	case pickerCancelled:
		m.screen = screenRun
	case pickerApplied:
		m.screen = screenRun
		if m.picker.multi {
			sc := m.sc
			sc.Racers = nil
			for _, it := range m.picker.checked() {
				sc.Racers = append(sc.Racers, it.racer)
			}
			return m.apply(sc)
		}
		p, err := experiment.LookupPreset(m.picker.items[m.picker.cursor].preset)
		if err != nil {
			m.notice = err.Error()
			break
		}
		return m.apply(p.Scenario())
	}
	m.render()
	return nil
}

func followsLocalSteps(sc experiment.Scenario) bool {
	if sc.Family == experiment.FamilyMixture {
		return !sc.Mixture.Prox
	}
	for _, r := range sc.Racers {
		if r.Kind == experiment.KindFedAvg && r.LocalSteps == 0 {
			return true
		}
	}
	return false
}

// stepBatch moves the minibatch size along its ladder; 0 (full batch) sits
// above every batch size smaller than n.
func stepBatch(cur, n int, up bool) int {
	if up {
		if cur == 0 {
			return 0
		}
		next := int(stepLadder(batchLadder, float64(cur), true))
		if next >= n || next == cur {
			return 0
		}
		return next
	}
	if cur == 0 {
		cur = n
	}
	return int(stepLadder(batchLadder, float64(cur), false))
}

// export writes the rounds received so far as CSV into the working
// directory, never overwriting an existing file.
func (m *Model) export() tea.Cmd {
	t := m.table.Snapshot()
	base := fmt.Sprintf("fedscope-%s-seed%d", m.sc.Preset, m.sc.Seed)
	return func() tea.Msg {
		path, err := experiment.ExportNew(base, ".csv", func(w io.Writer) error { return t.Write(w, experiment.CSV) })
		return exportedMsg{path: path, rows: t.Len(), err: err}
	}
}

// View joins the cached pieces; all drawing happens in render.
func (m *Model) View() string {
	if m.sweep != nil {
		return m.sweep.frame
	}
	return m.frame
}

// render lays out and draws the whole screen into m.frame.
func (m *Model) render() {
	m.dirty = false
	w, h := m.width, m.height
	if w <= 0 || h <= 0 {
		m.frame = ""
		return
	}
	title := m.styles.title.Render("fedscope · "+m.sc.Preset) + "  " + m.styles.summary.Render(m.sc.SummaryWith(m.facts))
	status := m.statusLine()
	if w < minWidth || h < minHeight {
		msg := fmt.Sprintf("enlarge the terminal to at least %d×%d (now %d×%d)", minWidth, minHeight, w, h)
		m.frame = fitBox(strings.Join([]string{title, status, msg}, "\n"), w, h)
		return
	}
	messages := m.messageLines(w)
	body := h - 3 - len(messages) // title, legend, status
	var middle string
	switch m.screen {
	case screenHelp:
		middle = fitBox(m.helpView(), w, body)
	case screenAlgorithms, screenPresets:
		middle = m.picker.view(m.styles, w, body)
	case screenData:
		middle = m.dataView(w, body)
	default:
		if m.sc.Family == experiment.FamilyMixture {
			middle = m.clusterView(w, body)
		} else {
			middle = m.chartsView(w, body)
		}
	}
	lines := []string{ansi.Truncate(title, w, "…"), middle, m.legend(w), ansi.Truncate(status, w, "…")}
	lines = append(lines, messages...)
	m.frame = fitBox(strings.Join(lines, "\n"), w, h)
}

// chartsView draws the gradient-norm chart above the estimation-error chart.
func (m *Model) chartsView(w, h int) string {
	if m.sc.Family != experiment.FamilyLinear {
		return m.familyChartsView(w, h)
	}
	h1 := (h - 2 - 2) / 2 // two captions; the lower chart also carries the x axis
	h2 := h - 2 - h1
	scale := "log"
	if !m.logY {
		scale = "linear"
	}
	grad := make([]series, len(m.table.Labels))
	errs := make([]series, len(m.table.Labels))
	for i := range m.table.Labels {
		look := lookOf(i)
		g, e := make([]float64, len(m.table.Rounds[i])), make([]float64, len(m.table.Rounds[i]))
		for k, r := range m.table.Rounds[i] {
			g[k], e[k] = r.GradNorm, r.EstError
		}
		grad[i] = series{values: g, glyph: look.charSet(), color: look.color}
		errs[i] = series{values: e, glyph: look.charSet(), color: look.color}
	}
	var ref *series
	refNote := ""
	if ls := m.facts.LSError; !math.IsNaN(ls) {
		vals := make([]float64, m.sc.Rounds)
		for k := range vals {
			vals[k] = ls
		}
		ref = &series{values: vals, glyph: referenceCharSet, color: referenceColor}
		refNote = fmt.Sprintf("   %s pooled least squares %.3g", referenceGlyph, ls)
	}
	spec := chartSpec{width: w, rounds: m.sc.Rounds, logY: m.logY, color: m.styles.color}
	top, bottom := spec, spec
	top.height, top.curves = h1, grad
	bottom.height, bottom.curves, bottom.reference, bottom.xAxis = h2, errs, ref, true
	return strings.Join([]string{
		m.styles.caption.Render("gradient norm ‖∇ℓ(θ_t)‖") + m.styles.muted.Render(" ("+scale+")"),
		plotChart(top),
		m.styles.caption.Render("estimation error ‖θ_t − θ*‖") + m.styles.muted.Render(" ("+scale+")"+refNote),
		plotChart(bottom),
	}, "\n")
}

// legend shows each racer's glyph and label in its colour.
func (m *Model) legend(w int) string {
	var parts []string
	for i, l := range m.table.Labels {
		look := lookOf(i)
		parts = append(parts, m.styles.paint(look.glyph+" "+l, look.color))
	}
	return ansi.Truncate(strings.Join(parts, "   "), w, "…")
}

func (m *Model) statusLine() string {
	done := 0
	for _, rs := range m.table.Rounds {
		if n := len(rs); n > done {
			done = n
		}
	}
	state := map[runState]string{statePreparing: "preparing data", stateRunning: "running", stateDone: "done", stateFailed: "failed"}[m.state]
	if m.state == stateDone && len(m.failures) > 0 {
		state = "diverged"
	}
	if m.paused && (m.state == stateRunning || m.state == statePreparing) {
		state = "paused"
	}
	parts := []string{fmt.Sprintf("round %d/%d", done, m.sc.Rounds)}
	if secs := m.elapsed.Seconds(); secs > 0 && m.table.Len() > 0 {
		rate := float64(m.table.Len()) / float64(len(m.table.Labels)) / secs
		parts = append(parts, humanRate(rate)+" rounds/s")
	}
	parts = append(parts, state, "seed "+strconv.FormatUint(m.sc.Seed, 10))
	return m.styles.status.Render(strings.Join(parts, " · "))
}

// messageLines are the lines under the status: the run's failures (each a
// sentence, wrapped), a notice, or the short help.
func (m *Model) messageLines(w int) []string {
	var msgs []string
	if m.fatal != "" {
		msgs = append(msgs, m.styles.errorLine.Render(m.fatal))
	}
	if len(m.failures) > 0 {
		msgs = append(msgs, m.styles.errorLine.Render(m.failures[0].Error()))
	}
	if len(m.failures) > 1 {
		also := make([]string, len(m.failures)-1)
		for i, f := range m.failures[1:] {
			also[i] = divergedBrief(f)
		}
		msgs = append(msgs, m.styles.errorLine.Render("also diverged: "+strings.Join(also, ", ")))
	}
	if m.notice != "" {
		msgs = append(msgs, m.styles.notice.Render(m.notice))
	}
	if len(msgs) == 0 {
		return []string{m.help.ShortHelpView(m.helpKeys().ShortHelp())}
	}
	return wrapLines(msgs, w, 4)
}

// wrapLines wraps messages to the width and keeps at most limit lines, the
// last one ending in "…" when some were cut.
func wrapLines(msgs []string, w, limit int) []string {
	var lines []string
	for _, s := range msgs {
		lines = append(lines, strings.Split(ansi.Wrap(s, w, " "), "\n")...)
	}
	if len(lines) > limit {
		lines = append(lines[:limit-1], ansi.Truncate(lines[limit-1], w-1, "")+"…")
	}
	return lines
}

// divergedBrief names a failed racer and, for a divergence, its round.
func divergedBrief(err error) string {
	var re *experiment.RacerError
	var de *algorithms.DivergedError
	switch {
	case errors.As(err, &re) && errors.As(err, &de):
		return fmt.Sprintf("%s (round %d)", re.Label, de.Round)
	case errors.As(err, &re):
		return re.Label
	}
	return err.Error()
}

func (m *Model) helpView() string {
	intro := "Keys — every parameter change cancels the run and restarts it at once.\n" +
		"The dashed line is the error of pooled least squares, the centralised optimum.\n\n"
	if m.sc.Family == experiment.FamilyMixture {
		intro = "Keys — every parameter change cancels the run and restarts it at once.\n" +
			"Rows are clients grouped by true cluster, columns rounds; solid bands = correct clusters.\n\n"
	}
	return m.styles.caption.Render("Help") + "\n\n" + intro + fullHelpView(m.help, m.helpKeys(), m.width) + "\n\n" +
		m.styles.muted.Render("press ? or esc to close")
}

func newHelp() help.Model {
	h := help.New()
	h.ShortSeparator = " · " // "•" is a racer's glyph
	return h
}

func humanRate(r float64) string {
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.1fM", r/1e6)
	case r >= 1e4:
		return fmt.Sprintf("%.0fk", r/1e3)
	case r >= 1e3:
		return fmt.Sprintf("%.1fk", r/1e3)
	}
	return fmt.Sprintf("%.0f", r)
}

func itoa(i int) string { return strconv.Itoa(i) }
