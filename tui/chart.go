package tui

import (
	"math"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/guptarohit/asciigraph"
)

// series is one curve of a chart: values per round (NaN where absent).
type series struct {
	values []float64
	glyph  asciigraph.CharSet
	color  asciigraph.AnsiColor
}

// chartSpec describes one chart to draw into a fixed box.
type chartSpec struct {
	width, height int      // the whole box, labels included
	rounds        int      // x runs over rounds 1..rounds
	logY          bool     // log10 y axis with decade labels
	curves        []series // racers
	reference     *series  // dashed horizontal reference line, drawn first
	xAxis         bool     // draw the round axis below
	color         bool     // emit ANSI colours
	// xLabel, when set, labels the x ticks (e.g. oracle complexity) instead
	// of the round number.
	xLabel func(x float64) string
	// tight fits a linear y axis to the data range instead of starting at 0
	// (test MSE and accuracy differ in the second digit between racers).
	tight bool
	// marks are x positions (in rounds, fractional allowed) where a dotted
	// vertical line is drawn through the empty cells, e.g. a phase boundary.
	marks []float64
}

// plotChart renders a chart as exactly height lines of at most width cells.
// asciigraph is a pure function that panics on empty data, so an empty or
// too-small chart gets a placeholder instead.
func plotChart(c chartSpec) string {
	plotRows := c.height
	if c.xAxis {
		plotRows -= 2
	}
	lo, hi, ok := yRange(c)
	if !ok || plotRows < 2 || c.width < 20 || c.rounds < 1 {
		return placeholder(c.width, c.height, "waiting for the first round…")
	}
	const labelWidth = 7
	// Offset 3 after the labels, and 2 cells spare for the last x tick label,
	// which asciigraph centres on the final column.
	plotWidth := c.width - labelWidth - 3 - 2
	data := make([][]float64, 0, len(c.curves)+1)
	var glyphs []asciigraph.CharSet
	var colors []asciigraph.AnsiColor
	add := func(s series) {
		data = append(data, transform(s.values, c.rounds, plotWidth, c.logY))
		glyphs = append(glyphs, s.glyph)
		colors = append(colors, s.color)
	}
	if c.reference != nil {
		add(*c.reference)
	}
	for _, s := range c.curves {
		add(s)
	}
	step := (hi - lo) / float64(plotRows-1)
	opts := []asciigraph.Option{
		asciigraph.Height(plotRows - 1), asciigraph.Width(plotWidth),
		asciigraph.LowerBound(lo), asciigraph.UpperBound(hi),
		asciigraph.SeriesChars(glyphs...),
		asciigraph.YAxisValueFormatter(func(v float64) string {
			return padLeft(tickLabel(v, step, lo, hi, c.logY), labelWidth)
		}),
	}
	if c.color {
		opts = append(opts, asciigraph.SeriesColors(colors...))
	}
	if c.xAxis {
		xf := func(v float64) string { return strconv.Itoa(int(math.Round(v))) }
		if c.xLabel != nil {
			xf = c.xLabel
		}
		opts = append(opts, asciigraph.XAxisRange(1, float64(c.rounds)),
			asciigraph.XAxisTickCount(min(6, max(2, plotWidth/12))),
			asciigraph.XAxisValueFormatter(xf))
	}
	out := asciigraph.PlotMany(data, opts...)
	// asciigraph rounds the bounds to rows and may draw one row more than
	// asked; shrink until the plot and its axis fit, so that fitBox never
	// cuts the x tick labels.
	for h := plotRows - 2; h >= 1 && strings.Count(out, "\n")+1 > c.height; h-- {
		step = (hi - lo) / float64(h) // the tick formatter reads it
		out = asciigraph.PlotMany(data, append(opts, asciigraph.Height(h))...)
	}
	if len(c.marks) > 0 {
		out = overlayMarks(out, c, plotRows, plotWidth)
	}
	return fitBox(out, c.width, c.height)
}

