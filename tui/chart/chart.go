// Package chart draws fedscope's line charts into a fixed box of terminal
// cells: asciigraph draws the axis and the curves, this package fixes the
// geometry so that the picture is a claim that holds exactly, and places
// what asciigraph does not draw (the x axis with nice ticks, marks, the
// cursor, shared-cell marks, clipping arrows and annotations).
//
// The claim:
//
//   - every glyph sits in the row whose value interval contains the value it
//     stands for: the y range [lo, hi] is snapped so that lo/step is a whole
//     number and hi = lo + (rows−1)·step, so asciigraph draws exactly the rows
//     asked for, row w (0 at the top) is centred on hi − w·step, and a value
//     v is drawn in row round((hi − v)/step);
//   - every y label names a value inside its row, every x tick the value of
//     its column;
//   - every chart column holds one data point (asciigraph's interpolation is
//     then the identity): column j shows one position, sampled evenly when
//     the positions outnumber the columns, repeated over k columns when they
//     are fewer (a step plot of the computed values, never interpolated ones);
//   - by default (YAuto) a log axis that is too coarse to tell the curves'
//     final values apart is narrowed until it does, and the curves that leave
//     it are marked with ▲ and ▼ where they cross its edge;
//   - an annotation sits on or next to its own curve, nearer to it than to
//     any other curve, or is not drawn.
//
// The package knows nothing of federated learning or of Bubble Tea.
package chart

import (
	"math"

	"github.com/guptarohit/asciigraph"
)

// Series is one curve: a value per x position 1…Points (NaN where absent).
type Series struct {
	Values []float64
	Glyph  rune
	Color  string // SGR colour parameters, e.g. "38;5;33"; "" for none
	// Racer identifies the racer the curve belongs to (−1 for overlays and
	// levels): shared cells are marked, and labels placed, only between
	// racers.
	Racer int
}

// Level is a horizontal dashed line at a value.
type Level struct {
	Value float64
	Glyph rune
	Color string
}

// Label is a short text about one racer's curve, anchored at the point
// (Pos, Value): drawn next to or on that curve (see place).
type Label struct {
	Pos   int
	Value float64
	Text  string
	// Short is a shorter text tried where Text finds no place ("" for
	// none).
	Short string
	Color string
	Racer int
}

// Tick is a labelled x position (1-based; fractional between two columns).
type Tick struct {
	Pos   float64
	Label string
}

// XAxis says how much of the x axis a chart draws.
type XAxis int

const (
	// XNone draws no axis below the plot.
	XNone XAxis = iota
	// XLine draws the axis line with its tick marks (a chart stacked above
	// another that shares its x axis).
	XLine
	// XFull draws the axis line and the tick labels.
	XFull
)

// YMode chooses the y range.
type YMode int

const (
	// YAuto shows the whole range of the data, narrowed on a log axis to
	// the range that puts the curves' distinct final values on distinct rows
	// when the whole range cannot (the curves that leave it are marked).
	YAuto YMode = iota
	// YFull shows the whole range of the data.
	YFull
)

// Spec describes one chart to draw into a fixed box.
type Spec struct {
	Width, Height int      // the whole box, labels and x axis included
	Points        int      // x runs over positions 1…Points
	LogY          bool     // log10 y axis
	Curves        []Series // racers, drawn steepest first (plateaus on top)
	Overlays      []Series // dashed curves drawn under the racers (bounds)
	Levels        []Level  // horizontal dashed lines, drawn first
	// Range, when set, are the values that fix the y range in place of the
	// curves' (e.g. every round computed, of which the curves show the ones
	// revealed so far): the axis then stays still while the curves grow.
	Range [][]float64
	Mode  YMode
	// Zoom, when set, is the y range [lo, hi] to show (data units); it
	// overrides Mode.
	Zoom *[2]float64
	// Tight fits a linear y axis to the data instead of starting at 0.
	Tight bool
	// Loose overlays (theory curves) widen the axis by at most a decade
	// beyond the curves; the others (a run's bound) always fit.
	Loose bool

	XAxis XAxis
	Ticks []Tick // the x ticks (labels drawn only with XFull)

	Color     bool   // emit ANSI colours
	AxisColor string // SGR colour of labels and axes

	Marks  []float64 // positions of dotted vertical lines (a phase boundary)
	Cursor int       // the position of the round cursor (0 for none)
	Shared rune      // marks cells where two racers' points coincide (0: none)
	Labels []Label
}

// Chart geometry: asciigraph's label cell is LabelWidth+1 wide, then a
// space and the axis, so data column j is at screen column PlotLeft + j;
// two cells stay free on the right for the last x tick label.
const (
	LabelWidth = 7
	PlotLeft   = LabelWidth + 3
	RightSpare = 2
)

// Glyphs the chart draws over the curves.
const (
	MarkGlyph   = '┊' // a vertical mark, e.g. the phase boundary
	markFoot    = '┴'
	CursorGlyph = '│' // the round cursor
	cursorFoot  = '▲'
	UpGlyph     = '▲' // a curve above the chart from here on
	DownGlyph   = '▼' // a curve below the chart from here on
)

