package tui

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/guptarohit/asciigraph"
)

// A chart is a claim: every glyph sits in the row whose values it names, and
// every label names a value inside its row. asciigraph draws the axes and
// the curves; chart.go fixes the geometry so that this holds exactly and
// replays asciigraph's drawing to know which series owns each cell (for
// colour, shared-cell marks and the tests that check the claim):
//
//   - the y range [lo, hi] is snapped so that lo/step is a whole number and
//     hi = lo + (rows−1)·step: asciigraph then draws exactly the rows asked
//     for, row w (0 at the top) is centred on hi − w·step, and a value v is
//     drawn in row round((hi − v)/step);
//   - every chart column holds one data point (asciigraph's interpolation is
//     then the identity): column j shows one round, sampled evenly when the
//     rounds outnumber the columns, repeated over k columns when they are
//     fewer (a step plot of the computed values, never interpolated ones).

// series is one curve of a chart: values per round 1..rounds (NaN where
// absent).
type series struct {
	values []float64
	glyph  rune
	color  string // SGR colour parameters, e.g. "38;5;33"; "" for none
	// racer is the index of the racer the curve belongs to (−1 for levels
	// and overlays): shared cells are marked only between racers.
	racer int
}

// level is a horizontal dashed line at a value.
type level struct {
	value float64
	glyph rune
	color string
}

// chartSpec describes one chart to draw into a fixed box.
type chartSpec struct {
	width, height int      // the whole box, labels included
	rounds        int      // x runs over rounds 1..rounds
	logY          bool     // log10 y axis
	curves        []series // racers, in draw order (the last drawn shows on top)
	overlays      []series // dashed curves drawn under the racers (bounds)
	levels        []level  // horizontal dashed lines, drawn first
	xAxis         bool     // draw the round axis below
	color         bool     // emit ANSI colours
	axisColor     string   // SGR colour of labels and axes
	// xLabel, when set, labels the x ticks with the value at a round (e.g.
	// the oracle complexity) instead of the round number.
	xLabel func(round int) string
	// tight fits a linear y axis to the data range instead of starting at 0.
	tight bool
	// loose overlays (a sweep's theory curves) widen the axis by at most a
	// decade beyond the curves; the others (a run's bound, what its chart
	// is about) always fit.
	loose bool
	// zoom, when set, is the y range [lo, hi] to show (in data units).
	zoom *[2]float64
	// marks are rounds (fractional allowed) where a dotted vertical line is
	// drawn through the empty cells, e.g. a phase boundary.
	marks []float64
	// cursor is the round of the round cursor (0 for none).
	cursor int
	// shared marks cells where two racers' points coincide.
	shared rune
	// labels are annotations written near a point of the chart.
	labels []chartLabel
}

// chartLabel is a short text placed next to the cell of (round, value), in
// empty cells only: above the point, or below, or not at all.
type chartLabel struct {
	round int
	value float64
	text  string
	color string
}

// Chart geometry constants: asciigraph's label cell is labelWidth+1 wide,
// then a space and the axis, so data column j is at screen column
// plotLeft + j; two cells stay free on the right for the last x tick label.
const (
	labelWidth = 7
	plotLeft   = labelWidth + 3
	rightSpare = 2
)

// chartGeom is where a chart put things: the tests read it to check the
// drawing against the values.
type chartGeom struct {
	ok         bool
	rows       int     // plot rows (lines of the plot body)
	lo, hi     float64 // y range in plotted units (log10 on a log axis)
	step       float64 // value per row
	cols       int     // data columns
	roundOfCol []int   // the round each column shows (1-based)
}

