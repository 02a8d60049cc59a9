package tui

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

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
// the table they fill, the facts of the data, and the playback state
// machine — how many rounds are revealed, paused or playing, where it
// holds, the cursor, the hidden racers and the y mode. Drawing it is the
// views' business (runview.go, legend.go, status.go).
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
	// warnings are the rounds' warnings, each once, in the order of the
	// racers and then of the rounds (racers run concurrently: arrival order
	// would differ between runs).
	warnings []raceWarning
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
	ymode    yMode           // how the y axes choose their range (z)
	// stopAt is the round where the playback holds and pauses (a lesson
	// step's stop), −1 for none; rush reveals at once up to it (a step gone
	// back to is drawn at its stop).
	stopAt int
	rush   bool
	// seek is a round the cursor is to read as soon as it is computed
	// (--cursor); 0 for none.
	seek int

	version int // bumped whenever what is drawn changes
}

// newRace prepares a race of a scenario; start begins it.
func newRace(c *common, sc experiment.Scenario) *race {
	r := &race{c: c, sc: sc, hidden: map[string]bool{}, facts: sc.Family.Facts(sc, nil), paused: c.paused, stopAt: -1}
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
// Messages of an older run (another id) are dropped.
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
		if msg.runID == r.runID {
			r.arrived()
			r.progress = msg.progress
			r.version++
			return r.read(), true
		}
	case readyMsg:
		if msg.runID == r.runID {
			return r.ready(msg.facts), true
		}
	case pointsMsg:
		if msg.runID == r.runID {
			return r.points(msg), true
		}
	case racerDoneMsg:
		if msg.runID == r.runID {
			return r.racerDone(msg.racer, msg.err), true
		}
	case runDoneMsg:
		if msg.runID == r.runID {
			return r.done(msg.res, msg.err), true
		}
	default:
		return nil, false
	}
	return nil, true
}

// ready takes the facts of the prepared data; their notes are shown once.
func (r *race) ready(f experiment.Facts) tea.Cmd {
	r.arrived()
	r.facts = f
	r.state = stateRunning
	if len(f.Notes) > 0 {
		r.c.notes = strings.Join(f.Notes, "; ")
	}
	r.version++
	return tea.Batch(r.read(), r.tick())
}