// Geom is where a chart put things: the views and the tests read it to check
// the drawing against the values.
type Geom struct {
	OK       bool
	Rows     int     // plot rows (lines of the plot body)
	Lo, Hi   float64 // y range in plotted units (log10 on a log axis)
	Step     float64 // plotted units per row
	Log      bool
	Cols     int   // data columns
	PosOfCol []int // the position each column shows (1-based)
	// Clipped is set when YAuto narrowed the range: some curves leave it.
	Clipped bool
	// Racer[row][col] is the racer drawn last in a plot cell (−1: none or
	// not a racer).
	Racer [][]int
	// Spans[racer][col] is the rows [top, bottom] racer's curve covers in
	// column col (top > bottom when it has none there).
	Spans map[int][][2]int
	// Placed are the labels drawn; Dropped the ones that found no place.
	Placed  []Placed
	Dropped []Label
}

// Placed is a label where it was drawn: row, first and last data column.
type Placed struct {
	Label
	Row, From, To int
}

// RowOf returns the plot row (0 at the top) of a plotted value, exactly as
// asciigraph computes it.
func (g Geom) RowOf(v float64) int {
	ratio := float64(g.Rows-1) / (g.Hi - g.Lo)
	return g.Rows - 1 - int(agRound(v*ratio)-agRound(g.Lo*ratio))
}

// Centre returns the plotted value at the middle of row w.
func (g Geom) Centre(w int) float64 { return g.Hi - float64(w)*g.Step }

// Interval returns the plotted values [a, b) that row w stands for.
func (g Geom) Interval(w int) (a, b float64) {
	c := g.Centre(w)
	return c - g.Step/2, c + g.Step/2
}

// In reports whether a plotted value lies inside the range drawn (ends
// included up to half a row).
func (g Geom) In(p float64) bool { return p >= g.Lo-g.Step/2 && p <= g.Hi+g.Step/2 }

