package chart

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestChartRowsAndLabelsTellTheTruth is the axis property test of issue 9:
// random series on random chart sizes and scales; every plotted point must
// sit in the row whose value interval contains it, and every y label must
// name a value inside its row's interval. The intervals come from the
// chart's geometry (centre hi − w·step, half a step either side); the glyphs
// and labels are read back from asciigraph's output, not from the code that
// placed them.
func TestChartRowsAndLabelsTellTheTruth(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for it := 0; it < 400; it++ {
		logY := rng.IntN(2) == 0
		rounds := 1 + rng.IntN(400)
		w, h := 30+rng.IntN(170), 6+rng.IntN(40)
		vals := make([]float64, rounds)
		// A decaying curve with noise, sometimes flat, sometimes spanning
		// many decades; some rounds missing (NaN) at the end.
		scale := math.Pow(10, float64(rng.IntN(9))-4)
		rate := rng.Float64() * 0.2
		for k := range vals {
			v := scale * (math.Exp(-rate*float64(k)) + 0.01*rng.Float64())
			if !logY && rng.IntN(3) == 0 {
				v -= scale / 2 // negative values on a linear axis
			}
			vals[k] = v
		}
		known := 1 + rng.IntN(rounds)
		for k := known; k < rounds; k++ {
			vals[k] = math.NaN()
		}
		spec := Spec{Width: w, Height: h, Points: rounds, LogY: logY, XAxis: XAxis(rng.IntN(3)), Tight: rng.IntN(2) == 0, Mode: YMode(rng.IntN(2)),
			Curves: []Series{{Values: vals, Glyph: '•', Racer: 0}}}
		if rng.IntN(4) == 0 {
			lo, hi := vals[known/2], vals[0]
			if lo > hi {
				lo, hi = hi, lo
			}
			if !logY || lo > 0 {
				spec.Zoom = &[2]float64{lo, hi}
			}
		}
		out, g := Draw(spec)
		if !g.OK {
			continue
		}
		lines := strings.Split(ansi.Strip(out), "\n")
		if len(lines) != h {
			t.Fatalf("case %d: %d lines, want %d", it, len(lines), h)
		}
		interval := func(w int) (float64, float64) {
			return g.Interval(w)
		}
		// Labels.
		for w := 0; w < g.Rows; w++ {
			text := strings.TrimSpace(string([]rune(lines[w])[:LabelWidth+1]))
			if text == "" {
				continue
			}
			v, err := strconv.ParseFloat(text, 64)
			if err != nil {
				t.Fatalf("case %d: label %q does not read as a number", it, text)
			}
			p, ok := Plotted(v, logY)
			a, b := interval(w)
			if !ok || p < a-1e-9*g.Step || p >= b+1e-9*g.Step {
				t.Errorf("case %d (log %v, %d×%d): label %s on row %d, whose interval is [%g, %g) in plotted units (%g)",
					it, logY, w, h, text, w, a, b, p)
			}
		}
		// Points: column j shows its round's value in the row containing it.
		for j := 0; j+1 < g.Cols; j++ {
			v, ok := Plotted(vals[g.PosOfCol[j]-1], logY)
			if !ok || !g.In(v) {
				continue
			}
			v = math.Min(math.Max(v, g.Lo), g.Hi)
			row := -1
			for w := 0; w < g.Rows; w++ {
				if a, b := interval(w); v >= a-1e-9*g.Step && v < b+1e-9*g.Step {
					row = w
					break
				}
			}
			if row < 0 {
				t.Fatalf("case %d: value %g outside every row of [%g, %g]", it, v, g.Lo, g.Hi)
			}
			if got := []rune(lines[row]); PlotLeft+j >= len(got) || got[PlotLeft+j] != '•' {
				t.Errorf("case %d (log %v, %d rounds, %d×%d): column %d (round %d, %g) has no glyph on row %d:\n%s",
					it, logY, rounds, w, h, j, g.PosOfCol[j], v, row, ansi.Strip(out))
				break
			}
		}
	}
}

