package tui

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/tui/chart"
)

// view is one screen of the explorer: the run view (charts), the cluster
// view (assignment grids) and the sweep view. The root model routes every
// message to the active view and asks it what to draw and which keys act.
type view interface {
	// update handles the view's own messages (its stream, its ticks).
	update(msg tea.Msg) tea.Cmd
	// setSize tells the view the terminal size.
	setSize(w, h int)
	// view draws the whole screen; it is cached until something changes.
	view() string
	// help is the view's explanation and the keys that act on it now.
	help() (intro string, actions []action)
	// start begins the view's computation.
	start() tea.Cmd
	// close cancels it.
	close()
	// scenario is what the view shows.
	scenario() experiment.Scenario
	// playback is the race the view plays, nil for a sweep.
	playback() *race
	// messages are the view's sentences for the user (failures, the last
	// notice, warnings): under the charts, and all of them in the help.
	messages() []string
}

// common is what every view shares: the families, the engine, the clock,
// the styles and the terminal size.
type common struct {
	ctx     context.Context
	catalog *experiment.Catalog
	engine  *experiment.Engine
	runner  Runner
	sweeper SweepRunner
	out     io.Writer // the terminal, for the clipboard's OSC 52
	now     func() time.Time
	profile termenv.Profile
	theme   int
	styles  styles
	width   int
	height  int
	logY    bool
	pace    float64    // chosen playback pace in rounds/s; 0 = the preset's default; maxPace = as fast as computed
	ids     int        // the last run id handed out (ids are unique across views)
	notice  string     // a sentence for the user, until the next key
	notes   string     // the notes of the data just prepared, until the next key
	version int        // bumped by anything shared that changes what is drawn
	theory  bool       // draw the papers' predictions (t)
	story   bool       // show the story: beside the charts, or as a caption (i)
	paused  bool       // the playback starts paused (--paused), and a new view keeps the pause
	lesson  *lessonRun // the lesson being taught, if any
	view    *View      // the view state the explorer opens with (--hide, --y, …)
	release string     // the program's version, for exports
	// tick schedules a message after a delay: tea.Tick, or a fake in tests
	// (which deliver ticks themselves, with a fake clock).
	tick func(d time.Duration, f func(time.Time) tea.Msg) tea.Cmd
	// exitLine receives, when the explorer quits, the command line of what
	// was on screen if it differs from the defaults it started with.
	exitLine func(string)
	start    string // the command line of the starting scenario
	// startTheme is the theme the explorer opened with: y names the theme
	// only when T changed it.
	startTheme int
	// keyWhere says, for every key some view binds, what it does there
	// (built from the catalog when first needed).
	keyWhere map[string]string
	// globals are the keys of every view, for the views' status bars (set
	// by the root model before each drawing).
	globals []action
}

// frameInterval caps redraws at about 30 per second however fast the
// simulation streams, and paces the reveal of rounds.
const frameInterval = 33 * time.Millisecond

// Minimum terminal size for the charts; smaller terminals get a notice.
const (
	minWidth  = 50
	minHeight = 14
)

// screen is an overlay over the active view.
type screen int

const (
	screenView screen = iota
	screenHelp
	screenAlgorithms
	screenPresets
	screenData
)

// Model is the root Bubble Tea model: it owns the active view and the
// overlays (help, pickers, the data prompt) and routes keys and messages.
type Model struct {
	c      *common
	v      view
	screen screen
	picker picker
	prompt prompt
	// helpTop is the first line of the help shown: the help scrolls when
	// it is taller than the terminal.
	helpTop int
}

// Option configures a Model.
type Option func(*Model)

// WithRunner replaces the simulation (tests use fakes).
func WithRunner(r Runner) Option { return func(m *Model) { m.c.runner = r } }

// WithSweepRunner replaces the sweep engine (tests use fakes).
func WithSweepRunner(r SweepRunner) Option { return func(m *Model) { m.c.sweeper = r } }

// WithClock replaces time.Now (tests drive the playback with a fake clock).
func WithClock(now func() time.Time) Option { return func(m *Model) { m.c.now = now } }

// WithProfile sets the colour profile (tests pin termenv.Ascii).
func WithProfile(p termenv.Profile) Option { return func(m *Model) { m.c.profile = p } }

