package chart

import (
	"math"
	"strings"
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
	x := PlotLeft + col
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

// replay repeats asciigraph's drawing of the series and returns, per plot
// cell, the index of the series drawn there last (−1 for none). Column x
// shows the point of column x and the connector to the point of x+1.
func (g grid) replay(data [][]float64, geom Geom) [][]int {
	owner := make([][]int, geom.Rows)
	for r := range owner {
		owner[r] = make([]int, geom.Cols)
		for j := range owner[r] {
			owner[r][j] = -1
		}
	}
	for i, s := range data {
		for x := 0; x+1 < len(s); x++ {
			lo, hi, ok := spanAt(s, x, geom)
			if !ok {
				continue
			}
			for r := lo; r <= hi; r++ {
				owner[r][x] = i
			}
		}
	}
	return owner
}

// spanAt returns the rows [lo, hi] (lo the top) that asciigraph fills in
// column x of a clipped series.
func spanAt(s []float64, x int, geom Geom) (lo, hi int, ok bool) {
	d0, d1 := s[x], s[x+1]
	n0, n1 := math.IsNaN(d0), math.IsNaN(d1)
	switch {
	case n0 && n1:
		return 0, 0, false
	case n1:
		r := geom.RowOf(d0)
		return r, r, true
	case n0:
		r := geom.RowOf(d1)
		return r, r, true
	}
	r0, r1 := geom.RowOf(d0), geom.RowOf(d1)
	return min(r0, r1), max(r0, r1), true
}

// racerCells turns the owners of the cells into racer indices, and returns
// the rows each racer's curve covers in each column (whether drawn last
// there or under another).
func racerCells(owner [][]int, all []Series, data [][]float64, geom Geom) ([][]int, map[int][][2]int) {
	racer := make([][]int, len(owner))
	for r := range owner {
		racer[r] = make([]int, len(owner[r]))
		for j, o := range owner[r] {
			racer[r][j] = -1
			if o >= 0 {
				racer[r][j] = all[o].Racer
			}
		}
	}
	spans := map[int][][2]int{}
	for i, s := range all {
		if s.Racer < 0 {
			continue
		}
		sp := make([][2]int, geom.Cols)
		for x := range sp {
			sp[x] = [2]int{1, 0}
			if x+1 < len(data[i]) {
				if lo, hi, ok := spanAt(data[i], x, geom); ok {
					sp[x] = [2]int{lo, hi}
				}
			}
		}
		spans[s.Racer] = sp
	}
	return racer, spans
}

// sharedCells returns the plot cells where the points of two or more racers
// coincide (the cell of a column's own value; curves only cross elsewhere).
func sharedCells(all []Series, data [][]float64, geom Geom) map[[2]int]bool {
	seen := map[[2]int]int{}
	out := map[[2]int]bool{}
	for i, s := range all {
		if s.Racer < 0 {
			continue
		}
		for x := 0; x+1 < len(data[i]); x++ {
			v := data[i][x]
			if math.IsNaN(v) {
				continue
			}
			cell := [2]int{geom.RowOf(v), x}
			if r, ok := seen[cell]; ok && r != s.Racer {
				out[cell] = true
			}
			seen[cell] = s.Racer
		}
	}
	return out
}

// arrows marks where a racer's curve leaves the range drawn or comes into
// it: ▼ on the bottom row in the first column where the curve is below the
// chart, ▲ on the top row in the last column where it is above it before it
// comes in (or the first, when it leaves upwards). Only empty cells are
// marked; the colours of the marks are returned by cell.
func (g grid) arrows(all []Series, geom Geom) map[[2]int]string {
	out := map[[2]int]string{}
	mark := func(r, j int, glyph rune, color string) {
		x := PlotLeft + j
		if j < 0 || j >= geom.Cols || g.at(r, x) != ' ' {
			return
		}
		g.set(r, x, glyph)
		out[[2]int{r, x}] = color
	}
	side := func(v float64) int { // −1 below, 0 on the chart, 1 above, 2 absent
		switch {
		case math.IsNaN(v):
			return 2
		case v < geom.Lo-geom.Step/2:
			return -1
		case v > geom.Hi+geom.Step/2:
			return 1
		}
		return 0
	}
	for _, s := range all {
		if s.Racer < 0 {
			continue
		}
		for j := 0; j+1 < len(s.Values); j++ {
			a, b := side(s.Values[j]), side(s.Values[j+1])
			switch {
			case a == 0 && b == -1:
				mark(geom.Rows-1, j+1, DownGlyph, s.Color)
			case a == -1 && b == 0:
				mark(geom.Rows-1, j, DownGlyph, s.Color)
			case a == 0 && b == 1:
				mark(0, j+1, UpGlyph, s.Color)
			case a == 1 && b == 0:
				mark(0, j, UpGlyph, s.Color)
			}
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
			col := cur // spaces keep the current colour: fewer escapes
			if ch != ' ' {
				col = colorOf(r, x)
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
