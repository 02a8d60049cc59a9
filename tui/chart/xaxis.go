package chart

import (
	"math"
	"strings"
)

// xAxisLines is how many lines an x axis takes.
func xAxisLines(x XAxis) int {
	switch x {
	case XLine:
		return 1
	case XFull:
		return 2
	}
	return 0
}

// columns returns the position shown by each data column of a chart of at
// most maxCols columns: evenly sampled positions when there are more
// positions than columns, otherwise each position repeated over
// k = maxCols/points columns. Sampled columns nearest to a pinned position
// (a tick) show exactly that position, so that a tick names the value of
// its column.
func columns(points, maxCols int, pins []int) []int {
	if points < maxCols {
		k := maxCols / points
		out := make([]int, points*k)
		for j := range out {
			out[j] = j/k + 1
		}
		return out
	}
	out := make([]int, maxCols)
	for j := range out {
		out[j] = 1 + int(math.Round(float64(j)*float64(points-1)/float64(maxCols-1)))
	}
	for _, p := range pins {
		if p < 1 || p > points {
			continue
		}
		best := 0
		for j := range out {
			if abs(out[j]-p) < abs(out[best]-p) {
				best = j
			}
		}
		if (best == 0 || out[best-1] < p) && (best == len(out)-1 || out[best+1] > p) {
			out[best] = p
		}
	}
	return out
}

// tickPositions are the whole positions of the ticks (the pins of columns).
func tickPositions(ticks []Tick) []int {
	var out []int
	for _, t := range ticks {
		if t.Pos == math.Trunc(t.Pos) {
			out = append(out, int(t.Pos))
		}
	}
	return out
}

// colOfPos returns the column nearest to position p (fractional allowed: a
// position between two repeated blocks sits at the block edge); −1 for
// none.
func colOfPos(g Geom, p float64) int {
	best, bestD := -1, math.Inf(1)
	for j, pj := range g.PosOfCol {
		if d := math.Abs(float64(pj) - p); d < bestD {
			best, bestD = j, d
		}
	}
	if best >= 0 && p != math.Trunc(p) {
		for j, pj := range g.PosOfCol {
			if float64(pj) > p {
				return j
			}
		}
	}
	return best
}

// xAxis draws the axis line below the plot, with a ┬ at every tick, and
// (XFull) the tick labels centred under their ticks, moved inward at the
// edges so that none is cut, and left out where they would touch the label
// before them.
func (gr *grid) xAxis(c Spec, g Geom) {
	rows := g.Rows
	for len(*gr) < rows+xAxisLines(c.XAxis) {
		*gr = append(*gr, nil)
	}
	line := []rune(strings.Repeat(" ", PlotLeft-1) + "└" + strings.Repeat("─", g.Cols))
	(*gr)[rows] = line
	var cols []int
	for _, t := range c.Ticks {
		j := colOfPos(g, t.Pos)
		if j < 0 {
			cols = append(cols, -1)
			continue
		}
		gr.set(rows, PlotLeft+j, '┬')
		cols = append(cols, j)
	}
	if c.XAxis != XFull {
		return
	}
	labels := []rune{}
	end := -1 // the last cell written
	width := c.Width
	for i, t := range c.Ticks {
		if cols[i] < 0 {
			continue
		}
		text := []rune(t.Label)
		x := PlotLeft + cols[i] - (len(text)-1)/2
		x = min(max(x, 0), width-len(text))
		if x <= end+1 {
			continue
		}
		for len(labels) < x {
			labels = append(labels, ' ')
		}
		labels = append(labels, text...)
		end = x + len(text) - 1
	}
	(*gr)[rows+1] = labels
}

// NiceTicks returns round values from lo to hi in 1-2-5 steps, about n of
// them (at least the ends' neighbourhood is covered): the tick values of a
// linear axis.
func NiceTicks(lo, hi float64, n int) []float64 {
	if !(hi > lo) || n < 1 {
		return []float64{lo}
	}
	step := NiceStep((hi - lo) / float64(n))
	var out []float64
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+1e-9*step; v += step {
		if math.Abs(v) < 1e-12*step {
			v = 0
		}
		out = append(out, v)
	}
	return out
}

// LogTicks returns the powers of ten from 10^lo to 10^hi (lo, hi in log10
// units), every k-th one so that about n remain; with less than two decades,
// the 1-2-5 values.
func LogTicks(lo, hi float64, n int) []float64 {
	var out []float64
	if hi-lo < 2 {
		for k := math.Floor(lo); k <= math.Ceil(hi); k++ {
			for _, m := range []float64{1, 2, 5} {
				if x := math.Log10(m) + k; x >= lo-1e-9 && x <= hi+1e-9 {
					out = append(out, math.Pow(10, x))
				}
			}
		}
		return out
	}
	every := max(1, int(math.Ceil((hi-lo)/float64(max(n, 1)))))
	for k := math.Ceil(lo - 1e-9); k <= hi+1e-9; k++ {
		if int(k)%every == 0 {
			out = append(out, math.Pow(10, k))
		}
	}
	return out
}
