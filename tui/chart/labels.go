package chart

import "math"

// place writes the labels into the plot: each beside its own racer's curve
// or on it, nearer to that curve than to any other racer's, as close to its
// anchor as it can be; a label that finds no such place is dropped, never
// drawn where it would name another curve.
//
// A place is a row and a run of columns where
//   - every column shows the racer's curve within one row of the label
//     (the label follows its curve along its whole length), or lies past
//     the curve's head, which is within one row (the label names the end
//     of the curve drawn so far);
//   - every other racer's curve is farther from the row, in every one of
//     those columns, than the racer's own;
//   - every cell is empty, or, on the curve's own row, a cell of the
//     racer's own curve (the label then sits on its curve).
//
// Places beside the curve (no data hidden) come first, then places on it;
// among those, the one nearest to the anchor column.
func (gr grid) place(labels []Label, g Geom, colors map[[2]int]string) (placed []Placed, dropped []Label) {
	taken := map[[2]int]bool{}
	for _, l := range labels {
		p, ok := gr.find(l, g, taken)
		if !ok && l.Short != "" {
			short := l
			short.Text, short.Short = l.Short, ""
			p, ok = gr.find(short, g, taken)
			l = short
		}
		if !ok {
			dropped = append(dropped, l)
			continue
		}
		for i, ch := range []rune(l.Text) {
			cell := [2]int{p.Row, PlotLeft + p.From + i}
			gr.set(cell[0], cell[1], ch)
			taken[cell] = true
			colors[cell] = l.Color
		}
		placed = append(placed, p)
	}
	return placed, dropped
}

// find returns the best place of a label (see place).
func (gr grid) find(l Label, g Geom, taken map[[2]int]bool) (Placed, bool) {
	own, ok := g.Spans[l.Racer]
	n := len([]rune(l.Text))
	j0 := colOfPos(g, float64(l.Pos))
	if !ok || j0 < 0 || n == 0 || n > g.Cols {
		return Placed{}, false
	}
	top, bottom := own[j0][0], own[j0][1]
	if top > bottom { // no point at the anchor: its neighbour's
		if j0 > 0 && own[j0-1][0] <= own[j0-1][1] {
			top, bottom = own[j0-1][0], own[j0-1][1]
		} else {
			return Placed{}, false
		}
	}
	for _, onCurve := range []bool{false, true} {
		rows := []int{top - 1, bottom + 1}
		if onCurve {
			rows = nil
			for r := top; r <= bottom; r++ {
				rows = append(rows, r)
			}
		}
		best, bestCost := Placed{}, math.MaxInt
		for _, r := range rows {
			for from := 0; from+n <= g.Cols; from++ {
				// The cost is how far the label lies from its anchor (0 when
				// it covers the anchor's column), then how far it starts
				// from it: a label reads best starting at its point.
				cost := 1000*max(from-j0, j0-(from+n-1), 0) + abs(from-j0)
				if cost < bestCost && gr.fits(l, g, r, from, n, onCurve, taken) {
					best, bestCost = Placed{Label: l, Row: r, From: from, To: from + n - 1}, cost
				}
			}
		}
		if bestCost < math.MaxInt {
			return best, true
		}
	}
	return Placed{}, false
}

// fits checks one place of a label against the rules of place.
func (gr grid) fits(l Label, g Geom, r, from, n int, onCurve bool, taken map[[2]int]bool) bool {
	if r < 0 || r >= g.Rows || from < 0 || from+n > g.Cols {
		return false
	}
	own := g.Spans[l.Racer]
	last := head(own) // a label may run on past its curve's head
	if last < 0 {
		return false
	}
	dOwn := 0
	for x := from; x < from+n; x++ {
		d := distance(r, own[min(x, last)])
		if d > 1 {
			return false
		}
		dOwn = max(dOwn, d)
		cell := [2]int{r, PlotLeft + x}
		if taken[cell] {
			return false
		}
		switch ch := gr.at(r, PlotLeft+x); {
		case ch == ' ':
		case onCurve && g.Racer[r][x] == l.Racer:
		default:
			return false
		}
	}
	for racer, sp := range g.Spans {
		if racer == l.Racer {
			continue
		}
		// Past its head, another curve counts as far as its head: a label
		// beyond two heads must be nearer to its own.
		end := head(sp)
		for x := from; x < from+n; x++ {
			at := x
			if x > end && end >= 0 && x > last {
				at = end
			}
			if distance(r, sp[at]) <= dOwn {
				return false
			}
		}
	}
	return true
}

// head is the last column where a curve is drawn (−1 for none).
func head(span [][2]int) int {
	last := len(span) - 1
	for last >= 0 && span[last][0] > span[last][1] {
		last--
	}
	return last
}

// distance is how many rows r lies from the rows [top, bottom] a curve covers
// in a column (a large number where the curve has none).
func distance(r int, span [2]int) int {
	top, bottom := span[0], span[1]
	switch {
	case top > bottom:
		return math.MaxInt32
	case r < top:
		return top - r
	case r > bottom:
		return r - bottom
	}
	return 0
}
