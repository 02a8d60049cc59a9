// Package figure draws fedscope's charts as SVG figures for papers and
// slides, with gonum.org/v1/plot: one panel per chart, one line per racer
// (a colour and a dash pattern of its own, named in the legend), log axes
// where the explorer uses them, and the reference levels, the papers'
// predictions and the bounds dashed, as the explorer draws them. A panel is
// drawn from a Frame, the rows of a CSV file, and an experiment.Chart, what
// the family declares about the metric; `fedscope run|sweep --plot` and
// `fedscope reproduce` draw through Write.
package figure

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/fedscope/fedscope/experiment"
)

// Panel is one chart of a figure: a title, what the family declares about
// the metric, and the rows to draw.
type Panel struct {
	Title string
	Chart experiment.Chart
	Frame *experiment.Frame
	// X, when set, replaces the chart's x column (e.g. the oracle
	// complexity of paper 001, the measured Γ of a sweep).
	X string
	// Linear draws the y axis linear where the chart's is log.
	Linear bool
	// XLabel names the x axis when X replaces the chart's column.
	XLabel string
}

// Size of one panel.
const (
	panelW  = 4.4 * vg.Inch
	legendW = 1.9 * vg.Inch
	panelH  = 3.4 * vg.Inch
	titleH  = 0.32 * vg.Inch
)

// Palette is the racers' colours (Okabe–Ito, readable by the colour-blind
// and on a projector), in racer order; the dash patterns below tell them
// apart in grey.
var Palette = []color.NRGBA{
	{0x00, 0x72, 0xB2, 0xFF}, // blue
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0xE6, 0x9F, 0x00, 0xFF}, // orange
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0x00, 0x00, 0x00, 0xFF}, // black
	{0x88, 0x66, 0x00, 0xFF}, // brown
}

// reference is the colour of levels and predictions not tied to a racer.
var reference = color.NRGBA{0x55, 0x55, 0x55, 0xFF}

// dashed is the pattern of every reference, prediction and bound line.
var dashed = []vg.Length{vg.Points(5), vg.Points(3)}

// Write draws the panels as one SVG figure under a title, cols panels per
// row (0: up to three). The same panels give the same bytes.
func Write(w io.Writer, title string, panels []Panel, cols int) error {
	if len(panels) == 0 {
		return fmt.Errorf("figure %q: no panel to draw", title)
	}
	if cols <= 0 {
		cols = min(3, len(panels))
	}
	rows := (len(panels) + cols - 1) / cols
	plots, err := drawPanels(title, panels, rows, cols)
	if err != nil {
		return err
	}
	width := vg.Length(cols) * (panelW + legendW)
	ts := draw.TextStyle{Color: color.Black, Font: font.From(sans(true), 13), XAlign: draw.XCenter, YAlign: draw.YTop,
		Handler: plot.DefaultTextHandler}
	title = wrap(title, int(width/vg.Points(8.5)))
	head := titleH * vg.Length(strings.Count(title, "\n")+1)
	height := vg.Length(rows)*panelH + head
	svg := vgsvg.New(width, height)
	dc := draw.New(svg)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	dc.FillText(ts, vg.Point{X: width / 2, Y: height - vg.Points(6)}, title)
	body := draw.Crop(dc, 0, 0, 0, -head)
	// Each tile holds a plot and, on its right, the plot's legend, so
	// that the legend never hides a curve.
	legends := takeLegends(plots)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(12) + legendW, PadY: vg.Points(14),
		PadLeft: vg.Points(6), PadRight: vg.Points(6) + legendW, PadBottom: vg.Points(6)}
	drawTiles(plots, legends, plot.Align(plots, tiles, body))
	_, err = svg.WriteTo(w)
	return err
}