// transform samples a series at (at most) one point per plot column over the
// full round range, NaN where no round has arrived yet (so the curve fills
// in from the left), and applies the y scale. Values that cannot be drawn
// (≤ 0 on a log axis, non-finite) become gaps. Sampling keeps a frame's cost
// bounded by the width, not the number of rounds.
func transform(vals []float64, rounds, cols int, logY bool) []float64 {
	n := max(min(rounds, cols), 1)
	out := make([]float64, n)
	for j := range out {
		out[j] = math.NaN()
		i := j
		if n > 1 && n < rounds {
			i = int(math.Round(float64(j) * float64(rounds-1) / float64(n-1)))
		}
		if i >= len(vals) {
			continue
		}
		v := vals[i]
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
		case logY && v > 0:
			out[j] = math.Log10(v)
		case !logY:
			out[j] = v
		}
	}
	if n == 1 { // asciigraph needs two points to draw a segment
		out = append(out, out[0])
	}
	return out
}

// yRange returns the plotted y range: whole decades on a log axis, so that
// the axis moves rarely and labels fall on round numbers; [0, max] on a
// linear one.
func yRange(c chartSpec) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	scan := func(vals []float64) {
		for _, v := range vals {
			if math.IsNaN(v) || math.IsInf(v, 0) || (c.logY && v <= 0) {
				continue
			}
			if c.logY {
				v = math.Log10(v)
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	for _, s := range c.curves {
		scan(s.values)
	}
	if math.IsInf(lo, 1) {
		return 0, 0, false
	}
	if c.reference != nil {
		scan(c.reference.values)
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

// tickLabel labels the axis row at v. On a log axis only the rows nearest to
// a power of ten carry a label (thinned when decades outnumber rows); on a
// linear axis every other row does.
func tickLabel(v, step, lo, hi float64, logY bool) string {
	if !logY {
		if int(math.Round((hi-v)/step))%2 != 0 {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	k := math.Round(v)
	if step > 0.5 {
		// Rows are more than half a decade apart: label every other row
		// with its nearest power of ten.
		if int(math.Round((hi-v)/step))%2 != 0 {
			return ""
		}
		return powerOfTen(int(k))
	}
	// The row nearest to 10^k is labelled; of two rows equally near, only
	// the upper one (d = +step/2), so a decade is never labelled twice.
	if d := v - k; d > step/2+1e-9 || d <= -step/2+1e-9 {
		return ""
	}
	every := max(1, int(math.Ceil(2*step-1e-9))) // at most one label per two rows
	if int(k-lo)%every != 0 && k != hi {
		return ""
	}
	return powerOfTen(int(k))
}

// powerOfTen writes 10^k readably: 0.01, 0.1, 1, 10, 100, 1000, else 1e-5.
func powerOfTen(k int) string {
	if k >= -2 && k <= 3 {
		return strconv.FormatFloat(math.Pow(10, float64(k)), 'f', -1, 64)
	}
	return "1e" + strconv.Itoa(k)
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

// markGlyph draws a chart's vertical marks; markFoot is where a mark meets
// the round axis.
const (
	markGlyph = "┊"
	markFoot  = "┴"
)

// overlayMarks draws the chart's vertical marks into the empty cells of the
// plot rows and onto the round axis. asciigraph spreads the padded series
// (one value per round) over plotWidth columns linearly, so round r sits at
// column (r−1)·(plotWidth−1)/(rounds−1) right of the y axis.
func overlayMarks(out string, c chartSpec, plotRows, plotWidth int) string {
	lines := strings.Split(out, "\n")
	axis := -1
	for _, r := range []rune(ansi.Strip(lines[0])) {
		axis++
		if r == '┤' || r == '┼' {
			break
		}
	}
	span := max(c.rounds-1, 1)
	for _, mk := range c.marks {
		if mk < 1 || mk > float64(c.rounds) {
			continue
		}
		col := axis + 1 + int(math.Round((mk-1)*float64(plotWidth-1)/float64(span)))
		for i, l := range lines {
			glyph := markGlyph
			switch {
			case i < plotRows:
			case i == plotRows && c.xAxis:
				glyph = markFoot
			default:
				continue
			}
			plain := []rune(ansi.Strip(l))
			if col >= len(plain) || (glyph == markGlyph && plain[col] != ' ') || (glyph == markFoot && plain[col] != '─') {
				continue
			}
			if c.color {
				glyph = "\x1b[38;5;244m" + glyph + "\x1b[0m"
			}
			lines[i] = ansi.Truncate(l, col, "") + glyph + ansi.TruncateLeft(l, col+1, "")
		}
	}
	return strings.Join(lines, "\n")
}
