package tui

import (
	"math"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/tui/chart"
)

// runView draws a race as charts, one per metric the family names, stacked
// when each keeps minPlotRows rows, one at a time (tab cycles) when the
// terminal is too small for that.
type runView struct {
	*race
	w, h    int
	chart   int  // the chart shown when only one fits
	xMetric bool // the x axis is the family's cumulative metric (oracle complexity)
	frame   frameCache
	// geoms are the last drawing's charts, by metric column: the tests
	// check the picture against the values through them.
	geoms map[int]chart.Geom
}

// frameCache keeps the last drawing and what it was drawn from, so View
// only redraws when something changed.
type frameCache struct {
	key   [5]int
	frame string
}

func (f *frameCache) get(key [5]int, draw func() string) string {
	if f.frame == "" || f.key != key {
		f.key, f.frame = key, draw()
	}
	return f.frame
}

func newRunView(c *common, sc experiment.Scenario) *runView {
	return &runView{race: newRace(c, sc), w: c.width, h: c.height}
}

func (v *runView) scenario() experiment.Scenario { return v.sc }

func (v *runView) playback() *race { return v.race }

func (v *runView) setSize(w, h int) { v.w, v.h = w, h }

func (v *runView) start() tea.Cmd { return v.race.start() }

func (v *runView) update(msg tea.Msg) tea.Cmd {
	cmd, _ := v.race.update(msg)
	return cmd
}

// restart switches to a changed scenario of the same kind and starts it.
func (v *runView) restart(sc experiment.Scenario) tea.Cmd {
	v.sc = sc
	return v.race.start()
}

// xAxisMetric is the family's metric that can serve as the x axis, or −1.
func (v *runView) xAxisMetric() int {
	for i, m := range v.table.Metrics {
		if m.XAxis {
			return i
		}
	}
	return -1
}

func (v *runView) help() (string, []action) {
	acts := v.raceActions(v.restart)
	acts = append(acts,
		action{keys: []string{"z"}, help: "y axis: auto (narrowed so the final values lie on different rows) → full range → zoom on the revealed tail",
			hint: "y range", group: "view", run: func() tea.Cmd { v.ymode = (v.ymode + 1) % yModes; v.version++; return nil }},
		action{keys: []string{"l"}, help: "log / linear y axis", group: "view",
			run: func() tea.Cmd { v.c.logY = !v.c.logY; v.c.version++; return nil }},
	)
	acts = append(acts, v.explainActions()...)
	if n := len(v.facts.Charts); n > 1 {
		acts = append(acts, tabAction(v.c, func() bool { return v.stacked(v.w, v.bodyRows()) }, func() { v.chart = (v.chart + 1) % n; v.version++ }))
	}
	if m := v.xAxisMetric(); m >= 0 {
		acts = append(acts, action{keys: []string{"x"}, help: "x axis: rounds / " + v.table.Metrics[m].Caption + " (log)", group: "view",
			run: func() tea.Cmd { v.xMetric = !v.xMetric; v.version++; return nil }})
	}
	intro := v.sc.Family.Help(v.sc) + " Rounds are revealed at the playback pace while they compute in the background; " +
		"the legend reads every racer's values at the cursor's round. " + string(sharedGlyph) + " marks a cell where two racers' points coincide; " +
		string(chart.UpGlyph) + " and " + string(chart.DownGlyph) + " where a curve leaves the range shown."
	return intro, acts
}

// view draws the screen: title, charts, readout, status and messages.
func (v *runView) view() string {
	key := [5]int{v.version, v.c.version, v.w, v.h, v.chart}
	return v.frame.get(key, v.draw)
}

func (v *runView) draw() string {
	return v.layout(v.charts).render(v.c.styles, v.w, v.h)
}

// layout is the run view's screen around a body.
func (v *runView) layout(body func(w, h int) string) layout {
	_, acts := v.help()
	l := layout{title: v.title(), body: body, minBody: v.minBody(), messages: v.messages(), status: v.statusText(), acts: acts, globals: v.c.globals,
		legend: func(w int) []string { return v.readout(w, v.chartMetrics(), false) },
		tight:  func(w int) []string { return v.readout(w, v.chartMetrics(), true) }}
	v.c.explain(&l, v.sc)
	return l
}

// chartMetrics are the columns of the charted metrics.
func (v *runView) chartMetrics() []int {
	var out []int
	for _, name := range v.facts.Charts {
		out = append(out, v.metricIndex(name))
	}
	return out
}

// minPlotRows is the fewest plot rows a stacked chart gets: at 80×24 the run
// view still shows both charts with this many.
const minPlotRows = 5

// stackRows is what a stack of n charts needs besides their plot rows: a
// caption each, an axis line under each but the last, two lines (axis and
// labels) under the last.
func stackRows(n int) int { return n + (n - 1) + 2 }

// minBody is the body height that keeps every chart readable.
func (v *runView) minBody() int {
	return stackRows(len(v.facts.Charts)) + len(v.facts.Charts)*minPlotRows
}

// bodyRows estimates the rows the body gets (for keys that depend on it).
func (v *runView) bodyRows() int { return v.h - 4 - len(v.table.Labels) }

// stacked reports whether all charts fit a body of h rows.
func (v *runView) stacked(w, h int) bool { return v.stacking(w, h) != oneAtATime }

// stacking is how the charts share a w×h body.
func (v *runView) stacking(w, h int) stacking {
	return stackingFor(len(v.chartMetrics()), v.stackNeed(w), h)
}

// stackNeed is the rows the charts need stacked in w columns, each with
// minPlotRows plot rows under its caption and notes (which wrap on a
// narrow pane).
func (v *runView) stackNeed(w int) int {
	ms := v.chartMetrics()
	need := stackRows(len(ms)) + len(ms)*minPlotRows
	for _, m := range ms {
		if m >= 0 {
			_, notes := v.chartSpec(m, w, minPlotRows, chart.XLine)
			need += len(captionLines(v.c.styles, v.chartCaption(m, chart.Geom{}, false), notes, w, false)) - 1
		}
	}
	return need
}

// charts draws the charts into a w×h box: stacked when they all fit, else
// the one tab selects.
func (v *runView) charts(w, h int) string {
	v.geoms = map[int]chart.Geom{}
	ms := v.chartMetrics()
	return stackCharts(ms, v.chart, v.stacking(w, h), w, h, func(m, rows int, axis chart.XAxis, cycling bool) string {
		return v.metricChart(m, w, rows, axis, cycling)
	})
}

// resample samples a curve at `points` log-spaced values of its x metric
// from 10^lo to 10^hi: the value of the last round whose x is at most the
// point; NaN before the first and after the last (a racer that finished
// ends where it finished, never drawn flat to the edge).
func resample(xs, ys []float64, lo, hi float64, points int) []float64 {
	out := make([]float64, points)
	last := math.Inf(-1)
	for _, x := range xs {
		if !math.IsNaN(x) {
			last = math.Max(last, x)
		}
	}
	k := -1
	for p := range out {
		x := math.Pow(10, lo+float64(p)/float64(max(points-1, 1))*(hi-lo))
		for k+1 < len(xs) && xs[k+1] <= x*(1+1e-12) {
			k++
		}
		out[p] = math.NaN()
		// A point belongs to the racer up to its last x (half a column
		// past it, so that its last round is drawn).
		half := math.Pow(10, 0.5*(hi-lo)/float64(max(points-1, 1)))
		if k >= 0 && x <= last*half {
			out[p] = ys[k]
		}
	}
	return out
}