// Plotted maps a value to the axis of a chart (log10 on a log axis); false
// for values the axis cannot show (≤ 0 on a log axis, non-finite).
func Plotted(v float64, logY bool) (float64, bool) {
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

// Draw renders a chart as exactly Height lines of at most Width cells, and
// returns where it put things. asciigraph panics on empty data, so an empty
// or too small chart gets a placeholder instead (Geom.OK false).
func Draw(c Spec) (string, Geom) {
	rows := c.Height - xAxisLines(c.XAxis)
	maxCols := c.Width - PlotLeft - RightSpare
	var g Geom
	if rows < 2 || maxCols < 4 || c.Points < 1 {
		return Placeholder(c.Width, c.Height, "too small for a chart"), g
	}
	g.PosOfCol = columns(c.Points, maxCols, tickPositions(c.Ticks))
	g.Cols = len(g.PosOfCol)
	g.Rows = rows
	g.Log = c.LogY
	lo, hi, clipped, ok := yRange(c, rows)
	if !ok {
		return emptyChart(c, g), g
	}
	g.Lo, g.Hi, g.Step = snap(lo, hi, rows)
	g.Clipped = clipped
	g.OK = true

	all := drawOrder(c, g)
	data := make([][]float64, len(all))
	chars := make([]asciigraph.CharSet, len(all))
	for i, s := range all {
		data[i], chars[i] = clip(s.Values, g), charSet(s.Glyph)
	}
	body := asciigraph.PlotMany(data,
		asciigraph.Height(rows-1), asciigraph.Width(g.Cols),
		asciigraph.LowerBound(g.Lo), asciigraph.UpperBound(g.Hi),
		asciigraph.SeriesChars(chars...),
		asciigraph.YAxisValueFormatter(yLabeler(g)))
	gr := newGrid(body)
	owner := gr.replay(data, g)
	g.Racer, g.Spans = racerCells(owner, all, data, g)
	p := paint{c: c, g: &g, all: all, owner: owner}
	p.decorate(&gr, data)
	return FitBox(gr.render(p.colorOf), c.Width, c.Height), g
}

// paint is what Draw draws over asciigraph's output and how it colours the
// cells.
type paint struct {
	c        Spec
	g        *Geom
	all      []Series
	owner    [][]int           // series drawn last in each plot cell
	marked   map[[2]int]bool   // shared cells (plot coordinates)
	arrows   map[[2]int]string // ▲ ▼ marks and their colours (screen coordinates)
	labelled map[[2]int]string // label cells and their colours (screen coordinates)
}

// decorate marks the shared cells, the arrows, the x axis, the marks, the
// cursor and the labels into the grid.
func (p *paint) decorate(gp *grid, data [][]float64) {
	c, g, gr := p.c, p.g, *gp
	p.marked = map[[2]int]bool{}
	if c.Shared != 0 {
		p.marked = sharedCells(p.all, data, *g)
		for cell := range p.marked {
			gr.set(cell[0], PlotLeft+cell[1], c.Shared)
			g.Racer[cell[0]][cell[1]] = -1
		}
	}
	p.arrows = gr.arrows(p.all, *g)
	if c.XAxis != XNone {
		gp.xAxis(c, *g) // appends the axis lines
		gr = *gp
	}
	for _, m := range c.Marks {
		gr.vline(colOfPos(*g, m), g.Rows, c.XAxis != XNone, MarkGlyph, markFoot)
	}
	if c.Cursor > 0 {
		gr.vline(colOfPos(*g, float64(c.Cursor)), g.Rows, c.XAxis != XNone, CursorGlyph, cursorFoot)
	}
	p.labelled = map[[2]int]string{}
	g.Placed, g.Dropped = gr.place(c.Labels, *g, p.labelled)
}

// colorOf is the SGR colour of a screen cell: a label's or an arrow's own,
// the axis colour for the furniture and shared cells, else the colour of the
// series drawn there.
func (p *paint) colorOf(r, x int) string {
	c := p.c
	if !c.Color {
		return ""
	}
	if col, ok := p.labelled[[2]int{r, x}]; ok {
		return col
	}
	if col, ok := p.arrows[[2]int{r, x}]; ok {
		return col
	}
	if x < PlotLeft || r >= p.g.Rows || p.marked[[2]int{r, x - PlotLeft}] {
		return c.AxisColor
	}
	if j := x - PlotLeft; j < p.g.Cols {
		if o := p.owner[r][j]; o >= 0 {
			return p.all[o].Color
		}
	}
	return c.AxisColor
}

// emptyChart draws the frame of a chart with nothing to plot yet (before
// the first round, or with every racer hidden): the x axis and a note, so
// that a paused screen is never blank.
func emptyChart(c Spec, g Geom) string {
	note := Placeholder(c.Width, g.Rows, "no value to draw yet")
	if c.XAxis == XNone {
		return FitBox(note, c.Width, c.Height)
	}
	gr := newGrid(note)
	for len(gr) < g.Rows {
		gr = append(gr, nil)
	}
	gr.xAxis(c, g)
	return FitBox(gr.render(func(int, int) string { return "" }), c.Width, c.Height)
}

// drawOrder lists the series in drawing order: levels, overlays, then the
// racers steepest first, so that the flat curves — the plateaus a lesson is
// about — are drawn last and are not cut by the connectors of curves that
// pass through them. Values are sampled at the columns' positions and
// mapped to plotted units.
func drawOrder(c Spec, g Geom) []Series {
	var all []Series
	for _, l := range c.Levels {
		if v, ok := Plotted(l.Value, c.LogY); ok {
			vals := make([]float64, g.Cols)
			for j := range vals {
				vals[j] = v
			}
			all = append(all, Series{Values: vals, Glyph: l.Glyph, Color: l.Color, Racer: -1})
		}
	}
	sample := func(s Series) Series {
		vals := make([]float64, g.Cols)
		for j, p := range g.PosOfCol {
			vals[j] = math.NaN()
			if p-1 < len(s.Values) {
				if v, ok := Plotted(s.Values[p-1], c.LogY); ok {
					vals[j] = v
				}
			}
		}
		s.Values = vals
		return s
	}
	for _, s := range c.Overlays {
		s = sample(s)
		s.Racer = -1
		all = append(all, s)
	}
	curves := make([]Series, len(c.Curves))
	cells := make([]int, len(c.Curves))
	for i, s := range c.Curves {
		curves[i] = sample(s)
		cells[i] = g.cellsOf(curves[i].Values)
	}
	order := make([]int, len(curves))
	for i := range order {
		order[i] = i
	}
	// Steepest first: stable insertion sort on the cell counts, descending.
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && cells[order[j]] > cells[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	for _, i := range order {
		all = append(all, curves[i])
	}
	return all
}

// clip maps the values outside the range to gaps (a value within half a row
// of an end belongs to the end row).
func clip(vals []float64, g Geom) []float64 {
	d := make([]float64, len(vals))
	for j, v := range vals {
		switch {
		case v >= g.Lo && v <= g.Hi:
			d[j] = v
		case v >= g.Lo-g.Step/2 && v < g.Lo:
			d[j] = g.Lo
		case v > g.Hi && v <= g.Hi+g.Step/2:
			d[j] = g.Hi
		default:
			d[j] = math.NaN()
		}
	}
	return d
}

// cellsOf counts the cells a sampled curve covers (its points and the
// vertical connectors between them): the steeper, the more.
func (g Geom) cellsOf(vals []float64) int {
	n := 0
	for x := 0; x+1 < len(vals); x++ {
		a, b := vals[x], vals[x+1]
		if math.IsNaN(a) || math.IsNaN(b) || !g.In(a) || !g.In(b) {
			continue
		}
		n += 1 + abs(g.RowOf(a)-g.RowOf(b))
	}
	return n
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// LineGlyph is the glyph of the racer drawn with asciigraph's own line
// characters (─ ╭ ╮ ╰ ╯ │).
const LineGlyph = '─'

// charSet is the asciigraph character set of a glyph.
func charSet(glyph rune) asciigraph.CharSet {
	if glyph == LineGlyph {
		return asciigraph.DefaultCharSet
	}
	return asciigraph.CreateCharSet(string(glyph))
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