// cellsOf counts the cells a sampled curve covers (its points and the
// vertical connectors between them).
func (g chartGeom) cellsOf(vals []float64) int {
	n := 0
	for x := 0; x+1 < len(vals); x++ {
		a, b := vals[x], vals[x+1]
		if math.IsNaN(a) || math.IsNaN(b) || a < g.lo-g.step || a > g.hi+g.step || b < g.lo-g.step || b > g.hi+g.step {
			continue
		}
		n += 1 + abs(g.rowOf(a)-g.rowOf(b))
	}
	return n
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// rowOf returns the plot row (0 at the top) of a plotted value, exactly as
// asciigraph computes it.
func (g chartGeom) rowOf(v float64) int {
	ratio := float64(g.rows-1) / (g.hi - g.lo)
	return g.rows - 1 - int(agRound(v*ratio)-agRound(g.lo*ratio))
}

// centre returns the plotted value at the middle of row w.
func (g chartGeom) centre(w int) float64 { return g.hi - float64(w)*g.step }

// plotChart renders a chart as exactly height lines of at most width cells.
// asciigraph panics on empty data, so an empty or too-small chart gets a
// placeholder instead.
func plotChart(c chartSpec) string {
	out, _ := drawChart(c)
	return out
}

// drawChart is plotChart that also returns the geometry.
func drawChart(c chartSpec) (string, chartGeom) {
	rows := c.height
	if c.xAxis {
		rows -= 2
	}
	maxCols := c.width - plotLeft - rightSpare
	var g chartGeom
	if rows < 2 || maxCols < 4 || c.rounds < 1 {
		return placeholder(c.width, c.height, "too small for a chart"), g
	}
	g.roundOfCol = columns(c.rounds, maxCols)
	g.cols = len(g.roundOfCol)
	g.rows = rows
	lo, hi, ok := yRange(c)
	if !ok {
		return placeholder(c.width, c.height, "waiting for the first round…"), g
	}
	g.lo, g.hi, g.step = snap(lo, hi, rows)
	g.ok = true

	// Series in drawing order: levels, overlays, then racers.
	var all []series
	for _, l := range c.levels {
		if v, ok := plotted(l.value, c.logY); ok {
			vals := make([]float64, g.cols)
			for j := range vals {
				vals[j] = v
			}
			all = append(all, series{values: vals, glyph: l.glyph, color: l.color, racer: -1})
		}
	}
	sample := func(s series) series {
		vals := make([]float64, g.cols)
		for j, r := range g.roundOfCol {
			vals[j] = math.NaN()
			if r-1 < len(s.values) {
				if v, ok := plotted(s.values[r-1], c.logY); ok {
					vals[j] = v
				}
			}
		}
		s.values = vals
		return s
	}
	for _, s := range c.overlays {
		all = append(all, sample(s))
	}
	// Racers are drawn steepest first, so that the flat curves — the
	// plateaus a lesson is about — are drawn last and are not cut by the
	// connectors of curves that pass through them.
	curves := make([]series, len(c.curves))
	cells := make([]int, len(c.curves))
	for i, s := range c.curves {
		curves[i] = sample(s)
		cells[i] = g.cellsOf(curves[i].values)
	}
	order := make([]int, len(curves))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cells[b], cells[a]) })
	for _, i := range order {
		all = append(all, curves[i])
	}
	data := make([][]float64, len(all))
	chars := make([]asciigraph.CharSet, len(all))
	for i, s := range all {
		// Values outside the range (a zoomed axis) are clipped to gaps.
		d := make([]float64, len(s.values))
		for j, v := range s.values {
			// A value within half a step of an end belongs to the end row.
			switch {
			case v >= g.lo && v <= g.hi:
				d[j] = v
			case v >= g.lo-g.step/2 && v < g.lo:
				d[j] = g.lo
			case v > g.hi && v <= g.hi+g.step/2:
				d[j] = g.hi
			default:
				d[j] = math.NaN()
			}
		}
		data[i], chars[i] = d, charSet(s.glyph)
	}
	if len(data) == 0 {
		return placeholder(c.width, c.height, "waiting for the first round…"), g
	}
	opts := []asciigraph.Option{
		asciigraph.Height(rows - 1), asciigraph.Width(g.cols),
		asciigraph.LowerBound(g.lo), asciigraph.UpperBound(g.hi),
		asciigraph.SeriesChars(chars...),
		asciigraph.YAxisValueFormatter(yLabeler(g, c.logY)),
	}
	if c.xAxis {
		xf := func(v float64) string {
			col := min(max(int(math.Round(v)), 0), g.cols-1)
			if c.xLabel != nil {
				return c.xLabel(g.roundOfCol[col])
			}
			return strconv.Itoa(g.roundOfCol[col])
		}
		opts = append(opts, asciigraph.XAxisRange(0, float64(g.cols-1)),
			asciigraph.XAxisTickCount(min(6, max(2, g.cols/12))), asciigraph.XAxisValueFormatter(xf))
	}
	grid := newGrid(asciigraph.PlotMany(data, opts...))
	owner := grid.replay(data, g)
	marked := map[[2]int]bool{}
	if c.shared != 0 {
		marked = sharedCells(all, data, g)
		for cell := range marked {
			grid.set(cell[0], plotLeft+cell[1], c.shared)
		}
	}
	for _, m := range c.marks {
		grid.vline(colOfRound(g, m), rows, c.xAxis, markGlyph, markFoot)
	}
	if c.cursor > 0 {
		grid.vline(colOfRound(g, float64(c.cursor)), rows, c.xAxis, cursorGlyph, cursorFoot)
	}
	labelled := map[[2]int]string{}
	for _, l := range c.labels {
		v, ok := plotted(l.value, c.logY)
		if !ok || v < g.lo-g.step/2 || v > g.hi+g.step/2 {
			continue
		}
		grid.label(g.rowOf(math.Min(math.Max(v, g.lo), g.hi)), colOfRound(g, float64(l.round)), rows, plotLeft+g.cols, []rune(l.text), l.color, labelled)
	}
	colorOf := func(r, x int) string {
		if !c.color {
			return ""
		}
		if col, ok := labelled[[2]int{r, x}]; ok {
			return col
		}
		if x < plotLeft || r >= rows {
			return c.axisColor
		}
		if marked[[2]int{r, x - plotLeft}] {
			return c.axisColor
		}
		if j := x - plotLeft; j < geomCols(owner) {
			if o := owner[r][j]; o >= 0 {
				return all[o].color
			}
		}
		return c.axisColor
	}
	return fitBox(grid.render(colorOf), c.width, c.height), g
}