// WithTicker replaces tea.Tick (tests deliver the ticks themselves).
func WithTicker(t func(time.Duration, func(time.Time) tea.Msg) tea.Cmd) Option {
	return func(m *Model) { m.c.tick = t }
}

// WithTheme selects the theme by name (dark, light or mono).
func WithTheme(name string) Option {
	return func(m *Model) {
		for i, t := range themes {
			if t.name == name {
				m.c.theme = i
			}
		}
	}
}

// WithOutput is where the clipboard's OSC 52 sequence goes (the
// terminal's output; tests discard it).
func WithOutput(w io.Writer) Option { return func(m *Model) { m.c.out = w } }

// WithVersion records the program's version for the exports' sidecars.
func WithVersion(v string) Option { return func(m *Model) { m.c.release = v } }

// WithExitLine asks for the command line of the final state when it
// differs from the starting one (printed by the caller after the explorer
// closes).
func WithExitLine(f func(string)) Option { return func(m *Model) { m.c.exitLine = f } }

// WithView opens the explorer with a view state (what --paused, --hide,
// --y, --linear, --cursor, --theme and --pace say).
func WithView(v View) Option {
	return func(m *Model) {
		m.c.view = &v
		m.c.paused = v.Paused
		if v.Pace != 0 {
			m.c.pace = v.Pace
		}
		WithTheme(v.Theme)(m)
	}
}

// WithLesson opens the explorer on a lesson at step (1-based), paused at
// the start of the step.
func WithLesson(l *Lesson, step int) Option {
	return func(m *Model) {
		if l == nil || len(l.Steps) == 0 {
			return
		}
		m.c.lesson = &lessonRun{lesson: l, step: min(max(step, 1), len(l.Steps)) - 1}
	}
}

// WithNotice opens the explorer with a sentence in the messages (what the
// command line set that changes nothing), until the first key.
func WithNotice(text string) Option { return func(m *Model) { m.c.notice = text } }

// WithPace sets the playback pace in rounds per second (maxPace: as fast as
// the rounds are computed).
func WithPace(p float64) Option { return func(m *Model) { m.c.pace = p } }

// NewModel returns the explorer on a scenario; Init starts it.
func NewModel(ctx context.Context, cat *experiment.Catalog, eng *experiment.Engine, sc experiment.Scenario, opts ...Option) *Model {
	c := &common{ctx: ctx, catalog: cat, engine: eng, runner: eng.Run, sweeper: experiment.RunSweep, now: time.Now, tick: tea.Tick, out: os.Stdout,
		profile: defaultProfile(), width: 80, height: 24, logY: true, theory: true, story: true, theme: -1}
	m := &Model{c: c}
	for _, o := range opts {
		o(m)
	}
	if c.theme < 0 {
		c.theme = defaultTheme(c.profile)
	}
	c.startTheme = c.theme
	c.styles = newStyles(themes[c.theme], c.profile)
	if c.lesson != nil {
		sc = c.lesson.current().Scenario
		c.paused = true
	}
	m.v = newView(c, sc)
	if c.lesson != nil {
		m.applyView(c.lesson.current().View, false)
		c.paused = true
		if r := m.v.playback(); r != nil {
			r.paused, r.stopAt = true, c.lesson.current().Stop
			if r.stopAt < 0 {
				r.stopAt = r.sc.Rounds
			}
		}
	} else if c.view != nil {
		m.applyView(*c.view, false)
	}
	c.start = m.commandLine()
	return m
}

// defaultProfile is the terminal's colour profile (Ascii under NO_COLOR).
func defaultProfile() termenv.Profile { return termenv.EnvColorProfile() }

// defaultTheme is mono without colour, else dark or light after the
// terminal's background (lipgloss asks the terminal; dark when it cannot
// tell).
func defaultTheme(p termenv.Profile) int {
	switch {
	case p == termenv.Ascii:
		return 2
	case lipgloss.HasDarkBackground():
		return 0
	}
	return 1
}

