package tui

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/experiment"
)

// runState is the state of a race's computation.
type runState int

const (
	statePreparing runState = iota
	stateRunning
	stateDone
	stateFailed
)

// Playback: the simulation computes as fast as it can and streams in the
// background; the view reveals its rounds at a pace a class can follow
// (docs/design.md, "Playback"). < and > move along the ladder; maxPace reveals
// every round as soon as it is computed.
var (
	maxPace    = MaxPace
	paceLadder = []float64{1, 2, 5, 10, 20, 50, 100, maxPace}
)

// MaxPace reveals every round as soon as it is computed (--pace max).
var MaxPace = math.Inf(1)

// defaultDuration is how long a preset's rounds take to draw at the default
// pace: the paradox's 150 rounds over 9 s, so a class sees s=1 keep falling
// while the others flatten.
const defaultDuration = 9 * time.Second

// tickMsg advances the playback of the race with the id.
type tickMsg struct{ id int }

// race is a race shown by the run and cluster views: the stream of rounds,
// the table they fill, the facts of the data, and the playback — how many
// rounds are revealed, the cursor, the hidden racers and the zoom.
type race struct {
	c  *common
	sc experiment.Scenario
	stream
	table    *experiment.Table
	facts    experiment.Facts
	specs    []experiment.RacerSpec
	looks    []look
	state    runState
	failures []error
	fatal    string
	progress experiment.Progress
	finished []bool // racer i stopped (all rounds run, or diverged)
	// warnings are the rounds' warnings, in arrival order, each once.
	warnings []string
	// first is the round of the first row (0 when the family reports θ_0,
	// else 1): the view counts rows as positions 1, 2, …, which show rounds
	// first, first+1, ….
	first int

	pace     float64 // rounds per second revealed (maxPace: all at once)
	revealed int     // rounds revealed to the view
	frac     float64 // the part of a round due at the last tick
	last     time.Time
	paused   bool
	ticking  bool
	cursor   int             // the cursor's round; 0 follows the newest revealed round
	hidden   map[string]bool // hidden racers, by identity
	zoom     bool

	version int // bumped whenever what is drawn changes
}

// newRace prepares a race of a scenario; start begins it.
func newRace(c *common, sc experiment.Scenario) *race {
	r := &race{c: c, sc: sc, hidden: map[string]bool{}, facts: sc.Family.Facts(sc, nil)}
	r.reset()
	r.pace = c.pace
	if r.pace == 0 {
		r.pace = float64(sc.Rounds) / defaultDuration.Seconds()
	}
	return r
}

// reset empties the race for a (re)start of its scenario.
func (r *race) reset() {
	r.table = experiment.NewTable(r.sc)
	r.specs = nil
	for _, x := range r.sc.Racers() {
		r.specs = append(r.specs, x.Spec)
	}
	r.looks = looksOf(r.specs, r.sc.Family.Looks())
	r.facts = r.sc.Family.Facts(r.sc, nil)
	r.state, r.failures, r.fatal = statePreparing, nil, ""
	r.progress = experiment.Progress{}
	r.finished = make([]bool, len(r.specs))
	r.revealed, r.frac, r.cursor, r.first = 0, 0, 0, 1
	r.warnings = nil
	r.version++
}

// roundAt is the round shown at position pos.
func (r *race) roundAt(pos int) int { return r.first + pos - 1 }

// positions is how many rounds a full run shows.
func (r *race) positions() int { return r.sc.Rounds - r.first + 1 }

// start cancels the running computation and starts the scenario afresh.
func (r *race) start() tea.Cmd {
	ctx := r.begin(r.c.ctx, &r.c.ids)
	r.reset()
	r.last = r.c.now()
	r.ch = startStream(ctx, r.runID, r.c.runner, r.sc)
	// A tick of the old run may still be pending; it is dropped by its
	// run id, so the new run schedules its own.
	r.ticking = false
	return tea.Batch(r.read(), r.tick())
}

// read arms the next read of the stream.
func (r *race) read() tea.Cmd { return r.rearm(waitForStream, false) }

// tick schedules the next playback tick unless one is pending.
func (r *race) tick() tea.Cmd {
	if r.ticking {
		return nil
	}
	r.ticking = true
	id := r.runID
	return r.c.tick(frameInterval, func(time.Time) tea.Msg { return tickMsg{id} })
}