func geomCols(owner [][]int) int {
	if len(owner) == 0 {
		return 0
	}
	return len(owner[0])
}

// lineGlyph is the glyph of the racer drawn with asciigraph's own line
// characters (─ ╭ ╮ ╰ ╯ │).
const lineGlyph = '─'

// charSet is the asciigraph character set of a glyph.
func charSet(glyph rune) asciigraph.CharSet {
	if glyph == lineGlyph {
		return asciigraph.DefaultCharSet
	}
	return asciigraph.CreateCharSet(string(glyph))
}

// columns returns the round shown by each data column for a chart of at
// most maxCols columns: evenly sampled rounds when there are more rounds
// than columns, otherwise each round repeated over k = maxCols/rounds
// columns.
func columns(rounds, maxCols int) []int {
	if rounds >= maxCols {
		out := make([]int, maxCols)
		for j := range out {
			out[j] = 1 + int(math.Round(float64(j)*float64(rounds-1)/float64(maxCols-1)))
		}
		return out
	}
	k := maxCols / rounds
	out := make([]int, rounds*k)
	for j := range out {
		out[j] = j/k + 1
	}
	return out
}

// colOfRound returns the column nearest to round r (fractional allowed).
func colOfRound(g chartGeom, r float64) int {
	best, bestD := -1, math.Inf(1)
	for j, rj := range g.roundOfCol {
		if d := math.Abs(float64(rj) - r); d < bestD {
			best, bestD = j, d
		}
	}
	// A fractional round between two repeated blocks sits at the block edge.
	if best >= 0 && r != math.Trunc(r) {
		for j, rj := range g.roundOfCol {
			if float64(rj) > r {
				return j
			}
		}
	}
	return best
}