// newView returns the view that shows a scenario.
func newView(c *common, sc experiment.Scenario) view {
	if sc.IsSweep() {
		return newSweepView(c, sc)
	}
	if sc.Family.Facts(sc, nil).Clusters != nil {
		return newClusterView(c, sc)
	}
	return newRunView(c, sc)
}

// Init starts the view's computation.
func (m *Model) Init() tea.Cmd { return m.v.start() }

// Close cancels the active computation; Run defers it.
func (m *Model) Close() { m.v.close() }

// open switches to a scenario: a new view of the right kind, started at once.
func (m *Model) open(sc experiment.Scenario) tea.Cmd {
	if err := sc.Validate(); err != nil {
		m.c.notice = err.Error()
		return nil
	}
	m.v.close()
	m.v = newView(m.c, sc)
	m.v.setSize(m.c.width, m.c.height)
	return m.v.start()
}

// Update handles quit and the overlays first, then sizes, then the view's
// own messages, then the keys of the view.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		if msg.String() == "ctrl+c" {
			return m, m.quit()
		}
		// Keys typed faster than the terminal is read arrive as one
		// message with several runes: each is a key.
		if msg.Type == tea.KeyRunes && !msg.Paste && len(msg.Runes) > 1 && m.screen != screenData {
			var cmds []tea.Cmd
			for _, r := range msg.Runes {
				cmds = append(cmds, m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}}))
			}
			return m, tea.Batch(cmds...)
		}
		return m, m.key(msg)
	case tea.WindowSizeMsg:
		m.c.width, m.c.height = msg.Width, msg.Height
		m.v.setSize(msg.Width, msg.Height)
		return m, nil
	case exportedMsg:
		m.c.notice = msg.notice()
		m.c.version++
		return m, nil
	}
	return m, m.v.update(msg)
}

// key dispatches a key: the overlay's, the global ones, then the view's.
func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	m.c.version++
	switch m.screen {
	case screenHelp:
		switch k := msg.String(); k {
		case "?", "esc", "q":
			m.screen, m.helpTop = screenView, 0
		case "down", "j":
			m.helpTop++
		case "up", "k":
			m.helpTop--
		case "pgdown", " ", "f":
			m.helpTop += max(m.c.height-2, 1)
		case "pgup", "b":
			m.helpTop -= max(m.c.height-2, 1)
		case "home", "g":
			m.helpTop = 0
		case "end", "G":
			m.helpTop = 1 << 30
		}
		m.helpTop = max(m.helpTop, 0) // the top end is clamped when drawn
		return nil
	case screenAlgorithms, screenPresets:
		return m.pick(msg)
	case screenData:
		return m.promptKey(msg)
	}
	m.c.notice, m.c.notes = "", ""
	k := msg.String()
	if a, ok := find(m.actions(), k); ok {
		return a.run()
	}
	if what, ok := m.keyElsewhere(k); ok {
		m.c.notice = fmt.Sprintf("%s does nothing on this view (elsewhere: %s); ? lists the keys that act here", keyName(k), what)
	}
	return nil
}

// actions are the keys that act now: the view's, then the global ones.
func (m *Model) actions() []action {
	_, acts := m.v.help()
	return append(acts, m.globalActions()...)
}

// globalActions are the keys of every view.
func (m *Model) globalActions() []action {
	sc := m.v.scenario()
	out := []action{
		{keys: []string{"p"}, help: "presets", group: "explore", run: func() tea.Cmd {
			m.screen, m.picker = screenPresets, presetPicker(m.c.catalog, sc.Preset)
			return nil
		}},
	}
	if _, ok := sc.Knob("algorithms"); ok && !sc.IsSweep() {
		out = append(out, action{keys: []string{"a"}, help: "choose the racers", group: "racers", run: func() tea.Cmd {
			m.screen, m.picker = screenAlgorithms, algorithmPicker(sc)
			return nil
		}})
	}
	if k, ok := m.c.catalog.Opener("data"); ok && k.Prompt != nil {
		out = append(out, action{keys: []string{"d"}, help: "race on a data file (" + firstSentence(k.Help) + ")", group: "explore",
			run: func() tea.Cmd {
				m.screen, m.prompt = screenData, newPrompt(sc.Get("data"), k.Prompt)
				return nil
			}})
	}
	out = append(out, m.lessonActions()...)
	return append(out,
		action{keys: []string{"?"}, help: "help: every key of this view, the story, the messages", hint: "keys", group: "explore", run: func() tea.Cmd {
			m.screen = screenHelp
			return nil
		}},
		action{keys: []string{"q"}, help: "quit", hint: "quit", group: "explore", run: m.quit},
		action{keys: []string{"y"}, help: "this state as a command line (copied to the clipboard where the terminal allows)", group: "explore",
			run: m.command},
		action{keys: []string{"T"}, help: "next theme: dark → light → mono", group: "explore", run: m.nextTheme},
	)
}

