package tui

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/tui/chart"
)

// charted are the metric columns the sweep draws.
func (v *sweepView) charted() []int {
	var out []int
	for mi, m := range v.table.Metrics {
		if !m.TableOnly {
			out = append(out, mi)
		}
	}
	return out
}

// minBody is the body height that keeps every chart readable: minPlotRows
// plot rows each under its caption (which may wrap to a second line).
func (v *sweepView) minBody() int {
	ms := v.charted()
	need := stackRows(len(ms)) + len(ms)*minPlotRows
	for _, mi := range ms {
		var scratch chart.Spec
		need += len(v.captionOf(mi, v.w, false, &scratch)) - 1
	}
	return need
}

// bodyRows estimates the rows the body gets (for keys that depend on it).
func (v *sweepView) bodyRows() int { return v.h - 5 - len(v.table.Labels) }

// stacked reports whether all charts fit a body of h rows.
func (v *sweepView) stacked(h int) bool {
	return stackingFor(len(v.charted()), v.minBody(), h) != oneAtATime
}

// charts draws the sweep's charts stacked when they all keep minPlotRows
// rows, else the one tab selects; the last carries the x axis.
func (v *sweepView) charts(w, h int) string {
	return stackCharts(v.charted(), v.chart, stackingFor(len(v.charted()), v.minBody(), h), w, h, func(mi, rows int, axis chart.XAxis, cycling bool) string {
		return v.metricChart(mi, w, rows, axis, cycling)
	})
}

// metricChart draws one sweep metric: x the swept knob, y the trial mean of
// every curve shown, the spread (median) dotted, the reference level, the
// marks and the papers' theory curves, with a caption naming them all.
func (v *sweepView) metricChart(mi, w, rows int, axis chart.XAxis, cycling bool) string {
	st := v.c.styles
	t := v.table
	metric := t.Metrics[mi]
	spec := chart.Spec{Width: w, Height: rows + axisLines(axis), Points: len(t.Grid), LogY: v.c.logY, Color: st.color, AxisColor: st.axis(),
		XAxis: axis, Ticks: v.gridTicks(w), Shared: sharedGlyph, Loose: true, Cursor: v.cursor, Mode: chart.YFull,
		// A linear axis without a reference level fits the data (test MSEs
		// differ in the second digit); with one (FG = 1) it starts at 0.
		Tight: !v.c.logY && math.IsNaN(metric.Ref)}
	spread := slices.IndexFunc(t.Metrics, func(m experiment.SweepMetric) bool { return metric.Spread != "" && m.Name == metric.Spread })
	for r := range t.Labels {
		if v.hidden[r] {
			continue
		}
		l := v.labelLooks[r]
		spec.Curves = append(spec.Curves, chart.Series{Values: fillGaps(v.means(r, mi), v.c.logY), Glyph: l.glyph, Color: st.racerColor(l), Racer: r})
		if spread >= 0 {
			spec.Overlays = append(spec.Overlays, chart.Series{Values: fillGaps(v.means(r, spread), v.c.logY), Glyph: spreadGlyph, Color: st.racerColor(l), Racer: -1})
		}
	}
	lines := v.captionOf(mi, w, cycling, &spec)
	extra := min(len(lines)-1, rows-2)
	lines = lines[:1+max(extra, 0)]
	spec.Height -= max(extra, 0)
	out, _ := chart.Draw(spec)
	return strings.Join(lines, "\n") + "\n" + out
}

// captionOf is a sweep chart's caption: its title and modes, then what its
// reference level, spread, marks and theory curves are — in full when they
// take at most one line of their own, else their first clauses (? has them
// in full). It adds the levels, marks and theory curves to spec.
func (v *sweepView) captionOf(mi, w int, cycling bool, spec *chart.Spec) []string {
	st := v.c.styles
	t := v.table
	metric := t.Metrics[mi]
	spread := slices.IndexFunc(t.Metrics, func(m experiment.SweepMetric) bool { return metric.Spread != "" && m.Name == metric.Spread })
	var notes, short []string
	add := func(long, brief string) { notes, short = append(notes, long), append(short, brief) }
	if !math.IsNaN(metric.Ref) {
		spec.Levels = append(spec.Levels, chart.Level{Value: metric.Ref, Glyph: referenceGlyph, Color: st.axis()})
		add(fmt.Sprintf("%c %s", referenceGlyph, metric.RefNote), fmt.Sprintf("%c %s", referenceGlyph, metric.RefNote))
	}
	if spread >= 0 {
		add(fmt.Sprintf("%c %s", spreadGlyph, t.Metrics[spread].Caption), fmt.Sprintf("%c median", spreadGlyph))
	}
	for _, mk := range metric.Marks {
		spec.Marks = append(spec.Marks, gridPosition(t.Grid, mk.At))
		add(fmt.Sprintf("%c %s", chart.MarkGlyph, mk.Note), fmt.Sprintf("%c %s", chart.MarkGlyph, firstClause(mk.Note)))
	}
	if v.c.theory {
		long, brief := v.theory(spec, metric)
		notes, short = append(notes, long...), append(short, brief...)
	}
	tail := v.modes(cycling)
	lines := captionLines(st, [2]string{metric.Caption + tail, metric.Name + tail}, notes, w, true)
	if len(lines) > 2 {
		lines = captionLines(st, [2]string{metric.Caption + tail, metric.Name + tail}, short, w, true)
	}
	return lines
}