// plotted maps a value to the axis (log10 on a log axis); false for values
// the axis cannot show (≤ 0 on a log axis, non-finite).
func plotted(v float64, logY bool) (float64, bool) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, false
	case logY && v <= 0:
		return 0, false
	case logY:
		return math.Log10(v), true
	}
	return v, true
}

// offChart says where a curve lies against the range yRange gives c: ""
// when some of it is on the chart, else "above the chart" or "below the
// chart".
func offChart(c chartSpec, values []float64) string {
	lo, hi, ok := yRange(c)
	if !ok {
		return ""
	}
	above, below := 0, 0
	for _, v := range values {
		p, ok := plotted(v, c.logY)
		switch {
		case !ok:
		case p > hi:
			above++
		case p < lo:
			below++
		default:
			return ""
		}
	}
	switch {
	case above > 0 && below == 0:
		return "above the chart"
	case below > 0 && above == 0:
		return "below the chart"
	case above > 0:
		return "off the chart"
	}
	return ""
}

// yRange returns the y range to show in plotted units: the zoom if set;
// whole decades around the data on a log axis, so that the axis moves rarely;
// [0, max] (or the data range, tight) on a linear one.
func yRange(c chartSpec) (lo, hi float64, ok bool) {
	if c.zoom != nil {
		a, okA := plotted(c.zoom[0], c.logY)
		b, okB := plotted(c.zoom[1], c.logY)
		if okA && okB && b >= a {
			if b-a < 1e-9 {
				pad := 0.01
				if !c.logY {
					pad = 0.01*math.Abs(a) + 1e-12
				}
				a, b = a-pad, b+pad
			}
			return a, b, true
		}
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	scan := func(vals []float64) {
		for _, v := range vals {
			if p, ok := plotted(v, c.logY); ok {
				lo, hi = math.Min(lo, p), math.Max(hi, p)
			}
		}
	}
	for _, s := range c.curves {
		scan(s.values)
	}
	if math.IsInf(lo, 1) {
		return 0, 0, false
	}
	for _, l := range c.levels {
		scan([]float64{l.value})
	}
	// Overlays (bounds, theory curves) widen the axis by at most a decade
	// on a log axis, half the data's span on a linear one: a bound far from
	// the data (Theorem 3's with C = 1, orders of magnitude above the
	// measured Γ) would otherwise squash the curves it is about. Beyond
	// that margin they are clipped; offChart says so in the legend.
	dlo, dhi := lo, hi
	margin := math.Inf(1)
	switch {
	case c.loose && c.logY:
		margin = 1
	case c.loose:
		margin = math.Max(0.5*(hi-lo), 0.1*math.Abs(hi))
	}
	for _, s := range c.overlays {
		for _, v := range s.values {
			if p, ok := plotted(v, c.logY); ok {
				lo, hi = math.Min(lo, math.Max(p, dlo-margin)), math.Max(hi, math.Min(p, dhi+margin))
			}
		}
	}
	if c.logY {
		lo, hi = math.Floor(lo), math.Ceil(hi)
		if hi-lo < 1 {
			hi = lo + 1
		}
		return lo, hi, true
	}
	if c.tight {
		pad := 0.05 * (hi - lo)
		if pad == 0 {
			pad = 0.01*math.Abs(hi) + 1e-9
		}
		return lo - pad, hi + pad, true
	}
	lo = math.Min(0, lo)
	if hi <= lo {
		hi = lo + 1
	}
	return lo, hi * 1.05, true
}

// snap returns a y range covering [lo, hi] on `rows` rows whose bottom is a
// whole number of steps, so that asciigraph draws exactly `rows` rows, each
// centred on its label's row value (see the comment at the top).
func snap(lo, hi float64, rows int) (slo, shi, step float64) {
	step = (hi - lo) / float64(max(rows-2, 1))
	slo = math.Floor(lo/step) * step
	return slo, slo + float64(rows-1)*step, step
}

// agRound is asciigraph's rounding (halves away from zero).
func agRound(x float64) float64 {
	if x < 0 {
		return -agRound(-x)
	}
	i, f := math.Modf(x)
	if f >= 0.5 {
		return i + 1
	}
	return i
}

// yLabeler labels a row only with a value that lies inside it: a power of
// ten (or 2·10^k, 5·10^k and finer mantissas on a zoomed log axis), or a
// round number on a linear axis, at most one label every two rows.
func yLabeler(g chartGeom, logY bool) func(v float64) string {
	ticks := yTicks(g, logY)
	return func(v float64) string {
		w := int(math.Round((g.hi - v) / g.step))
		return padLeft(ticks[w], labelWidth)
	}
}

// yTicks returns the label of every row (most empty): the nicest values, at
// least two rows apart, each inside the row it labels.
func yTicks(g chartGeom, logY bool) []string {
	labels := make([]string, g.rows)
	// Candidate spacings, coarsest first; take the finest that leaves two
	// rows between labels on average, and label each row that contains a
	// candidate value.
	var cands []float64
	if logY {
		for _, set := range [][]float64{{1}, {1, 2, 5}, {1, 1.5, 2, 3, 5, 7}, {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9}} {
			spacing := math.Inf(1)
			for i := range set {
				next := 10.0
				if i+1 < len(set) {
					next = set[i+1]
				}
				spacing = math.Min(spacing, math.Log10(next/set[i]))
			}
			if spacing < 2*g.step {
				break
			}
			cands = set
		}
		if cands == nil { // less than two rows per decade: powers of ten only
			cands = []float64{1}
		}
	}
	// A log axis narrower than a factor of 2 (a zoom on plateaus) is
	// labelled like a linear one, with round values of the data.
	linearTicks := !logY || g.hi-g.lo < math.Log10(2)
	unit := 0.0
	if logY && linearTicks {
		unit = niceStep(2 * (math.Pow(10, g.hi) - math.Pow(10, g.lo)) / float64(max(g.rows-1, 1)))
	}
	last := -3
	for w := 0; w < g.rows; w++ {
		c := g.centre(w)
		a, b := c-g.step/2, c+g.step/2 // the row's interval [a, b)
		var val float64
		found := false
		if logY && linearTicks {
			lo, hi := math.Pow(10, a), math.Pow(10, b)
			if m := math.Ceil(lo/unit) * unit; m < hi {
				val, found = m, true
			}
		} else if logY {
			for k := math.Floor(a) - 1; k <= math.Ceil(b) && !found; k++ {
				for _, m := range cands {
					x := math.Log10(m) + k
					if x >= a && x < b {
						val, found = math.Pow(10, x), true
						break
					}
				}
			}
			// Powers of ten only: keep every other one when decades are
			// denser than two rows.
			if found && len(cands) == 1 && g.step > 0.5 {
				k := int(math.Round(math.Log10(val)))
				if every := int(math.Ceil(2 * g.step)); k%every != 0 {
					found = false
				}
			}
		} else {
			unit := niceStep(2 * g.step)
			m := math.Ceil(a/unit) * unit
			if m < b {
				val, found = m, true
				if math.Abs(val) < 1e-12*unit {
					val = 0
				}
			}
		}
		if found && w-last >= 2 {
			if s := tickIn(val, a, b, logY); s != "" {
				labels[w], last = s, w
			}
		}
	}
	// A chart too short for any nice value inside a row (four rows over
	// two decades) still says where it is: its top and bottom rows are
	// labelled with their own values, to two digits.
	if last < 0 && g.rows > 0 {
		at := func(w int) string {
			c := g.centre(w)
			v := c
			if logY {
				v = math.Pow(10, c)
			}
			return tickIn(v, c-g.step/2, c+g.step/2, logY)
		}
		labels[0] = at(0)
		if g.rows > 2 {
			labels[g.rows-1] = at(g.rows - 1)
		}
	}
	return labels
}

// tickIn formats v, a value inside the row [a, b) of plotted units, with
// the fewest digits whose value still lies in the row ("" when none fits
// the label column): a label never names a value of another row.
func tickIn(v, a, b float64, logY bool) string {
	inRow := func(s string) bool {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return false
		}
		p, ok := plotted(x, logY)
		if x == 0 && !logY {
			p, ok = 0, true
		}
		return ok && p >= a && p < b
	}
	if s := formatTick(v); inRow(s) {
		return s
	}
	for digits := 2; digits <= 8; digits++ {
		s := strconv.FormatFloat(v, 'g', digits, 64)
		s = strings.Replace(strings.Replace(s, "e-0", "e-", 1), "e+0", "e+", 1)
		if len(s) > labelWidth {
			break
		}
		if inRow(s) {
			return s
		}
	}
	return ""
}