// quit closes the explorer, handing the final command line to exitLine
// when it differs from the starting one.
func (m *Model) quit() tea.Cmd {
	m.Close()
	if line := m.commandLine(); m.c.exitLine != nil && line != m.c.start {
		m.c.exitLine(line)
	}
	return tea.Quit
}

// command shows the command line that reproduces the screen and copies it
// to the clipboard with OSC 52.
func (m *Model) command() tea.Cmd {
	line := m.commandLine()
	// On screen the line wraps between arguments, never inside one: the
	// spaces inside an argument are drawn unbreakable.
	m.c.notice = unbreakable(line)
	out := m.c.out
	return func() tea.Msg {
		termenv.NewOutput(out).Copy(line)
		return nil
	}
}

// commandLine is the fedscope command that reproduces the screen: the
// lesson and its step while the screen shows the step's scenario, else the
// scenario; then the view's state (theme, pace, hidden racers, y range,
// scale, cursor, pause).
func (m *Model) commandLine() string {
	sc := m.v.scenario()
	var args []string
	if l := m.c.lesson; l != nil && sameScenario(m.c, sc, l.current().Scenario) {
		args = []string{"lesson", l.lesson.Name, "--step", strconv.Itoa(l.step + 1)}
	} else {
		args = m.c.catalog.Command(sc)
	}
	return "fedscope " + experiment.Quote(append(args, m.viewFlags()...))
}

