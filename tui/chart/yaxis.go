package chart

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// Auto narrowing (YAuto): two final values are distinct when they differ by
// at least a factor distinctRatio; the narrowed axis keeps at least
// minWindow decades, so that a default screen never zooms further than a
// person asked for.
const (
	distinctRatio = 1.25
	minWindow     = 1.0
)

// yRange returns the y range to show in plotted units and whether it was
// narrowed (YAuto): the zoom if set; whole decades around the data on a log
// axis, so that the axis moves rarely; [0, max] (or the data range, tight)
// on a linear one.
func yRange(c Spec, rows int) (lo, hi float64, clipped, ok bool) {
	if c.Zoom != nil {
		a, okA := Plotted(c.Zoom[0], c.LogY)
		b, okB := Plotted(c.Zoom[1], c.LogY)
		if okA && okB && b >= a {
			if b-a < 1e-9 {
				pad := 0.01
				if !c.LogY {
					pad = 0.01*math.Abs(a) + 1e-12
				}
				a, b = a-pad, b+pad
			}
			return a, b, false, true
		}
	}
	ranged := c.Range
	if ranged == nil {
		for _, s := range c.Curves {
			ranged = append(ranged, s.Values)
		}
	}
	lo, hi = dataRange(c, ranged)
	if math.IsInf(lo, 1) {
		return 0, 0, false, false
	}
	lo, hi = widen(c, lo, hi)
	if c.LogY {
		lo, hi = math.Floor(lo), math.Ceil(hi)
		if hi-lo < 1 {
			hi = lo + 1
		}
		if c.Mode == YAuto {
			if a, b, ok := narrow(finals(ranged), lo, hi, rows); ok {
				return a, b, true, true
			}
		}
		return lo, hi, false, true
	}
	lo, hi = linearRange(lo, hi, c.Tight)
	return lo, hi, false, true
}

// linearRange pads a linear axis around the data: a little either side
// (tight), or from 0 to a little above the top.
func linearRange(lo, hi float64, tight bool) (float64, float64) {
	if tight {
		pad := 0.05 * (hi - lo)
		if pad == 0 {
			pad = 0.01*math.Abs(hi) + 1e-9
		}
		return lo - pad, hi + pad
	}
	lo = math.Min(0, lo)
	if hi <= lo {
		hi = lo + 1
	}
	return lo, hi * 1.05
}

// dataRange is the range of the data and the levels, in plotted units
// (lo = +Inf when there is no data).
func dataRange(c Spec, ranged [][]float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	scan := func(vals []float64) {
		for _, v := range vals {
			if p, ok := Plotted(v, c.LogY); ok {
				lo, hi = math.Min(lo, p), math.Max(hi, p)
			}
		}
	}
	for _, vals := range ranged {
		scan(vals)
	}
	if !math.IsInf(lo, 1) {
		for _, l := range c.Levels {
			scan([]float64{l.Value})
		}
	}
	return lo, hi
}

// widen lets the overlays (bounds, theory curves) widen the axis: by at most
// a decade on a log axis, half the data's span on a linear one, when they
// are Loose (a bound far from the data would otherwise squash the curves
// it is about; beyond that margin they are clipped and OffChart says so);
// without limit otherwise.
func widen(c Spec, lo, hi float64) (float64, float64) {
	dlo, dhi := lo, hi
	margin := math.Inf(1)
	switch {
	case c.Loose && c.LogY:
		margin = 1
	case c.Loose:
		margin = math.Max(0.5*(hi-lo), 0.1*math.Abs(hi))
	}
	for _, s := range c.Overlays {
		for _, v := range s.Values {
			if p, ok := Plotted(v, c.LogY); ok {
				lo, hi = math.Min(lo, math.Max(p, dlo-margin)), math.Max(hi, math.Min(p, dhi+margin))
			}
		}
	}
	return lo, hi
}