// niceStep returns the smallest 1, 2 or 5 × 10^k at least x.
func niceStep(x float64) float64 {
	if !(x > 0) {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*e >= x*(1-1e-12) {
			return m * e
		}
	}
	return 10 * e
}

// formatTick writes a tick value in at most labelWidth cells: 0.01, 250,
// 1e-05, 2.5e+06.
func formatTick(v float64) string {
	if v == 0 {
		return "0"
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if a := math.Abs(v); len(s) <= labelWidth && a >= 1e-3 && a < 1e6 {
		return s
	}
	s = strconv.FormatFloat(v, 'g', 3, 64)
	s = strings.Replace(strings.Replace(s, "e-0", "e-", 1), "e+0", "e+", 1)
	return s
}

func padLeft(s string, w int) string {
	if n := ansi.StringWidth(s); n < w {
		return strings.Repeat(" ", w-n) + s
	}
	return s
}

// fitBox pads or cuts text to exactly h lines of at most w cells.
func fitBox(s string, w, h int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			lines[i] = ansi.Truncate(l, w, "")
		}
	}
	return strings.Join(lines, "\n")
}

func placeholder(w, h int, msg string) string {
	lines := make([]string, max(h, 0))
	if h > 0 {
		lines[h/2] = ansi.Truncate(padLeft(msg, (w+len(msg))/2), max(w, 0), "")
	}
	return strings.Join(lines, "\n")
}