// drawPanels lays the panels' plots out in rows of cols, one colour per
// racer across all of them.
func drawPanels(title string, panels []Panel, rows, cols int) ([][]*plot.Plot, error) {
	racers := racerOrder(panels)
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	for i, p := range panels {
		pl, err := drawPanel(p, racers)
		if err != nil {
			return nil, fmt.Errorf("figure %q, panel %q: %w", title, p.Title, err)
		}
		plots[i/cols][i%cols] = pl
	}
	return plots, nil
}

// takeLegends moves each plot's legend out of it, to be drawn beside the
// plot rather than over it.
func takeLegends(plots [][]*plot.Plot) [][]plot.Legend {
	legends := make([][]plot.Legend, len(plots))
	for r := range plots {
		legends[r] = make([]plot.Legend, len(plots[r]))
		for c, pl := range plots[r] {
			if pl != nil {
				legends[r][c] = pl.Legend
				pl.Legend = plot.NewLegend()
			}
		}
	}
	return legends
}

// drawTiles draws each plot on its canvas and its legend in the strip to
// the canvas's right.
func drawTiles(plots [][]*plot.Plot, legends [][]plot.Legend, canvases [][]draw.Canvas) {
	for r := range plots {
		for c := range plots[r] {
			if plots[r][c] == nil {
				continue
			}
			plots[r][c].Draw(canvases[r][c])
			cv := canvases[r][c]
			leg := legends[r][c]
			leg.Top, leg.Left = true, true
			leg.TextStyle.XAlign = draw.XLeft
			leg.Draw(draw.Canvas{Canvas: cv.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: cv.Max.X + vg.Points(8), Y: cv.Min.Y},
				Max: vg.Point{X: cv.Max.X + legendW, Y: cv.Max.Y - vg.Points(18)}}})
		}
	}
}

// wrap breaks text into lines of at most n characters at spaces.
func wrap(text string, n int) string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > n {
			lines = append(lines, line)
			line = word
			continue
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return strings.Join(append(lines, line), "\n")
}

// legend names a line in the legend, on as many lines as its label
// needs (the thumbnail on the first).
func legend(pl *plot.Plot, label string, thumb plot.Thumbnailer) {
	for i, line := range strings.Split(wrap(label, 34), "\n") {
		if i == 0 {
			pl.Legend.Add(line, thumb)
		} else {
			pl.Legend.Add("  " + line)
		}
	}
}

// sans is the Liberation Sans font, bold or regular.
func sans(bold bool) font.Font {
	f := font.Font{Typeface: "Liberation", Variant: "Sans"}
	if bold {
		f.Weight = xfont.WeightBold
	}
	return f
}

// racerOrder fixes one colour per racer across the panels of a figure.
func racerOrder(panels []Panel) map[string]int {
	out := map[string]int{}
	for _, p := range panels {
		for _, r := range p.Frame.Labels() {
			if _, ok := out[r]; !ok {
				out[r] = len(out)
			}
		}
	}
	return out
}

// style of racer i: its colour and, beyond the first, a dash pattern, so
// that a grey print loses nothing.
func style(i int) draw.LineStyle {
	patterns := [][]vg.Length{nil, {vg.Points(8), vg.Points(2)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}}
	return draw.LineStyle{Color: Palette[i%len(Palette)], Width: vg.Points(1.6), Dashes: patterns[(i/len(Palette)+i)%len(patterns)]}
}

// drawPanel builds the plot of one panel: the racers' lines first, then
// the levels and predictions, then the marks, in that drawing order.
func drawPanel(p Panel, racers map[string]int) (*plot.Plot, error) {
	ch := p.Chart
	if p.Linear {
		ch.LogY = false
	}
	xcol := ch.X
	scale := ch.XScale
	if p.X != "" && p.X != ch.X {
		xcol, scale = p.X, "auto"
	}
	pl := newPanelPlot(p, ch, xcol)
	series, ys, err := panelSeries(p.Frame, ch, xcol)
	if err != nil {
		return nil, err
	}
	ax := panelAxes{ch: ch, xcol: xcol, logY: ch.LogY && len(ys) > 0}
	var allX []float64
	for _, s := range series {
		allX = append(allX, s[0]...)
	}
	ax.tx = newXAxis(scale, ch.Grid, allX)
	ax.setScales(pl)
	ax.ylo, ax.yhi = span(ys)
	ax.xlo, ax.xhi = span(ax.tx.mapAll(allX))
	for _, r := range p.Frame.Labels() {
		if err := ax.addRacer(pl, p.Frame, r, series[r], racers[r]); err != nil {
			return nil, err
		}
	}
	ax.addLevels(pl)
	ax.addTheory(pl, racers)
	ax.addMarks(pl)
	return pl, nil
}