// unbreakable replaces the spaces inside the quoted arguments of a command
// line with no-break spaces, so that wrapping breaks only between
// arguments.
func unbreakable(line string) string {
	var b strings.Builder
	quoted := false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted = !quoted
		case r == ' ' && quoted:
			r = '\u00a0'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// keyElsewhere says what key k does on the views where it acts (built once
// from every preset's views, without computing anything).
func (m *Model) keyElsewhere(k string) (string, bool) {
	if m.c.keyWhere == nil {
		m.c.keyWhere = map[string]string{}
		for _, p := range m.c.catalog.Presets() {
			sc := p.Scenario()
			probe := &Model{c: &common{catalog: m.c.catalog, styles: m.c.styles, width: 80, height: 24, logY: true, theory: true, story: true}}
			probe.v = newView(probe.c, sc)
			help := ""
			for _, a := range probe.actions() {
				if a.help != "" {
					help = a.help // a pair's second key shares the first's help
				}
				for _, key := range a.keys {
					if _, ok := m.c.keyWhere[key]; !ok && help != "" {
						m.c.keyWhere[key] = help + ", on " + p.Name
					}
				}
			}
		}
	}
	what, ok := m.c.keyWhere[k]
	return what, ok
}

// nextTheme cycles the themes.
func (m *Model) nextTheme() tea.Cmd {
	m.c.theme = (m.c.theme + 1) % len(themes)
	m.c.styles = newStyles(themes[m.c.theme], m.c.profile)
	m.c.notice = "theme: " + themes[m.c.theme].name
	return nil
}

func firstSentence(s string) string {
	if i := strings.IndexAny(s, "(;"); i > 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

// pick drives the pickers.
func (m *Model) pick(msg tea.KeyMsg) tea.Cmd {
	var res pickerResult
	m.picker, res = m.picker.update(msg)
	switch res {
	case pickerCancelled:
		m.screen = screenView
	case pickerApplied:
		m.screen = screenView
		if m.picker.multi {
			sc := m.v.scenario()
			var specs []string
			for _, it := range m.picker.checked() {
				specs = append(specs, it.racer.String())
			}
			if err := sc.Set("algorithms", strings.Join(specs, ",")); err != nil {
				m.c.notice = err.Error()
				return nil
			}
			return m.open(sc)
		}
		p, err := m.c.catalog.Lookup(m.picker.items[m.picker.cursor].preset)
		if err != nil {
			m.c.notice = err.Error()
			return nil
		}
		return m.open(p.Scenario())
	}
	return nil
}

// promptKey drives the data-file prompt: enter loads the file (or explains
// why it cannot be read, keeping the prompt open), esc cancels.
func (m *Model) promptKey(msg tea.KeyMsg) tea.Cmd {
	path, done, cmd := m.prompt.update(msg)
	if !done {
		return cmd
	}
	if path == "" {
		m.screen = screenView
		return nil
	}
	sc := m.v.scenario()
	if err := m.c.catalog.Set(&sc, "data", path); err != nil {
		m.prompt.err = err.Error()
		return nil
	}
	if err := sc.Validate(); err != nil {
		m.prompt.err = err.Error()
		return nil
	}
	m.screen = screenView
	return m.open(sc)
}

// View draws the active view or an overlay.
func (m *Model) View() string {
	w, h := m.c.width, m.c.height
	if w <= 0 || h <= 0 {
		return ""
	}
	st := m.c.styles
	switch m.screen {
	case screenHelp:
		intro, acts := m.v.help()
		acts = append(acts, m.globalActions()...)
		if story := story(m.v.scenario()); story != "" {
			intro = story + "\n\n" + intro
		}
		body := st.caption.Render("Help · "+m.v.scenario().Preset) + "\n\n" + ansi.Wrap(intro, w, " ") + "\n\n" + helpColumns(st, acts, w)
		if msgs := m.v.messages(); len(msgs) > 0 {
			body += "\n\n" + st.caption.Render("Messages") + "\n" + strings.Join(wrapLines(msgs, w, 1<<20), "\n")
		}
		return m.scrolled(strings.Split(body, "\n"), w, h)
	case screenAlgorithms, screenPresets:
		return m.picker.view(st, w, h)
	case screenData:
		return m.prompt.view(st, w, h)
	}
	m.c.globals = m.globalActions()
	if w < minWidth || h < minHeight {
		msg := fmt.Sprintf("enlarge the terminal to at least %d×%d (now %d×%d); q quits", minWidth, minHeight, w, h)
		return chart.FitBox(ansi.Wrap(msg, w, " "), w, h)
	}
	return m.v.view()
}

// scrolled shows the help's lines from helpTop, with a last line that says
// how to close it and, when it does not fit, which lines are shown and how
// to scroll.
func (m *Model) scrolled(lines []string, w, h int) string {
	st := m.c.styles
	footer := "press ? or esc to close"
	if len(lines)+2 <= h {
		return chart.FitBox(strings.Join(lines, "\n")+"\n\n"+st.muted.Render(footer), w, h)
	}
	rows := max(h-1, 1)
	m.helpTop = min(m.helpTop, max(len(lines)-rows, 0))
	shown := lines[m.helpTop:min(m.helpTop+rows, len(lines))]
	footer = fmt.Sprintf("lines %d–%d of %d · ↑↓ pgup pgdn scroll · ? or esc closes", m.helpTop+1, m.helpTop+len(shown), len(lines))
	return chart.FitBox(strings.Join(shown, "\n")+"\n"+st.muted.Render(ansi.Truncate(footer, w, "…")), w, h)
}

// exportedMsg reports a finished export.
type exportedMsg struct {
	path, sidecar string
	rows          int
	partial       bool
	hidden        []string // racers left out because they are hidden
	err           error
}

// notice is the sentence an export leaves in the status area.
func (msg exportedMsg) notice() string {
	if msg.err != nil {
		return "export failed: " + msg.err.Error()
	}
	s := fmt.Sprintf("exported %d rows to %s", msg.rows, msg.path)
	if msg.sidecar != "" {
		s += " (command and keys in " + msg.sidecar + ")"
	}
	if msg.partial {
		s += "; partial: the run had not finished"
	}
	if len(msg.hidden) > 0 {
		s += "; hidden racers left out: " + strings.Join(msg.hidden, ", ")
	}
	return s
}