// Glyphs drawn over the chart.
const (
	markGlyph   = '┊' // a vertical mark, e.g. the phase boundary
	markFoot    = '┴'
	cursorGlyph = '│' // the round cursor
	cursorFoot  = '▲'
)

// grid is a rendered chart as cells, so that marks can be drawn into it and
// colours applied per cell.
type grid [][]rune

func newGrid(s string) grid {
	lines := strings.Split(s, "\n")
	g := make(grid, len(lines))
	for i, l := range lines {
		g[i] = []rune(l)
	}
	return g
}

func (g grid) at(r, x int) rune {
	if r < 0 || r >= len(g) || x < 0 || x >= len(g[r]) {
		return ' '
	}
	return g[r][x]
}

func (g grid) set(r, x int, ch rune) {
	if r < 0 || r >= len(g) || x < 0 {
		return
	}
	for len(g[r]) <= x {
		g[r] = append(g[r], ' ')
	}
	g[r][x] = ch
}

// vline draws a vertical line at data column col through the empty plot
// cells (data stay visible) and its foot on the x axis.
func (g grid) vline(col, rows int, xAxis bool, glyph, foot rune) {
	if col < 0 {
		return
	}
	x := plotLeft + col
	for r := 0; r < rows; r++ {
		if g.at(r, x) == ' ' {
			g.set(r, x, glyph)
		}
	}
	if xAxis && rows < len(g) {
		if ch := g.at(rows, x); ch == '─' || ch == '┬' {
			g.set(rows, x, foot)
		}
	}
}