// newPanelPlot is a panel's empty plot: its title, axis labels, fonts,
// grid and linear ticks.
func newPanelPlot(p Panel, ch experiment.Chart, xcol string) *plot.Plot {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.Title.TextStyle.Font = font.From(sans(true), 11)
	xl := xLabel(ch, xcol)
	if p.XLabel != "" && xcol != ch.X {
		xl = p.XLabel
	}
	pl.X.Label.Text = wrap(xl, 60)
	pl.Y.Label.Text = wrap(ch.Caption, 32)
	for _, a := range []*plot.Axis{&pl.X, &pl.Y} {
		a.Label.TextStyle.Font = font.From(sans(false), 9)
		a.Tick.Label.Font = font.From(sans(false), 9)
	}
	pl.Legend.TextStyle.Font = font.From(sans(false), 8)
	pl.Add(plotter.NewGrid())
	pl.X.Tick.Marker, pl.Y.Tick.Marker = linearTicks{}, linearTicks{}
	return pl
}

// panelSeries reads every racer's (x, y) series, and the y values a
// y axis must show: the finite ones, and on a log axis only the positive.
func panelSeries(f *experiment.Frame, ch experiment.Chart, xcol string) (map[string][2][]float64, []float64, error) {
	series := map[string][2][]float64{}
	var ys []float64
	for _, r := range f.Labels() {
		xs, vs, err := f.Series(r, xcol, ch.Column)
		if err != nil {
			return nil, nil, err
		}
		series[r] = [2][]float64{xs, vs}
		for _, v := range vs {
			if finite(v) && (!ch.LogY || v > 0) {
				ys = append(ys, v)
			}
		}
	}
	return series, ys, nil
}

// panelAxes is where a panel's lines go: its chart, x column and axis,
// whether y is logarithmic, and the extent of the racers' values.
type panelAxes struct {
	ch                 experiment.Chart
	xcol               string
	tx                 xAxis
	logY               bool
	xlo, xhi, ylo, yhi float64
}

// setScales gives the plot the axes' scales and ticks.
func (ax *panelAxes) setScales(pl *plot.Plot) {
	if ax.tx.log {
		pl.X.Scale = plot.LogScale{}
		pl.X.Tick.Marker = logTicks{}
	}
	if ax.tx.index != nil {
		pl.X.Tick.Marker = ax.tx.ticks()
	}
	if ax.logY {
		pl.Y.Scale = plot.LogScale{}
		pl.Y.Tick.Marker = logTicks{}
	}
}

