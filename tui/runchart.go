package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/tui/chart"
)

// yMode is how a run chart chooses its y range (z cycles).
type yMode int

const (
	// yAuto: the whole range, narrowed on a log axis when that is too
	// coarse to put the racers' distinct final values on distinct rows.
	yAuto yMode = iota
	// yFull: the whole range.
	yFull
	// yTail: the range of the revealed tail (or around the cursor).
	yTail
	yModes = 3
)

var yModeNames = []string{"auto", "full", "tail"}

// metricChart draws metric m's chart with its caption: a caption line (two
// when the notes of its dashed lines do not fit beside it), plot rows, and
// the x axis (a line, or a line and its labels).
func (v *runView) metricChart(m, w, rows int, axis chart.XAxis, cycling bool) string {
	spec, notes := v.chartSpec(m, w, rows, axis)
	out, g := chart.Draw(spec)
	head := v.chartCaption(m, g, cycling)
	lines := captionLines(v.c.styles, head, notes, w, false)
	if extra := min(len(lines)-1, rows-2); extra > 0 {
		spec.Height -= extra
		out, g = chart.Draw(spec)
	}
	lines = lines[:min(len(lines), rows-1)]
	v.geoms[m] = g
	return strings.Join(lines, "\n") + "\n" + out
}

// captionLines writes a chart's caption and the notes naming its dashed
// lines: on one line when they fit (the long caption, else the short one),
// else the notes wrapped on lines of their own — a note cut off would leave
// a dashed line without a name. preferLong keeps the long caption when the
// notes then fit one line of their own (a sweep's caption names its mode).
func captionLines(st styles, head [2]string, notes []string, w int, preferLong bool) []string {
	joined := strings.Join(notes, "  ")
	if preferLong && ansi.StringWidth(head[0]) <= w && ansi.StringWidth(joined) <= w {
		line := st.caption.Render(head[0])
		if joined == "" {
			return []string{line}
		}
		if one := line + st.muted.Render("   "+joined); ansi.StringWidth(one) <= w {
			return []string{one}
		}
		return []string{line, st.muted.Render(joined)}
	}
	for _, caption := range head {
		line := st.caption.Render(caption)
		if joined != "" {
			line += st.muted.Render("   " + joined)
		}
		if ansi.StringWidth(line) <= w {
			return []string{line}
		}
	}
	first := head[0]
	if ansi.StringWidth(first) > w {
		first = head[1]
	}
	lines := []string{ansi.Truncate(st.caption.Render(first), w, "…")}
	if joined != "" {
		lines = append(lines, strings.Split(ansi.Wrap(st.muted.Render(joined), w, " "), "\n")...)
	}
	return lines
}

// chartSpec describes metric m's chart: the visible racers' revealed
// values, the y range fixed by every round computed so far (the axis stays
// still while the curves grow), the reference and theory levels, the
// racers' bounds, the annotations, the phase boundary and the cursor. The
// notes name the dashed lines.
func (v *runView) chartSpec(m, w, rows int, axis chart.XAxis) (chart.Spec, []string) {
	st := v.c.styles
	metric := v.table.Metrics[m]
	logY := metric.Log && v.c.logY
	spec := chart.Spec{Width: w, Height: rows + axisLines(axis), LogY: logY, XAxis: axis, Color: st.color, AxisColor: st.axis(),
		Points: v.positions(), Tight: !logY, Shared: sharedGlyph}
	if v.ymode == yFull {
		spec.Mode = chart.YFull
	}
	xm := v.xAxisMetric()
	oracle := v.xMetric && xm >= 0
	var x *xResample
	if oracle {
		lo, hi := v.xRange(xm)
		spec.Points = max(2, w-chart.PlotLeft-chart.RightSpare)
		x = &xResample{metric: xm, lo: lo, hi: hi, points: spec.Points}
	}
	v.addRacers(&spec, m, x)
	notes := v.addLevels(&spec, metric)
	if oracle {
		spec.Ticks = logTicks(x.lo, x.hi, spec.Points, w)
		return spec, notes
	}
	spec.Ticks = v.roundTicks(w)
	spec.Labels = v.annotations(metric.Name)
	if v.cursor > 0 {
		spec.Cursor = v.cursor
	}
	for k := 1; k < v.revealed; k++ {
		if v.phaseAt(k) == 1 && v.phaseAt(k+1) == 2 && v.roundAt(k) > 0 {
			spec.Marks = append(spec.Marks, float64(k)+0.5)
		}
	}
	if len(spec.Marks) > 0 {
		notes = append(notes, fmt.Sprintf("%c phase 1 | phase 2", chart.MarkGlyph))
	}
	if v.ymode == yTail {
		if z, _, _, _, ok := v.zoomRange(spec.Curves, logY); ok {
			spec.Zoom = &z
		}
	}
	return spec, notes
}