// update handles the race's messages; it reports whether it handled msg.
func (r *race) update(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case tickMsg:
		if msg.id != r.runID {
			return nil, true
		}
		r.ticking = false
		r.advance()
		if r.active() {
			return r.tick(), true
		}
		return nil, true
	case progressMsg:
		if msg.runID != r.runID {
			return nil, true
		}
		r.arrived()
		r.progress = msg.progress
		r.version++
		return r.read(), true
	case readyMsg:
		if msg.runID != r.runID {
			return nil, true
		}
		r.arrived()
		r.facts = msg.facts
		r.state = stateRunning
		if len(msg.facts.Notes) > 0 && r.c.notice == "" {
			r.c.notice = strings.Join(msg.facts.Notes, "; ")
		}
		r.version++
		return tea.Batch(r.read(), r.tick()), true
	case pointsMsg:
		if msg.runID != r.runID {
			return nil, true
		}
		r.arrived()
		for _, p := range msg.points {
			if p.Round.Index == 0 {
				r.first = 0
			}
			if w := p.Round.Warning; w != "" {
				r.warn(fmt.Sprintf("%s, round %d: %s", r.table.Labels[p.Racer], p.Round.Index, w))
			}
			r.table.Add(p)
		}
		r.state = stateRunning
		cmds := []tea.Cmd{r.tick()}
		if msg.tail != nil {
			c, _ := r.update(msg.tail)
			cmds = append(cmds, c)
		} else {
			cmds = append(cmds, r.read())
		}
		return tea.Batch(cmds...), true
	case racerDoneMsg:
		if msg.runID != r.runID {
			return nil, true
		}
		r.arrived()
		if msg.racer < len(r.finished) {
			r.finished[msg.racer] = true
		}
		if msg.err != nil {
			r.failures = append(r.failures, msg.err)
			r.version++
		}
		return tea.Batch(r.read(), r.tick()), true
	case runDoneMsg:
		if msg.runID != r.runID {
			return nil, true
		}
		r.ended()
		for i := range r.finished {
			r.finished[i] = true
		}
		if msg.err != nil {
			r.state, r.fatal = stateFailed, msg.err.Error()
		} else {
			r.state = stateDone
			r.failures = msg.res.Failed()
		}
		r.version++
		return r.tick(), true
	}
	return nil, false
}

// warn records a warning once.
func (r *race) warn(w string) {
	for _, x := range r.warnings {
		if x == w {
			return
		}
	}
	r.warnings = append(r.warnings, w)
	r.version++
}

// summary is the family's end-of-run summary, once the race is done and
// fully revealed.
func (r *race) summary() []string {
	if r.state != stateDone || r.revealed < r.available() {
		return nil
	}
	var out []string
	for _, x := range r.sc.Family.Summarize(r.sc, r.table) {
		out = append(out, x.Text)
	}
	return out
}

// available is the last round every racer still running has computed (the
// slowest racer): rounds beyond it are not revealed, so no racer's curve is
// drawn ahead of another's. Racers that stopped do not hold the others back.
func (r *race) available() int {
	avail, running := math.MaxInt, false
	most := 0
	for i, rs := range r.table.Rounds {
		most = max(most, len(rs))
		if !r.finished[i] {
			avail, running = min(avail, len(rs)), true
		}
	}
	if !running {
		return most
	}
	return avail
}

// advance reveals the rounds due since the last tick.
func (r *race) advance() {
	now := r.c.now()
	dt := now.Sub(r.last).Seconds()
	r.last = now
	avail := r.available()
	if r.paused || r.revealed >= avail {
		r.frac = 0
		return
	}
	before := r.revealed
	if math.IsInf(r.pace, 1) {
		r.revealed = avail
	} else {
		r.frac += r.pace * dt
		n := int(r.frac)
		r.frac -= float64(n)
		r.revealed = min(r.revealed+n, avail)
	}
	if r.revealed != before {
		r.version++
	}
}

// active reports whether the playback still needs ticks.
func (r *race) active() bool {
	if r.state == statePreparing {
		return true
	}
	if r.paused {
		return false
	}
	return r.state == stateRunning || r.revealed < r.available()
}

// togglePause pauses or resumes the reveal.
func (r *race) togglePause() tea.Cmd {
	r.paused = !r.paused
	r.last = r.c.now()
	r.version++
	return r.tick()
}

// stepOne reveals exactly one more round while paused.
func (r *race) stepOne() tea.Cmd {
	if !r.paused {
		r.paused = true
	}
	if r.revealed < r.available() {
		r.revealed++
		r.version++
	} else {
		r.c.notice = "no further round computed yet"
	}
	return nil
}

// setPace moves the pace one rung down or up the ladder.
func (r *race) setPace(up bool) tea.Cmd {
	r.pace = experiment.StepLadder(paceLadder, r.pace, up)
	r.c.pace = r.pace
	r.version++
	return r.tick()
}