// addRacer draws racer r (colour index i): its line split where a value is
// missing (a divergence), an isolated value as a dot, its name in the
// legend even when nothing is drawable, and its bound.
func (ax *panelAxes) addRacer(pl *plot.Plot, f *experiment.Frame, r string, s [2][]float64, i int) error {
	st := style(i)
	named := false
	for _, seg := range segments(ax.tx, s[0], s[1], ax.logY) {
		if len(seg) == 1 { // an isolated value: a dot, not an invisible line
			dot, err := plotter.NewScatter(seg)
			if err != nil {
				return err
			}
			dot.GlyphStyle = draw.GlyphStyle{Color: st.Color, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
			pl.Add(dot)
			continue
		}
		l, err := plotter.NewLine(seg)
		if err != nil {
			return err
		}
		l.LineStyle = st
		pl.Add(l)
		if !named {
			legend(pl, r, l)
			named = true
		}
	}
	if !named { // every value isolated, or none drawable: still named
		l := &plotter.Line{LineStyle: st}
		legend(pl, r, l)
	}
	if ax.ch.Bound != "" {
		return addBound(pl, f, r, ax.xcol, ax.ch.Bound, ax.tx, ax.logY, st.Color, i == 0)
	}
	return nil
}

// addLevels draws the chart's reference levels, dashed across the racers' x range.
func (ax *panelAxes) addLevels(pl *plot.Plot) {
	for _, l := range ax.ch.Levels {
		if ax.logY && l.Value <= 0 || ax.xhi <= ax.xlo {
			continue
		}
		addLine(pl, plotter.XYs{{X: ax.xlo, Y: l.Value}, {X: ax.xhi, Y: l.Value}}, reference, l.Label)
	}
}

// addTheory draws the papers' predictions, dashed in the colour of the
// racer they predict: a vertical line at a round, or a curve over the grid.
func (ax *panelAxes) addTheory(pl *plot.Plot, racers map[string]int) {
	for _, t := range ax.ch.Theory {
		c := reference
		if i, ok := racers[t.Racer]; ok {
			c = Palette[i%len(Palette)]
		}
		if t.Curve == nil {
			x := ax.tx.mapOne(float64(t.At))
			if finite(x) && ax.ylo < ax.yhi {
				addLine(pl, plotter.XYs{{X: x, Y: ax.ylo}, {X: x, Y: ax.yhi}}, c, t.Label)
			}
			continue
		}
		var xy plotter.XYs
		for i, v := range t.Curve {
			if i < len(ax.ch.Grid) && finite(float64(v)) && (!ax.logY || v > 0) {
				if x := ax.tx.mapOne(ax.ch.Grid[i]); finite(x) {
					xy = append(xy, plotter.XY{X: x, Y: float64(v)})
				}
			}
		}
		if len(xy) > 0 {
			addLine(pl, xy, c, t.Label)
		}
	}
}

// addMarks draws the chart's marks, thin dotted verticals left out of the legend.
func (ax *panelAxes) addMarks(pl *plot.Plot) {
	for _, m := range ax.ch.Marks {
		if x := ax.tx.mapOne(m.At); finite(x) && ax.ylo < ax.yhi {
			l, _ := plotter.NewLine(plotter.XYs{{X: x, Y: ax.ylo}, {X: x, Y: ax.yhi}})
			l.LineStyle = draw.LineStyle{Color: color.NRGBA{0x99, 0x99, 0x99, 0xFF}, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(1), vg.Points(2)}}
			pl.Add(l)
		}
	}
}

// addLine adds a dashed line named in the legend.
func addLine(pl *plot.Plot, xy plotter.XYs, c color.Color, label string) {
	l, err := plotter.NewLine(xy)
	if err != nil {
		return
	}
	l.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(1.2), Dashes: dashed}
	pl.Add(l)
	if label != "" {
		legend(pl, label, l)
	}
}

// addBound draws a racer's bound column dashed in its colour; the first
// racer's is named in the legend.
func addBound(pl *plot.Plot, f *experiment.Frame, racer, x, col string, tx xAxis, logY bool, c color.Color, name bool) error {
	xs, vs, err := f.Series(racer, x, col)
	if err != nil {
		return err
	}
	for k, seg := range segments(tx, xs, vs, logY) {
		l, err := plotter.NewLine(seg)
		if err != nil {
			return err
		}
		l.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(1.2), Dashes: dashed}
		pl.Add(l)
		if name && k == 0 {
			legend(pl, "bound (dashed, per racer)", l)
		}
	}
	return nil
}