// xResample is a chart drawn against a cumulative metric instead of the
// rounds: every curve resampled at points log-spaced values from 10^lo to
// 10^hi.
type xResample struct {
	metric int
	lo, hi float64
	points int
}

// addRacers adds every visible racer's curve of metric m — the revealed
// values, and every round computed as the range — and its bound, when the
// metric has one and the theory overlays are on.
func (v *runView) addRacers(spec *chart.Spec, m int, x *xResample) {
	st := v.c.styles
	metric := v.table.Metrics[m]
	b := v.metricIndex(metric.Bound)
	for i := range v.table.Labels {
		if !v.visible(i) {
			continue
		}
		vals, all := v.values(i, m), v.computed(i, m)
		if x != nil {
			vals = resample(v.values(i, x.metric), vals, x.lo, x.hi, x.points)
			all = vals
		}
		color := st.racerColor(v.looks[i])
		spec.Curves = append(spec.Curves, chart.Series{Values: vals, Glyph: v.looks[i].glyph, Color: color, Racer: i})
		spec.Range = append(spec.Range, all)
		if metric.Bound != "" && b >= 0 && v.c.theory {
			bv := v.values(i, b)
			if x != nil {
				bv = resample(v.values(i, x.metric), bv, x.lo, x.hi, x.points)
			}
			spec.Overlays = append(spec.Overlays, chart.Series{Values: bv, Glyph: boundGlyph, Color: color, Racer: -1})
		}
	}
}

// addLevels adds the metric's reference and theory levels and returns the
// notes naming them (and the bound, when one is drawn).
func (v *runView) addLevels(spec *chart.Spec, metric experiment.Metric) []string {
	st := v.c.styles
	var notes []string
	for _, l := range v.facts.Levels {
		if l.Metric != metric.Name || (l.Theory && !v.c.theory) {
			continue
		}
		g := referenceGlyph
		if l.Theory {
			g = theoryGlyph
		}
		spec.Levels = append(spec.Levels, chart.Level{Value: l.Value, Glyph: g, Color: st.axis()})
		notes = append(notes, fmt.Sprintf("%c %s %s", g, l.Label, formatValue(l.Value)))
	}
	if metric.Bound != "" && v.c.theory {
		notes = append(notes, fmt.Sprintf("%c %s (same colour)", boundGlyph, v.table.Metrics[v.metricIndex(metric.Bound)].Label()))
	}
	return notes
}

func axisLines(a chart.XAxis) int {
	switch a {
	case chart.XLine:
		return 1
	case chart.XFull:
		return 2
	}
	return 0
}

// chartCaption is a chart's caption, long and short (the metric's caption
// or its short label), each followed by what the chart shows now: the
// scale, the y range when it is not the whole one, the x axis, the chart
// of a cycle.
func (v *runView) chartCaption(m int, g chart.Geom, cycling bool) [2]string {
	metric := v.table.Metrics[m]
	scale := "linear"
	if metric.Log && v.c.logY {
		scale = "log"
	}
	modes := []string{scale}
	switch {
	case v.ymode == yTail:
		a, b := v.tailRounds()
		modes = append(modes, fmt.Sprintf("zoom: rounds %d–%d", v.roundAt(a), v.roundAt(b)))
	case g.Clipped:
		modes = append(modes, fmt.Sprintf("narrowed to %s–%s, z: full", axisValue(g, g.Lo), axisValue(g, g.Hi)))
	case v.ymode == yFull:
		modes = append(modes, "full y range")
	}
	if v.xMetric && v.xAxisMetric() >= 0 {
		modes = append(modes, "x: "+v.table.Metrics[v.xAxisMetric()].Caption+" (log)")
	}
	if cycling {
		modes = append(modes, fmt.Sprintf("tab: next chart (%d/%d)", v.chart%len(v.facts.Charts)+1, len(v.facts.Charts)))
	}
	tail := " (" + strings.Join(modes, " · ") + ")"
	return [2]string{metric.Caption + tail, metric.Label() + tail}
}