// finals returns the last value of each series, log10 (NaN-free).
func finals(series [][]float64) []float64 {
	var out []float64
	for _, vals := range series {
		for k := len(vals) - 1; k >= 0; k-- {
			if p, ok := Plotted(vals[k], true); ok {
				out = append(out, p)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// narrow returns a log range within [lo, hi] fine enough that the distinct
// final values (apart by a factor distinctRatio or more) fall on different
// rows, when the whole range on `rows` rows is too coarse for that. The
// narrowed range holds the highest final values — it may leave out fewer
// than half of the curves, and only those that end below it (curves still
// falling, like gradient descent's gradient norm) — and spans at least
// minWindow decades; it sits as high as it can while holding them, so that
// more of the descent stays in view.
func narrow(fin []float64, lo, hi float64, rows int) (float64, float64, bool) {
	if rows < 3 || len(fin) < 2 {
		return 0, 0, false
	}
	for k := 0; 2*k < len(fin); k++ {
		kept := fin[k:] // ascending: the lowest k are left below the window
		gap := minGap(kept)
		if math.IsInf(gap, 1) {
			return 0, 0, false // nothing left to tell apart
		}
		step := 0.9 * gap // values gap apart cannot share a row of this height
		w := step * float64(rows-2)
		if w >= hi-lo {
			return 0, 0, false // the whole range already tells them apart
		}
		if w < minWindow || kept[len(kept)-1]-kept[0]+step > w {
			continue
		}
		top := math.Min(kept[0]-step/2+w, hi)
		return top - w, top, true
	}
	return 0, 0, false
}

// minGap is the smallest difference between two distinct sorted values.
func minGap(sorted []float64) float64 {
	gap := math.Inf(1)
	for i := 1; i < len(sorted); i++ {
		if d := sorted[i] - sorted[i-1]; d >= math.Log10(distinctRatio) {
			gap = math.Min(gap, d)
		}
	}
	return gap
}

// snap returns a y range covering [lo, hi] on `rows` rows whose bottom is a
// whole number of steps, so that asciigraph draws exactly `rows` rows, each
// centred on its label's row value (see the package comment).
func snap(lo, hi float64, rows int) (slo, shi, step float64) {
	step = (hi - lo) / float64(max(rows-2, 1))
	slo = math.Floor(lo/step) * step
	return slo, slo + float64(rows-1)*step, step
}

// yLabeler labels a row only with a value that lies inside it.
func yLabeler(g Geom) func(v float64) string {
	ticks := yTicks(g)
	return func(v float64) string {
		w := int(math.Round((g.Hi - v) / g.Step))
		if w < 0 || w >= len(ticks) {
			return PadLeft("", LabelWidth)
		}
		return PadLeft(ticks[w], LabelWidth)
	}
}

// yTicks returns the label of every row (most empty): the nicest values —
// powers of ten, or 2·10^k, 5·10^k and finer mantissas on a narrow log
// axis, 1-2-5 steps on a linear one — at least two rows apart, each inside
// the row it labels.
func yTicks(g Geom) []string {
	labels := make([]string, g.Rows)
	pick := tickPicker(g)
	last := -3
	for w := 0; w < g.Rows; w++ {
		a, b := g.Interval(w)
		if val, found := pick(a, b); found && w-last >= 2 {
			if s := tickIn(val, a, b, g.Log); s != "" {
				labels[w], last = s, w
			}
		}
	}
	// A chart too short for any nice value inside a row still says where
	// it is: its top and bottom rows are labelled with their own values.
	if last < 0 && g.Rows > 0 {
		at := func(w int) string {
			c := g.Centre(w)
			v := c
			if g.Log {
				v = math.Pow(10, c)
			}
			return tickIn(v, c-g.Step/2, c+g.Step/2, g.Log)
		}
		labels[0] = at(0)
		if g.Rows > 2 {
			labels[g.Rows-1] = at(g.Rows - 1)
		}
	}
	return labels
}

// tickPicker returns how to find the nice value inside a row [a, b) of
// plotted units, if any: a 1-2-5 multiple on a linear axis (and on a log
// axis narrower than a factor of 2, a zoom on plateaus, labelled with round
// values of the data), else m·10^k for the mantissas the rows' height
// allows, powers of ten only every other one when decades are denser than
// two rows.
func tickPicker(g Geom) func(a, b float64) (float64, bool) {
	cands := logMantissas(g.Step)
	linearTicks := !g.Log || g.Hi-g.Lo < math.Log10(2)
	unit := NiceStep(2 * g.Step)
	if g.Log && linearTicks {
		unit = NiceStep(2 * (math.Pow(10, g.Hi) - math.Pow(10, g.Lo)) / float64(max(g.Rows-1, 1)))
	}
	return func(a, b float64) (float64, bool) {
		switch {
		case g.Log && linearTicks:
			lo, hi := math.Pow(10, a), math.Pow(10, b)
			if m := math.Ceil(lo/unit) * unit; m < hi {
				return m, true
			}
		case g.Log:
			val, found := logTickIn(a, b, cands)
			if found && len(cands) == 1 && g.Step > 0.5 {
				k := int(math.Round(math.Log10(val)))
				if every := int(math.Ceil(2 * g.Step)); k%every != 0 {
					return 0, false
				}
			}
			return val, found
		default:
			if m := math.Ceil(a/unit) * unit; m < b {
				if math.Abs(m) < 1e-12*unit {
					m = 0
				}
				return m, true
			}
		}
		return 0, false
	}
}

// logMantissas returns the candidate mantissas of log ticks for rows of the
// given height (decades): the finest set that leaves two rows between
// labels on average.
func logMantissas(step float64) []float64 {
	cands := []float64{1}
	for _, set := range [][]float64{{1}, {1, 2, 5}, {1, 1.5, 2, 3, 5, 7}, {1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9}} {
		spacing := math.Inf(1)
		for i := range set {
			next := 10.0
			if i+1 < len(set) {
				next = set[i+1]
			}
			spacing = math.Min(spacing, math.Log10(next/set[i]))
		}
		if spacing < 2*step {
			break
		}
		cands = set
	}
	return cands
}

// logTickIn finds a candidate value m·10^k in the row [a, b) (log10 units).
func logTickIn(a, b float64, cands []float64) (float64, bool) {
	for k := math.Floor(a) - 1; k <= math.Ceil(b); k++ {
		for _, m := range cands {
			if x := math.Log10(m) + k; x >= a && x < b {
				return math.Pow(10, x), true
			}
		}
	}
	return 0, false
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
		p, ok := Plotted(x, logY)
		if x == 0 && !logY {
			p, ok = 0, true
		}
		return ok && p >= a && p < b
	}
	if s := FormatTick(v); len(s) <= LabelWidth && inRow(s) {
		return s
	}
	for digits := 2; digits <= 8; digits++ {
		s := shortExp(strconv.FormatFloat(v, 'g', digits, 64))
		if len(s) > LabelWidth {
			break
		}
		if inRow(s) {
			return s
		}
	}
	return ""
}

// NiceStep returns the smallest 1, 2 or 5 × 10^k at least x.
func NiceStep(x float64) float64 {
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

// FormatTick writes a tick value in at most LabelWidth cells: 0.01, 250,
// 1e-05, 2.5e+06.
func FormatTick(v float64) string {
	if v == 0 {
		return "0"
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if a := math.Abs(v); len(s) <= LabelWidth && a >= 1e-3 && a < 1e6 {
		return s
	}
	return shortExp(strconv.FormatFloat(v, 'g', 3, 64))
}

func shortExp(s string) string {
	return strings.Replace(strings.Replace(s, "e-0", "e-", 1), "e+0", "e+", 1)
}

// OffChart says where a curve lies against the range the chart shows: ""
// when some of it is on the chart, else "above the chart", "below the
// chart" or "off the chart".
func OffChart(c Spec, values []float64) string {
	lo, hi, _, ok := yRange(c, max(c.Height-xAxisLines(c.XAxis), 2))
	if !ok {
		return ""
	}
	above, below := 0, 0
	for _, v := range values {
		p, ok := Plotted(v, c.LogY)
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