// segments splits a series where a value is missing or, on a log axis,
// not positive.
func segments(tx xAxis, xs, ys []float64, logY bool) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for i := range xs {
		x, y := tx.mapOne(xs[i]), ys[i]
		if !finite(x) || !finite(y) || logY && y <= 0 {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, plotter.XY{X: x, Y: y})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// xAxis maps data to the plot's x: linear or log (unchanged), or the index
// of a grid spaced evenly (interpolated between grid values).
type xAxis struct {
	log   bool
	index []float64 // the grid, for an index axis
}

// newXAxis chooses the axis for a scale ("auto" looks at the values: log
// when all are positive and span two decades).
func newXAxis(scale string, grid, xs []float64) xAxis {
	switch scale {
	case "log":
		return xAxis{log: allPositive(xs)}
	case "index":
		g := slices.Clone(grid)
		slices.Sort(g)
		return xAxis{index: g}
	case "auto":
		lo, hi := span(xs)
		return xAxis{log: allPositive(xs) && hi >= 100*lo}
	}
	return xAxis{}
}

func allPositive(xs []float64) bool {
	for _, x := range xs {
		if !(x > 0) {
			return false
		}
	}
	return len(xs) > 0
}

// mapOne maps a data value to the axis; NaN outside an index axis's grid
// or, on a log axis, for a value that is not positive.
func (a xAxis) mapOne(x float64) float64 {
	if a.log && !(x > 0) {
		return math.NaN()
	}
	g := a.index
	if g == nil {
		return x
	}
	for i := range g {
		if x == g[i] {
			return float64(i)
		}
		if i > 0 && x > g[i-1] && x < g[i] {
			if g[i-1] > 0 {
				return float64(i-1) + math.Log(x/g[i-1])/math.Log(g[i]/g[i-1])
			}
			return float64(i-1) + (x-g[i-1])/(g[i]-g[i-1])
		}
	}
	return math.NaN()
}

func (a xAxis) mapAll(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if v := a.mapOne(x); finite(v) {
			out = append(out, v)
		}
	}
	return out
}

// ticks labels an index axis with its grid values.
func (a xAxis) ticks() plot.ConstantTicks {
	var out plot.ConstantTicks
	for i, v := range a.index {
		out = append(out, plot.Tick{Value: float64(i), Label: strconv.FormatFloat(v, 'g', 3, 64)})
	}
	return out
}

// xLabel names the x axis: the chart's label for its own column, else the
// column's name.
func xLabel(ch experiment.Chart, col string) string {
	if col == ch.X {
		return ch.XLabel
	}
	return col
}

// span returns the smallest and largest finite values.
func span(xs []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		if finite(x) {
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	return lo, hi
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// logTicks labels a log axis at the powers of ten (every k-th when there
// are many), with unlabelled ticks at their multiples; a range within one
// decade is labelled at 1, 2 and 5 times powers of ten, or as a linear one.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	pow := func(e int) float64 { v, _ := strconv.ParseFloat("1e"+strconv.Itoa(e), 64); return v }
	a, b := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	step := max(1, (b-a+7)/8)
	inside := func(v float64) bool { return v >= lo*(1-1e-12) && v <= hi*(1+1e-12) }
	var out []plot.Tick
	labelled := 0
	for e := a; e <= b; e++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * pow(e)
			if !inside(v) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 && (e-a)%step == 0 {
				t.Label = experiment.Short(v)
				labelled++
			}
			out = append(out, t)
		}
	}
	if labelled >= 2 {
		return out
	}
	for i := range out {
		v := out[i].Value
		m := math.Round(v / pow(int(math.Floor(math.Log10(v)+1e-12))))
		if m == 1 || m == 2 || m == 5 {
			out[i].Label = experiment.Short(v)
		}
		if out[i].Label != "" {
			labelled++
		}
	}
	if labelled >= 2 {
		return out
	}
	return linearTicks{}.Ticks(lo, hi)
}

// linearTicks are gonum's default ticks labelled with four significant
// digits (gonum's own labels can repeat a value, "1.1" for 1.05 and 1.1).
type linearTicks struct{}

// Ticks implements plot.Ticker.
func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	out := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range out {
		if out[i].Label != "" {
			out[i].Label = experiment.Short(out[i].Value)
		}
	}
	return out
}