// moveCursor moves the round cursor; to the newest revealed round it
// follows the run again.
func (r *race) moveCursor(to int) {
	if r.revealed == 0 {
		return
	}
	to = min(max(to, 1), r.revealed)
	r.cursor = to
	if to == r.revealed {
		r.cursor = 0
	}
	r.version++
}

// cursorRound is the round the readout names: the cursor's, or the newest
// revealed one.
func (r *race) cursorRound() int {
	if r.cursor > 0 {
		return r.cursor
	}
	return r.revealed
}

// raceActions are the keys of the race views: playback, cursor, racers,
// restarts, and the live knobs of the scenario.
func (r *race) raceActions(restart func(experiment.Scenario) tea.Cmd) []action {
	out := []action{
		{keys: []string{" "}, help: "pause / resume the playback", hint: "pause", group: "playback", run: r.togglePause},
		{keys: []string{"."}, help: "one more round (pauses)", group: "playback", run: r.stepOne},
		{keys: []string{"<", ","}, label: "< >", help: "playback slower / faster (" + paceNames() + ")", hint: "pace", group: "playback",
			run: func() tea.Cmd { return r.setPace(false) }},
		{keys: []string{">"}, help: "", group: "playback", run: func() tea.Cmd { return r.setPace(true) }},
		{keys: []string{"left"}, label: "← →", help: "round cursor back / forward", hint: "cursor", group: "playback",
			run: func() tea.Cmd { r.moveCursor(r.cursorRound() - 1); return nil }},
		{keys: []string{"right"}, help: "", group: "playback", run: func() tea.Cmd { r.moveCursor(r.cursorRound() + 1); return nil }},
		{keys: []string{"home"}, label: "home end", help: "cursor to the first / newest round", group: "playback",
			run: func() tea.Cmd { r.moveCursor(1); return nil }},
		{keys: []string{"end"}, help: "", group: "playback", run: func() tea.Cmd { r.moveCursor(r.revealed); return nil }},
	}
	for i := 0; i < min(len(r.specs), 9); i++ {
		a := action{keys: []string{strconv.Itoa(i + 1)}, group: "racers", run: func() tea.Cmd { r.toggleRacer(i); return nil }}
		if i == 0 && len(r.specs) > 1 {
			a.label, a.help = "1-"+strconv.Itoa(min(len(r.specs), 9)), "show / hide racer i (hidden racers dim in the legend)"
		}
		out = append(out, a)
	}
	out = append(out,
		action{keys: []string{"r"}, help: "restart", hint: "restart", group: "run", run: func() tea.Cmd { return restart(r.sc) }},
		action{keys: []string{"n"}, help: "new seed", group: "run", run: func() tea.Cmd {
			sc := r.sc
			sc.Seed++
			return restart(sc)
		}},
		action{keys: []string{"e"}, help: "export the rounds revealed so far as CSV", group: "run", run: r.export},
	)
	// The scenario's live knobs, each with the keys its family gave it.
	for _, k := range r.sc.Knobs() {
		if k.Live == nil {
			continue
		}
		live := *k.Live
		if slicesEqual(live.Down, live.Up) { // one key cycles the values
			out = append(out, action{keys: live.Down, help: live.Desc, hint: live.Name, group: "parameters",
				run: func() tea.Cmd { return r.stepKnob(live, true, restart) }})
			continue
		}
		label := live.Down[0] + " " + live.Up[0]
		out = append(out,
			action{keys: live.Down, label: label, help: live.Desc + " down / up", hint: live.Name, group: "parameters",
				run: func() tea.Cmd { return r.stepKnob(live, false, restart) }},
			action{keys: live.Up, group: "parameters", run: func() tea.Cmd { return r.stepKnob(live, true, restart) }})
	}
	return out
}

// stepKnob moves a live knob and restarts, or keeps the scenario and says
// why the step changes nothing.
func (r *race) stepKnob(l experiment.Live, up bool, restart func(experiment.Scenario) tea.Cmd) tea.Cmd {
	sc, err := l.Step(r.sc, up)
	if err != nil {
		r.sc = sc
		r.c.notice = err.Error()
		r.version++
		return nil
	}
	if err := sc.Validate(); err != nil {
		r.c.notice = err.Error()
		r.version++
		return nil
	}
	return restart(sc)
}

func paceNames() string {
	var parts []string
	for _, p := range paceLadder {
		parts = append(parts, paceName(p))
	}
	return strings.Join(parts, ", ") + " rounds/s"
}

