package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/fedscope/fedscope/experiment"
)

// runView draws a race as charts, one per metric the family names, stacked
// when there is room, one at a time (tab cycles) when the terminal is small.
type runView struct {
	*race
	w, h    int
	chart   int  // the chart shown when only one fits
	xMetric bool // the x axis is the family's cumulative metric (oracle complexity)
	frame   frameCache
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
		action{keys: []string{"z"}, help: "zoom the y axis to the revealed tail (or around the cursor)", hint: "zoom", group: "view",
			run: func() tea.Cmd { v.zoom = !v.zoom; v.version++; return nil }},
		action{keys: []string{"l"}, help: "log / linear y axis", group: "view",
			run: func() tea.Cmd { v.c.logY = !v.c.logY; v.c.version++; return nil }},
	)
	acts = append(acts, v.explainActions()...)
	if len(v.facts.Charts) > 1 {
		acts = append(acts, action{keys: []string{"tab"}, help: "next chart (when only one fits)", group: "view",
			run: func() tea.Cmd { v.chart = (v.chart + 1) % len(v.facts.Charts); v.version++; return nil }})
	}
	if m := v.xAxisMetric(); m >= 0 {
		acts = append(acts, action{keys: []string{"x"}, help: "x axis: rounds / " + v.table.Metrics[m].Caption + " (log)", group: "view",
			run: func() tea.Cmd { v.xMetric = !v.xMetric; v.version++; return nil }})
	}
	intro := v.sc.Family.Help(v.sc) + " Rounds are revealed at the playback pace while they compute in the background; " +
		"the legend reads every racer's values at the cursor's round. " + string(sharedGlyph) + " marks a cell where two racers' points coincide."
	return intro, acts
}

// view draws the screen: title, charts, readout, status and messages.
func (v *runView) view() string {
	key := [5]int{v.version, v.c.version, v.w, v.h, v.chart}
	return v.frame.get(key, v.draw)
}

func (v *runView) draw() string {
	w, h := v.w, v.h
	_, acts := v.help()
	legend := v.readout(w, v.chartMetrics())
	messages := v.messageLines(w, acts)
	body := h - 2 - len(legend) - len(messages) // title, status
	lines := []string{v.title(w), v.withStory(w, body, v.charts)}
	lines = append(lines, legend...)
	lines = append(lines, v.statusLine(w))
	lines = append(lines, messages...)
	return fitBox(strings.Join(lines, "\n"), w, h)
}

// chartMetrics are the columns of the charted metrics.
func (v *runView) chartMetrics() []int {
	var out []int
	for _, name := range v.facts.Charts {
		out = append(out, v.metricIndex(name))
	}
	return out
}

// chartRows is the fewest rows (caption and axis included) a chart needs
// to be read: two charts share the body only when both get that many.
const chartRows = 12

// charts draws the charts into a w×h box.
func (v *runView) charts(w, h int) string {
	ms := v.chartMetrics()
	if len(ms) == 0 {
		return fitBox("", w, h)
	}
	shown := ms
	if len(ms) > 1 && h < len(ms)*chartRows {
		i := v.chart % len(ms)
		shown = ms[i : i+1]
	}
	var parts []string
	left := h
	for k, m := range shown {
		rows := h / len(shown)
		if k == len(shown)-1 {
			rows = left
		}
		left -= rows
		parts = append(parts, v.chart1(m, w, rows, k == len(shown)-1, len(shown) < len(ms)))
	}
	return strings.Join(parts, "\n")
}