// axisValue writes an end of the y axis in data units, two digits.
func axisValue(g chart.Geom, p float64) string {
	if g.Log {
		p = math.Pow(10, p)
	}
	return strconv.FormatFloat(p, 'g', 2, 64)
}

// computed returns racer i's metric m at every position computed so far
// (revealed or not).
func (v *runView) computed(i, m int) []float64 {
	rs := v.table.Rounds[i]
	out := make([]float64, len(rs))
	for k := range rs {
		out[k] = rs[k].Value(m)
	}
	return out
}

// roundTicks are the x ticks of a rounds axis: round numbers in 1-2-5
// steps, about one per 12 columns.
func (v *runView) roundTicks(w int) []chart.Tick {
	first, last := v.roundAt(1), v.roundAt(v.positions())
	cols := w - chart.PlotLeft - chart.RightSpare
	var out []chart.Tick
	for _, x := range chart.NiceTicks(float64(first), float64(last), max(cols/12, 2)) {
		out = append(out, chart.Tick{Pos: x - float64(first) + 1, Label: strconv.FormatFloat(x, 'f', -1, 64)})
	}
	return out
}

// logTicks are the x ticks of a log axis from 10^lo to 10^hi drawn over
// `points` columns.
func logTicks(lo, hi float64, points, w int) []chart.Tick {
	var out []chart.Tick
	for _, x := range chart.LogTicks(lo, hi, max((w-chart.PlotLeft)/10, 2)) {
		pos := 1 + (math.Log10(x)-lo)/(hi-lo)*float64(points-1)
		out = append(out, chart.Tick{Pos: pos, Label: shortNumber(x)})
	}
	return out
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

// tailRounds are the positions the tail zoom covers: the last half of the
// revealed rounds, or a window around the cursor.
func (v *runView) tailRounds() (a, b int) {
	a, b = v.revealed/2+1, v.revealed
	if v.cursor > 0 {
		half := max(v.revealed/4, 2)
		a, b = max(1, v.cursor-half), min(v.revealed, v.cursor+half)
	}
	return a, b
}

// zoomRange is the y range of the visible curves over the tail rounds; it
// returns the range, the rounds it covers, and the curves left out of the
// range because they still fall or rise by more than a decade there (so
// that the plateaus of the others spread over the chart; those curves are
// clipped, not hidden).
func (v *runView) zoomRange(curves []chart.Series, logY bool) ([2]float64, int, int, []int, bool) {
	a, b := v.tailRounds()
	type span struct{ lo, hi float64 }
	spans := make([]span, len(curves))
	for i, s := range curves {
		spans[i] = span{math.Inf(1), math.Inf(-1)}
		for k := a; k <= b && k-1 < len(s.Values); k++ {
			x := s.Values[k-1]
			if math.IsNaN(x) || math.IsInf(x, 0) || (logY && x <= 0) {
				continue
			}
			spans[i].lo, spans[i].hi = math.Min(spans[i].lo, x), math.Max(spans[i].hi, x)
		}
	}
	var clipped []int
	lo, hi := math.Inf(1), math.Inf(-1)
	for pass := 0; pass < 2 && math.IsInf(lo, 1); pass++ {
		clipped = clipped[:0]
		for i, sp := range spans {
			if math.IsInf(sp.lo, 1) {
				continue
			}
			if pass == 0 && logY && sp.hi > 10*sp.lo {
				clipped = append(clipped, curves[i].Racer)
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

// shortNumber writes a tick label in at most about five cells: 950, 12k, 3.4M.
func shortNumber(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}