// TestColumnsShowOneRoundEach checks the column layout: sampled rounds when
// there are more rounds than columns (first and last included, in order),
// whole blocks of repeated rounds otherwise.
func TestColumnsShowOneRoundEach(t *testing.T) {
	for _, test := range []struct{ rounds, cols int }{{150, 68}, {150, 150}, {20, 68}, {1, 10}, {1000, 7}} {
		c := columns(test.rounds, test.cols, nil)
		if c[0] != 1 || c[len(c)-1] != test.rounds || len(c) > test.cols {
			t.Errorf("%+v: columns %v…%v (%d)", test, c[0], c[len(c)-1], len(c))
		}
		for j := 1; j < len(c); j++ {
			if stride := (test.rounds-1)/max(test.cols-1, 1) + 1; c[j] < c[j-1] || c[j]-c[j-1] > stride {
				t.Errorf("%+v: column %d shows round %d after %d", test, j, c[j], c[j-1])
			}
		}
		if test.rounds < test.cols && len(c)%test.rounds != 0 {
			t.Errorf("%+v: %d columns are not whole blocks", test, len(c))
		}
	}
}

// TestSharedCellsAreMarked checks that two racers whose points fall in the
// same cell are marked there, and that a racer drawn under another still
// shows where it is alone.
func TestSharedCellsAreMarked(t *testing.T) {
	n := 40
	a, b := make([]float64, n), make([]float64, n)
	for k := range a {
		a[k] = 1
		b[k] = 1
		if k >= n/2 {
			b[k] = 100
		}
	}
	out, _ := Draw(Spec{Width: 60, Height: 12, Points: n, LogY: true, Shared: '◆',
		Curves: []Series{{Values: a, Glyph: '•', Racer: 0}, {Values: b, Glyph: '×', Racer: 1}}})
	plain := ansi.Strip(out)
	if !strings.ContainsRune(plain, '◆') || !strings.ContainsRune(plain, '•') || !strings.ContainsRune(plain, '×') {
		t.Errorf("shared cells unmarked or a racer lost:\n%s", plain)
	}
}

// TestLabelsOnlyInEmptyCells checks that an annotation is written only over
// empty cells when it sits beside its curve, and not at all when there is
// no room.
func TestLabelsOnlyInEmptyCells(t *testing.T) {
	n := 30
	vals := make([]float64, n)
	for k := range vals {
		vals[k] = math.Pow(0.8, float64(min(k, 15))) // falls, then a plateau
	}
	spec := Spec{Width: 70, Height: 14, Points: n, LogY: true,
		Curves: []Series{{Values: vals, Glyph: '•', Racer: 0}},
		Labels: []Label{{Pos: 20, Value: vals[19], Text: "stalls here", Racer: 0}}}
	with, g := Draw(spec)
	spec.Labels = nil
	without, _ := Draw(spec)
	wl, wo := strings.Split(ansi.Strip(with), "\n"), strings.Split(ansi.Strip(without), "\n")
	if !strings.Contains(ansi.Strip(with), "stalls here") || len(g.Placed) != 1 {
		t.Fatalf("label not placed:\n%s", ansi.Strip(with))
	}
	if p := g.Placed[0]; p.Row == g.Spans[0][p.From][0] {
		t.Errorf("the label sits on its curve although the row above is free:\n%s", ansi.Strip(with))
	}
	for i := range wo {
		a, b := []rune(wo[i]), []rune(wl[i])
		for j := range a {
			if a[j] != ' ' && (j >= len(b) || b[j] != a[j]) {
				t.Fatalf("the label overwrote a drawn cell at row %d col %d (%c)", i, j, a[j])
			}
		}
	}
	full := Spec{Width: 24, Height: 4, Points: n, LogY: true, Curves: spec.Curves,
		Labels: []Label{{Pos: 20, Value: vals[19], Text: "a label far too long to fit anywhere", Racer: 0}}}
	if out, g := Draw(full); strings.Contains(out, "a label") || len(g.Dropped) != 1 {
		t.Error("a label that does not fit was drawn")
	}
}

// TestLabelsNameTheirOwnCurve: three plateaus on adjacent rows, a label for
// each; every label drawn lies within one row of its own curve in every
// column it spans, and strictly farther from every other curve; the middle
// one, with no free row beside it, sits on its own curve.
func TestLabelsNameTheirOwnCurve(t *testing.T) {
	n := 120
	levels := []float64{0.0165, 0.00827, 0.00373}
	var curves []Series
	var labels []Label
	for i, l := range levels {
		vals := make([]float64, n)
		for k := range vals {
			vals[k] = l * math.Max(1, 300*math.Pow(0.7, float64(k)))
		}
		curves = append(curves, Series{Values: vals, Glyph: []rune("×•+")[i], Racer: i})
		labels = append(labels, Label{Pos: 40, Value: l, Text: string([]rune("×•+")[i]) + " stalls", Racer: i})
	}
	out, g := Draw(Spec{Width: 100, Height: 12, Points: n, LogY: true, Curves: curves, Labels: labels, XAxis: XFull})
	if len(g.Placed) != 3 {
		t.Fatalf("%d labels placed, want 3:\n%s", len(g.Placed), ansi.Strip(out))
	}
	for _, p := range g.Placed {
		for x := p.From; x <= p.To; x++ {
			own := distance(p.Row, g.Spans[p.Racer][x])
			if own > 1 {
				t.Errorf("label %q: row %d is %d rows from its curve at column %d", p.Text, p.Row, own, x)
			}
			for r, sp := range g.Spans {
				if r != p.Racer && distance(p.Row, sp[x]) <= own {
					t.Errorf("label %q: racer %d's curve is as near at column %d", p.Text, r, x)
				}
			}
		}
	}
}