func paceName(p float64) string {
	switch {
	case math.IsInf(p, 1):
		return "max"
	case p == math.Trunc(p):
		return strconv.FormatFloat(p, 'f', -1, 64)
	}
	return strconv.FormatFloat(p, 'g', 3, 64)
}

// toggleRacer shows or hides racer i.
func (r *race) toggleRacer(i int) {
	if i < 0 || i >= len(r.specs) {
		return
	}
	id := r.specs[i].String()
	r.hidden[id] = !r.hidden[id]
	r.version++
}

// visible reports whether racer i is shown.
func (r *race) visible(i int) bool { return !r.hidden[r.specs[i].String()] }

// export writes the rounds revealed so far as CSV, named after the preset,
// the seed and the keys that differ from the preset, beside a JSON sidecar
// with the command line that reproduces them, the version and every key;
// it never overwrites a file, and an export before the end says it is
// partial.
func (r *race) export() tea.Cmd {
	t := r.table.Snapshot()
	for i := range t.Rounds {
		if len(t.Rounds[i]) > r.revealed {
			t.Rounds[i] = t.Rounds[i][:r.revealed]
		}
	}
	partial := r.state != stateDone || r.revealed < r.available()
	return exportWith(r.c, r.sc, t.Len(), partial, r.revealed, func(w io.Writer) error { return t.Write(w, experiment.CSV) })
}

// metricIndex returns the column of a metric in the race's table.
func (r *race) metricIndex(name string) int { return experiment.MetricIndex(r.table.Metrics, name) }

// values returns racer i's metric m at the revealed positions (NaN where
// it has none).
func (r *race) values(i, m int) []float64 {
	out := make([]float64, r.revealed)
	rs := r.table.Rounds[i]
	for k := range out {
		out[k] = math.NaN()
		if k < len(rs) {
			out[k] = rs[k].Value(m)
		}
	}
	return out
}

// valueAt returns racer i's metric m at position pos, and whether it has
// one.
func (r *race) valueAt(i, m, pos int) (float64, bool) {
	rs := r.table.Rounds[i]
	if pos >= 1 && pos <= len(rs) {
		v := rs[pos-1].Value(m)
		return v, !math.IsNaN(v)
	}
	return math.NaN(), false
}

// title is the first line: the preset and the scenario's summary.
func (r *race) title(w int) string {
	st := r.c.styles
	return ansi.Truncate(st.title.Render("fedscope · "+r.sc.Preset)+"  "+st.summary.Render(r.facts.Summary), w, "…")
}

// statusLine says where the race is: the rounds revealed (counted for the
// slowest racer), the pace, the state and the seed.
func (r *race) statusLine(w int) string {
	st := r.c.styles
	var parts []string
	switch {
	case r.state == statePreparing:
		p := r.progress
		s := "preparing data"
		if p.Stage != "" {
			s += ": " + p.Stage
			if p.Total > 0 {
				s += fmt.Sprintf(" %d/%d", p.Done, p.Total)
			}
		}
		parts = append(parts, s)
	case r.revealed == 0:
		parts = append(parts, fmt.Sprintf("round –/%d", r.sc.Rounds))
	default:
		parts = append(parts, fmt.Sprintf("round %d/%d", r.roundAt(r.revealed), r.sc.Rounds))
		if r.cursor > 0 {
			parts = append(parts, fmt.Sprintf("cursor %d", r.roundAt(r.cursor)))
		}
	}
	parts = append(parts, paceName(r.pace)+" rounds/s")
	state := ""
	switch {
	case r.state == stateFailed:
		state = "failed"
	case r.paused:
		state = "paused"
	case r.state == statePreparing:
	case r.revealed < r.available():
		state = "playing"
	case r.state == stateRunning:
		state = "computing"
	case len(r.failures) > 0:
		state = "done, " + strconv.Itoa(len(r.failures)) + " diverged"
	default:
		state = "done"
	}
	if state != "" {
		parts = append(parts, state)
	}
	parts = append(parts, "seed "+strconv.FormatUint(r.sc.Seed, 10))
	return ansi.Truncate(st.status.Render(strings.Join(parts, " · ")), w, "…")
}