// label writes text into empty plot cells near (row, col): the nearest
// free place on the rows above and below (up to four away), ending at the
// point, starting there, or slid a little along the row; nothing when no
// place is empty. It reports whether the label was placed.
func (g grid) label(row, col, rows, maxX int, text []rune, color string, placed map[[2]int]string) bool {
	if col < 0 {
		return false
	}
	x0 := plotLeft + col
	n := len(text)
	fits := func(r, start int) bool {
		if start < plotLeft || start+n > maxX {
			return false
		}
		for i := 0; i < n; i++ {
			if g.at(r, start+i) != ' ' {
				return false
			}
		}
		return true
	}
	// First a place that ends or starts at the point's column on any of
	// the nearby rows, then one slid along by at most a third of the label:
	// a label slid further reads as naming another curve.
	for _, slide := range []int{0, n / 3} {
		for _, dr := range []int{-1, 1, -2, 2, -3, 3, -4, 4} {
			r := row + dr
			if r < 0 || r >= rows {
				continue
			}
			for shift := 0; shift <= slide; shift += max(1, n/12) {
				for _, start := range []int{x0 - n + 1 - shift, x0 + shift} {
					if !fits(r, start) {
						continue
					}
					for i, ch := range text {
						g.set(r, start+i, ch)
						placed[[2]int{r, start + i}] = color
					}
					return true
				}
			}
		}
	}
	return false
}

// replay repeats asciigraph's drawing of the series and returns, per plot
// cell, the index of the series drawn there last (−1 for none).
func (g grid) replay(data [][]float64, geom chartGeom) [][]int {
	owner := make([][]int, geom.rows)
	for r := range owner {
		owner[r] = make([]int, geom.cols)
		for j := range owner[r] {
			owner[r][j] = -1
		}
	}
	for i, s := range data {
		for x := 0; x+1 < len(s); x++ {
			d0, d1 := s[x], s[x+1]
			n0, n1 := math.IsNaN(d0), math.IsNaN(d1)
			switch {
			case n0 && n1:
				continue
			case n1:
				owner[geom.rowOf(d0)][x] = i
				continue
			case n0:
				owner[geom.rowOf(d1)][x] = i
				continue
			}
			r0, r1 := geom.rowOf(d0), geom.rowOf(d1)
			for r := min(r0, r1); r <= max(r0, r1); r++ {
				owner[r][x] = i
			}
		}
	}
	return owner
}

// sharedCells returns the plot cells where the points of two or more racers
// coincide (the cell of a column's own value; curves only cross elsewhere).
func sharedCells(all []series, data [][]float64, geom chartGeom) map[[2]int]bool {
	seen := map[[2]int]int{}
	out := map[[2]int]bool{}
	for i, s := range all {
		if s.racer < 0 {
			continue
		}
		for x := 0; x+1 < len(data[i]); x++ {
			v := data[i][x]
			if math.IsNaN(v) {
				continue
			}
			cell := [2]int{geom.rowOf(v), x}
			if r, ok := seen[cell]; ok && r != s.racer {
				out[cell] = true
			}
			seen[cell] = s.racer
		}
	}
	return out
}

// render writes the grid with colours: colorOf(row, x) gives the SGR
// parameters of a cell, written once per run of equal colour.
func (g grid) render(colorOf func(r, x int) string) string {
	var b strings.Builder
	for r, line := range g {
		if r > 0 {
			b.WriteByte('\n')
		}
		cur := ""
		for x, ch := range line {
			col := ""
			if ch != ' ' {
				col = colorOf(r, x)
			} else {
				col = cur // spaces keep the current colour: fewer escapes
			}
			if col != cur {
				if cur != "" {
					b.WriteString("\x1b[0m")
				}
				if col != "" {
					b.WriteString("\x1b[" + col + "m")
				}
				cur = col
			}
			b.WriteRune(ch)
		}
		if cur != "" {
			b.WriteString("\x1b[0m")
		}
	}
	return b.String()
}