// chart1 draws one metric's chart with its caption into w×h.
func (v *runView) chart1(m, w, h int, xAxis, cycling bool) string {
	st := v.c.styles
	metric := v.table.Metrics[m]
	logY := metric.Log && v.c.logY
	spec := chartSpec{width: w, height: h - 1, logY: logY, xAxis: true, color: st.color, axisColor: st.axis(),
		rounds: v.positions(), tight: !metric.Log || !v.c.logY, shared: sharedGlyph,
		xLabel: func(pos int) string { return strconv.Itoa(v.roundAt(pos)) }}
	_ = xAxis
	xm := v.xAxisMetric()
	oracle := v.xMetric && xm >= 0
	var lo, hi float64
	if oracle {
		lo, hi = v.xRange(xm)
		spec.rounds = max(2, w-plotLeft-rightSpare)
		spec.xLabel = func(col int) string {
			return shortNumber(math.Pow(10, lo+float64(col-1)/float64(spec.rounds-1)*(hi-lo)))
		}
	}
	for i := range v.table.Labels {
		if !v.visible(i) {
			continue
		}
		vals := v.values(i, m)
		if oracle {
			vals = resample(v.values(i, xm), vals, lo, hi, spec.rounds)
		}
		s := series{values: vals, glyph: v.looks[i].glyph, color: st.racerColor(v.looks[i]), racer: i}
		spec.curves = append(spec.curves, s)
		if b := v.metricIndex(metric.Bound); metric.Bound != "" && b >= 0 && v.c.theory {
			bv := v.values(i, b)
			if oracle {
				bv = resample(v.values(i, xm), bv, lo, hi, spec.rounds)
			}
			spec.overlays = append(spec.overlays, series{values: bv, glyph: boundGlyph, color: st.racerColor(v.looks[i]), racer: -1})
		}
	}
	var notes []string
	for _, l := range v.facts.Levels {
		if l.Metric != metric.Name || (l.Theory && !v.c.theory) {
			continue
		}
		g := referenceGlyph
		if l.Theory {
			g = theoryGlyph
		}
		spec.levels = append(spec.levels, level{value: l.Value, glyph: g, color: st.axis()})
		notes = append(notes, fmt.Sprintf("%c %s %s", g, l.Label, formatValue(l.Value)))
	}
	if metric.Bound != "" && v.c.theory {
		notes = append(notes, fmt.Sprintf("%c %s (same colour)", boundGlyph, v.table.Metrics[v.metricIndex(metric.Bound)].Label()))
	}
	if !oracle {
		spec.labels = v.annotations(metric.Name)
	}
	if !oracle && v.cursor > 0 {
		spec.cursor = v.cursor
	}
	for k := 1; k < v.revealed && !oracle; k++ {
		if v.phaseAt(k) == 1 && v.phaseAt(k+1) == 2 && v.roundAt(k) > 0 {
			spec.marks = append(spec.marks, float64(k)+0.5)
		}
	}
	if len(spec.marks) > 0 {
		notes = append(notes, fmt.Sprintf("%c phase 1 | phase 2", markGlyph))
	}
	scale := "log"
	if !logY {
		scale = "linear"
	}
	head := " (" + scale + ")"
	if v.zoom {
		if z, a, b, clipped, ok := v.zoomRange(spec.curves, logY); ok && !oracle {
			spec.zoom = &z
			head += fmt.Sprintf(" · zoom: rounds %d–%d", v.roundAt(a), v.roundAt(b))
			for _, i := range clipped {
				head += fmt.Sprintf(", %c clipped", v.looks[i].glyph)
			}
		}
	}
	if oracle {
		head += " · x: " + v.table.Metrics[xm].Caption + " (log)"
	}
	if cycling {
		head += " · tab: next chart"
	}
	// The notes name the dashed lines: after the caption when they fit,
	// else on lines of their own (at most two, taken from the chart) — a
	// note cut off would leave a dashed line without a name.
	lines := []string{st.caption.Render(metric.Caption) + st.muted.Render(head)}
	if len(notes) > 0 {
		joined := strings.Join(notes, "  ")
		if ansi.StringWidth(lines[0])+3+ansi.StringWidth(joined) <= w {
			lines[0] += st.muted.Render("   " + joined)
		} else if h >= 10 {
			lines = append(lines, wrapLines([]string{st.muted.Render(joined)}, w, 2)...)
		} else {
			lines[0] += st.muted.Render("   " + joined)
		}
	}
	lines[0] = ansi.Truncate(lines[0], w, "…")
	spec.height = max(h-len(lines), 1)
	return strings.Join(lines, "\n") + "\n" + plotChart(spec)
}