// points records a batch of rounds (and the message that ended the batch).
func (r *race) points(msg pointsMsg) tea.Cmd {
	r.arrived()
	for _, p := range msg.points {
		if p.Round.Index == 0 {
			r.first = 0
		}
		if w := p.Round.Warning; w != "" {
			r.warn(raceWarning{p.Racer, p.Round.Index, fmt.Sprintf("%s, round %d: %s", r.table.Labels[p.Racer], p.Round.Index, w)})
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
	return tea.Batch(cmds...)
}

// racerDone notes that a racer stopped (all rounds run, or failed).
func (r *race) racerDone(racer int, err error) tea.Cmd {
	r.arrived()
	if racer < len(r.finished) {
		r.finished[racer] = true
	}
	if err != nil {
		r.failures = append(r.failures, err)
		r.version++
	}
	return tea.Batch(r.read(), r.tick())
}

// done ends the run: every racer stopped; the failures in racer order.
func (r *race) done(res experiment.Result, err error) tea.Cmd {
	r.ended()
	for i := range r.finished {
		r.finished[i] = true
	}
	if err != nil {
		r.state, r.fatal = stateFailed, err.Error()
	} else {
		r.state = stateDone
		r.failures = res.Failed()
	}
	r.version++
	return r.tick()
}

// raceWarning is a round's warning and where it came from.
type raceWarning struct {
	racer, round int
	text         string
}

// warn records a warning once, in racer and round order.
func (r *race) warn(w raceWarning) {
	for _, x := range r.warnings {
		if x.text == w.text {
			return
		}
	}
	i := len(r.warnings)
	for i > 0 && (r.warnings[i-1].racer > w.racer || r.warnings[i-1].racer == w.racer && r.warnings[i-1].round > w.round) {
		i--
	}
	r.warnings = slices.Insert(r.warnings, i, w)
	r.version++
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

// advance reveals the rounds due since the last tick, up to the slowest
// racer and the stop; reaching the stop pauses. Round 0 is shown as soon as
// it exists, even paused: a paused screen is never blank.
func (r *race) advance() {
	now := r.c.now()
	dt := now.Sub(r.last).Seconds()
	r.last = now
	avail := r.available()
	before := r.revealed
	if r.revealed == 0 && r.first == 0 && avail > 0 {
		r.revealed = 1
	}
	if r.seek > 0 && avail > 0 {
		pos := min(max(r.seek-r.first+1, 1), r.positions())
		r.revealed = max(r.revealed, min(pos, avail))
		if r.revealed >= pos {
			r.cursor, r.seek = pos, 0
			if r.cursor == r.revealed && !r.paused {
				r.cursor = 0
			}
		}
	}
	limit := avail
	if stop, ok := r.stopPos(); ok {
		limit = min(limit, stop)
	}
	switch {
	case r.paused || r.revealed >= limit:
		r.frac = 0
	case math.IsInf(r.pace, 1) || r.rush:
		r.revealed = limit
	default:
		r.frac += r.pace * dt
		n := int(r.frac)
		r.frac -= float64(n)
		r.revealed = min(r.revealed+n, limit)
	}
	if r.holding() && !r.paused {
		r.paused, r.rush = true, false
	}
	if r.revealed != before {
		r.version++
	}
}

// stopPos is the position of the stop round, if there is one.
func (r *race) stopPos() (int, bool) {
	if r.stopAt < 0 {
		return 0, false
	}
	return min(max(r.stopAt-r.first+1, 1), r.positions()), true
}

// holding reports whether the playback stands at its stop.
func (r *race) holding() bool {
	stop, ok := r.stopPos()
	return ok && r.revealed >= stop
}

// playTo plays on from where the playback is to round stop (−1: the last)
// and holds there.
func (r *race) playTo(stop int) tea.Cmd {
	if stop < 0 {
		stop = r.sc.Rounds
	}
	r.stopAt, r.paused, r.rush = stop, false, false
	r.c.paused = false
	r.last = r.c.now()
	r.version++
	return r.tick()
}

// jumpTo shows the run at round stop (−1: the last) at once, paused there:
// rounds beyond it are hidden again, rounds before it revealed as soon as
// they are computed.
func (r *race) jumpTo(stop int) tea.Cmd {
	if stop < 0 {
		stop = r.sc.Rounds
	}
	r.stopAt = stop
	if pos, _ := r.stopPos(); r.revealed > pos {
		r.revealed = pos
	}
	r.cursor = 0
	r.paused, r.rush = false, true
	r.version++
	return r.tick()
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

// togglePause pauses or resumes the reveal; resumed at a stop, the
// playback goes on past it.
func (r *race) togglePause() tea.Cmd {
	r.paused = !r.paused
	r.c.paused = r.paused
	if !r.paused && r.holding() {
		r.stopAt = -1
	}
	r.last = r.c.now()
	r.version++
	return r.tick()
}

// stepOne reveals exactly one more round and pauses, or says why it cannot.
func (r *race) stepOne() tea.Cmd {
	r.paused = true
	r.version++
	switch {
	case r.revealed >= r.positions():
		r.c.notice = fmt.Sprintf(". steps one round: the run ends at round %d (r restarts, ← → move the cursor)", r.roundAt(r.positions()))
	case r.revealed >= r.available():
		r.c.notice = fmt.Sprintf(". steps one round: round %d is still being computed", r.roundAt(r.revealed+1))
	default:
		if r.holding() {
			r.stopAt = -1
		}
		r.revealed++
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