// messageLines are the lines under the status: the failures (each a
// sentence, wrapped), the warnings, a notice, or the hint bar.
func (r *race) messageLines(w int, acts []action) []string {
	st := r.c.styles
	var msgs []string
	if r.fatal != "" {
		msgs = append(msgs, st.errorLine.Render(r.fatal))
	}
	if len(r.failures) > 0 {
		msgs = append(msgs, st.errorLine.Render(r.failures[0].Error()))
	}
	if len(r.failures) > 1 {
		also := make([]string, len(r.failures)-1)
		for i, f := range r.failures[1:] {
			also[i] = divergedBrief(f)
		}
		msgs = append(msgs, st.errorLine.Render("also diverged: "+strings.Join(also, ", ")))
	}
	if r.c.notice != "" {
		msgs = append(msgs, st.notice.Render(r.c.notice))
	}
	for _, warn := range append(append([]string(nil), r.facts.Warnings...), r.warnings...) {
		msgs = append(msgs, st.notice.Render("warning: "+warn))
	}
	if s := r.summary(); len(s) > 0 {
		msgs = append(msgs, st.muted.Render("end of run: "+strings.Join(s, "; ")))
	}
	if len(msgs) == 0 {
		return []string{hintBar(st, acts, w)}
	}
	return wrapLines(msgs, w, 3)
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

// stoppedAt returns the last position racer i computed, when it stopped
// early.
func (r *race) stoppedAt(i int) (int, bool) {
	if !r.finished[i] {
		return 0, false
	}
	n := len(r.table.Rounds[i])
	return n, n < r.positions()
}

// readout is the legend: for every racer, its glyph, its label and its
// values at the cursor's round (3 significant digits), as many racers per
// line as fit; a hidden racer is dimmed, and a name is never cut (it wraps).
func (r *race) readout(w int, metrics []int) []string {
	st := r.c.styles
	t := r.cursorRound()
	var entries []string
	for i, label := range r.table.Labels {
		l := r.looks[i]
		head := string(l.glyph) + " " + strconv.Itoa(i+1) + " " + label
		var vals []string
		// A racer that stopped early (FedLRGD's stop rule) reads its last
		// round's values: its curve may be too short to see.
		pos, stop := t, ""
		if at, stopped := r.stoppedAt(i); stopped && t > at {
			pos, stop = at, fmt.Sprintf("(stopped at round %d)", r.roundAt(at))
		}
		for _, m := range metrics {
			if m < 0 {
				continue
			}
			name := r.table.Metrics[m].Label()
			if v, ok := r.valueAt(i, m, pos); ok {
				vals = append(vals, name+" "+formatValue(v))
			} else {
				vals = append(vals, name+" –")
			}
		}
		if stop != "" {
			vals = append(vals, stop)
		}
		text := head
		if len(vals) > 0 {
			text += "  " + strings.Join(vals, "  ")
		}
		if !r.visible(i) {
			entries = append(entries, st.dim.Render(text+" (hidden)"))
			continue
		}
		entries = append(entries, st.paint(head, st.racerColor(l))+strings.TrimPrefix(text, head))
	}
	return packEntries(entries, w)
}

// packEntries lays legend entries out in as many equal columns as fit the
// width; an entry longer than a line wraps onto the next.
func packEntries(entries []string, w int) []string {
	widest := 0
	for _, e := range entries {
		widest = max(widest, ansi.StringWidth(e))
	}
	cols := max(1, min(len(entries), (w+3)/(widest+3)))
	var lines []string
	for i := 0; i < len(entries); i += cols {
		var b strings.Builder
		for j := i; j < min(i+cols, len(entries)); j++ {
			if j > i {
				b.WriteString("   ")
			}
			e := entries[j]
			if j < min(i+cols, len(entries))-1 {
				e = padRight(e, widest)
			}
			b.WriteString(e)
		}
		lines = append(lines, strings.Split(ansi.Wrap(b.String(), w, " "), "\n")...)
	}
	return lines
}

// formatValue writes a value with 3 significant digits: 0.0448, 8.31e-3, 12.5.
func formatValue(v float64) string {
	if v == 0 {
		return "0"
	}
	switch a := math.Abs(v); {
	case a >= 1e-3 && a < 1000:
		// Three significant digits, trailing zeros kept (0.0150, 1.20):
		// the precision shown is the precision meant.
		s := strconv.FormatFloat(v, 'g', 3, 64)
		if !strings.ContainsAny(s, "e") {
			digits := strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(s), "0")
			if n := 3 - len(digits); n > 0 {
				if !strings.Contains(s, ".") {
					s += "."
				}
				s += strings.Repeat("0", n)
			}
		}
		return s
	case a >= 1000 && a < 1e7:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	s := strconv.FormatFloat(v, 'e', 2, 64)
	s = strings.Replace(strings.Replace(s, "e-0", "e-", 1), "e+0", "e+", 1)
	return s
}