// phaseAt returns the phase of round k of the first racer that has one.
func (v *runView) phaseAt(k int) int {
	for _, rs := range v.table.Rounds {
		if k-1 < len(rs) {
			return rs[k-1].Phase
		}
	}
	return 0
}

// zoomRange is the y range of the visible curves over the revealed tail
// (the last half of the revealed rounds), or a window around the cursor; it
// returns the range, the rounds it covers, and the curves left out of the
// range because they still fall or rise by more than a decade there (so
// that the plateaus of the others spread over the chart; those curves are
// clipped, not hidden).
func (v *runView) zoomRange(curves []series, logY bool) ([2]float64, int, int, []int, bool) {
	a, b := v.revealed/2+1, v.revealed
	if v.cursor > 0 {
		half := max(v.revealed/4, 2)
		a, b = max(1, v.cursor-half), min(v.revealed, v.cursor+half)
	}
	type span struct{ lo, hi float64 }
	spans := make([]span, len(curves))
	for i, s := range curves {
		spans[i] = span{math.Inf(1), math.Inf(-1)}
		for k := a; k <= b && k-1 < len(s.values); k++ {
			x := s.values[k-1]
			if math.IsNaN(x) || math.IsInf(x, 0) || (logY && x <= 0) {
				continue
			}
			spans[i].lo, spans[i].hi = math.Min(spans[i].lo, x), math.Max(spans[i].hi, x)
		}
	}
	moving := func(sp span) bool {
		if logY {
			return sp.hi > 10*sp.lo
		}
		return false
	}
	var clipped []int
	lo, hi := math.Inf(1), math.Inf(-1)
	for pass := 0; pass < 2 && math.IsInf(lo, 1); pass++ {
		clipped = clipped[:0]
		for i, sp := range spans {
			if math.IsInf(sp.lo, 1) {
				continue
			}
			if pass == 0 && moving(sp) {
				clipped = append(clipped, curves[i].racer)
				continue
			}
			lo, hi = math.Min(lo, sp.lo), math.Max(hi, sp.hi)
		}
	}
	if math.IsInf(lo, 1) {
		return [2]float64{}, 0, 0, nil, false
	}
	if logY {
		return [2]float64{lo / 1.05, hi * 1.05}, a, b, clipped, true
	}
	pad := 0.05 * (hi - lo)
	return [2]float64{lo - pad, hi + pad}, a, b, clipped, true
}

// xRange returns log10 of the smallest and largest value of the x metric
// revealed so far.
func (v *runView) xRange(m int) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for i := range v.table.Labels {
		for _, x := range v.values(i, m) {
			if x > 0 {
				lo, hi = math.Min(lo, math.Log10(x)), math.Max(hi, math.Log10(x))
			}
		}
	}
	if math.IsInf(lo, 1) {
		return 0, 1
	}
	if hi-lo < 1e-9 {
		hi = lo + 1
	}
	return lo, hi
}

// resample samples a curve at points log-spaced values of its x metric from
// 10^lo to 10^hi: the value of the last round whose x is at most the point
// (NaN before the first).
func resample(xs, ys []float64, lo, hi float64, points int) []float64 {
	out := make([]float64, points)
	k := -1
	for p := range out {
		x := math.Pow(10, lo+float64(p)/float64(points-1)*(hi-lo)) * (1 + 1e-12)
		for k+1 < len(xs) && xs[k+1] <= x {
			k++
		}
		out[p] = math.NaN()
		if k >= 0 {
			out[p] = ys[k]
		}
	}
	return out
}

// shortNumber writes a tick label in at most about five cells: 950, 12k, 3.4M.
func shortNumber(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