// modes is what a sweep chart's caption says of what the chart shows now:
// the scale, the measured x labels, the chart of a cycle.
func (v *sweepView) modes(cycling bool) string {
	scale := "log"
	if !v.c.logY {
		scale = "linear"
	}
	modes := []string{scale}
	if v.axisX {
		modes = append(modes, "x labelled with "+axisName(v.sc.Sweep.Axis))
	}
	if cycling {
		modes = append(modes, fmt.Sprintf("tab: next chart (%d/%d)", v.chart%len(v.charted())+1, len(v.charted())))
	}
	return " (" + strings.Join(modes, " · ") + ")"
}

// theory adds the papers' predictions to a sweep chart — a curve dashed in
// the colour of the racer it is about, or a mark — and returns the notes
// naming them, in full and by their first clause (each saying where a
// curve lies off the chart).
func (v *sweepView) theory(spec *chart.Spec, metric experiment.SweepMetric) (notes, short []string) {
	st := v.c.styles
	offChart := map[string][]string{}
	for _, th := range metric.Theory {
		if th.Curve == nil {
			spec.Marks = append(spec.Marks, gridPosition(v.table.Grid, th.At))
			notes = append(notes, fmt.Sprintf("%c %s", chart.MarkGlyph, th.Label))
			short = append(short, fmt.Sprintf("%c %s", chart.MarkGlyph, firstClause(th.Label)))
			continue
		}
		color := st.axis()
		if i := slices.Index(v.table.Labels, th.Racer); i >= 0 {
			color = st.racerColor(v.labelLooks[i])
		}
		spec.Overlays = append(spec.Overlays, chart.Series{Values: th.Curve, Glyph: theoryGlyph, Color: color, Racer: -1})
		off := chart.OffChart(*spec, th.Curve)
		if off == "" {
			notes = append(notes, st.paint(string(theoryGlyph), color)+" "+th.Label)
			short = append(short, st.paint(string(theoryGlyph), color)+" "+firstClause(th.Label))
			continue
		}
		notes = append(notes, st.paint(string(theoryGlyph), color)+" "+th.Label+" ("+off+")")
		offChart[off] = append(offChart[off], st.paint(string(theoryGlyph), color)+" "+firstClause(th.Label))
	}
	// Briefly, the curves off the chart are named together, by where they lie.
	for _, where := range []string{"above the chart", "below the chart", "off the chart"} {
		if names := offChart[where]; len(names) > 0 {
			short = append(short, where+": "+strings.Join(names, ", "))
		}
	}
	return notes, short
}

// firstClause is a note up to its first colon: "Thm 5" of "Thm 5: the
// scarce client gains while …".
func firstClause(s string) string {
	if i := strings.Index(s, ":"); i > 0 {
		return s[:i]
	}
	return s
}

// means returns curve r's trial means of metric mi over the grid.
func (v *sweepView) means(r, mi int) []float64 {
	out := make([]float64, len(v.table.Grid))
	for i := range out {
		out[i], _, _ = v.table.Stat(i, r, mi)
	}
	return out
}

// gridTicks are the x ticks of the grid: with the knob's values, round
// numbers in 1-2-5 steps on an even grid, powers of ten on a log-spaced one,
// else every k-th grid value; with the measured axis (x), every k-th grid
// point labelled with its trial mean.
func (v *sweepView) gridTicks(w int) []chart.Tick {
	grid := v.table.Grid
	cols := w - chart.PlotLeft - chart.RightSpare
	n := max(cols/10, 2)
	var out []chart.Tick
	if len(grid) == 0 {
		return nil
	}
	if !v.axisX {
		switch lo, hi := grid[0], grid[len(grid)-1]; {
		case evenGrid(grid):
			for _, x := range chart.NiceTicks(lo, hi, n) {
				out = append(out, chart.Tick{Pos: gridPosition(grid, x), Label: strconv.FormatFloat(x, 'g', 4, 64)})
			}
			return out
		case logGrid(grid):
			for _, x := range chart.LogTicks(math.Log10(lo), math.Log10(hi), n) {
				out = append(out, chart.Tick{Pos: gridPosition(grid, x), Label: strconv.FormatFloat(x, 'g', 3, 64)})
			}
			return out
		}
	}
	label := func(i int) string { return strconv.FormatFloat(grid[i], 'g', 3, 64) }
	if v.axisX {
		label = axisLabel(v.table, v.sc.Sweep.Axis)
	}
	every := max(1, int(math.Ceil(float64(len(grid))/float64(n))))
	for i := 0; i < len(grid); i += every {
		out = append(out, chart.Tick{Pos: float64(i + 1), Label: label(i)})
	}
	return out
}

// evenGrid reports whether a grid is evenly spaced.
func evenGrid(g []float64) bool {
	if len(g) < 3 {
		return false
	}
	d := g[1] - g[0]
	for i := 2; i < len(g); i++ {
		if math.Abs(g[i]-g[i-1]-d) > 1e-9*math.Abs(d) {
			return false
		}
	}
	return d > 0
}

// logGrid reports whether a positive grid is log-spaced (a constant ratio)
// over at least a decade.
func logGrid(g []float64) bool {
	if len(g) < 3 || !(g[0] > 0) || g[len(g)-1] < 10*g[0] {
		return false
	}
	r := math.Log(g[1] / g[0])
	for i := 2; i < len(g); i++ {
		if math.Abs(math.Log(g[i]/g[i-1])-r) > 0.02*math.Abs(r) {
			return false
		}
	}
	return r > 0
}

// axisLabel labels grid point i with the trial mean, at that grid point,
// of the metric named axis (a property of the data, equal for every racer:
// racer 0's is read), or "…" before its first trial.
func axisLabel(t *experiment.SweepTable, axis string) func(i int) string {
	mi := slices.IndexFunc(t.Metrics, func(m experiment.SweepMetric) bool { return m.Name == axis })
	return func(i int) string {
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