// TestFormatTickFitsTheLabelColumn checks tick labels stay within their
// column and read back as the value.
func TestFormatTickFitsTheLabelColumn(t *testing.T) {
	for _, v := range []float64{1e-9, 1e-5, 0.0037, 0.01, 0.5, 1, 2.5, 10, 250, 1e4, 2.5e6, 1e12, -0.2, -300} {
		s := FormatTick(v)
		if len(s) > LabelWidth {
			t.Errorf("%g → %q, wider than %d", v, s, LabelWidth)
		}
		if got, err := strconv.ParseFloat(s, 64); err != nil || math.Abs(got-v) > 0.01*math.Abs(v) {
			t.Errorf("%g → %q reads back as %g", v, s, got)
		}
	}
}

// TestNiceTicks: linear ticks step by 1, 2 or 5 × 10^k, lie in the range,
// and come about as many as asked.
func TestNiceTicks(t *testing.T) {
	for _, test := range []struct {
		lo, hi float64
		n      int
	}{{0, 150, 7}, {1, 250, 5}, {0, 180, 2}, {-3, 3, 6}, {0.001, 0.0072, 4}, {20, 200, 9}, {1, 100, 10}} {
		ticks := NiceTicks(test.lo, test.hi, test.n)
		if len(ticks) < 2 {
			t.Errorf("%+v: %v", test, ticks)
			continue
		}
		step := ticks[1] - ticks[0]
		e := math.Pow(10, math.Floor(math.Log10(step)+1e-9))
		if m := step / e; math.Abs(m-1) > 1e-9 && math.Abs(m-2) > 1e-9 && math.Abs(m-5) > 1e-9 {
			t.Errorf("%+v: step %g is not 1, 2 or 5 × 10^k", test, step)
		}
		for i, v := range ticks {
			if v < test.lo-1e-9 || v > test.hi+1e-9 || (i > 0 && math.Abs(v-ticks[i-1]-step) > 1e-9*step) {
				t.Errorf("%+v: ticks %v", test, ticks)
				break
			}
			if r := v / step; math.Abs(r-math.Round(r)) > 1e-9 {
				t.Errorf("%+v: tick %g is not a multiple of its step %g", test, v, step)
			}
		}
		if len(ticks) > 2*test.n+1 {
			t.Errorf("%+v: %d ticks for about %d", test, len(ticks), test.n)
		}
	}
}

// TestTicksNameTheirColumns: a whole-numbered tick sits on a column that
// shows exactly its position, and no tick label is cut at the edges.
func TestTicksNameTheirColumns(t *testing.T) {
	vals := make([]float64, 151)
	for k := range vals {
		vals[k] = math.Pow(0.9, float64(k))
	}
	for _, w := range []int{60, 80, 100, 137, 160} {
		var ticks []Tick
		for _, x := range NiceTicks(0, 150, 6) {
			ticks = append(ticks, Tick{Pos: x + 1, Label: strconv.FormatFloat(x, 'f', -1, 64)})
		}
		out, g := Draw(Spec{Width: w, Height: 12, Points: 151, LogY: true, XAxis: XFull, Ticks: ticks,
			Curves: []Series{{Values: vals, Glyph: '•'}}})
		lines := strings.Split(ansi.Strip(out), "\n")
		labels := lines[len(lines)-1]
		for _, tk := range ticks {
			j := colOfPos(g, tk.Pos)
			if g.PosOfCol[j] != int(tk.Pos) {
				t.Errorf("width %d: tick %s on a column showing position %d", w, tk.Label, g.PosOfCol[j])
			}
			if []rune(lines[len(lines)-2])[PlotLeft+j] != '┬' {
				t.Errorf("width %d: no ┬ under tick %s", w, tk.Label)
			}
		}
		if !strings.Contains(labels, "150") || ansi.StringWidth(labels) > w {
			t.Errorf("width %d: the last label is cut: %q", w, labels)
		}
	}
}
