package tui

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
		spec := chartSpec{width: w, height: h, rounds: rounds, logY: logY, xAxis: rng.IntN(2) == 0, tight: rng.IntN(2) == 0,
			curves: []series{{values: vals, glyph: '•', racer: 0}}}
		if rng.IntN(4) == 0 {
			lo, hi := vals[known/2], vals[0]
			if lo > hi {
				lo, hi = hi, lo
			}
			if !logY || lo > 0 {
				spec.zoom = &[2]float64{lo, hi}
			}
		}
		out, g := drawChart(spec)
		if !g.ok {
			continue
		}
		lines := strings.Split(ansi.Strip(out), "\n")
		if len(lines) != h {
			t.Fatalf("case %d: %d lines, want %d", it, len(lines), h)
		}
		interval := func(w int) (float64, float64) {
			c := g.hi - float64(w)*g.step
			return c - g.step/2, c + g.step/2
		}
		// Labels.
		for w := 0; w < g.rows; w++ {
			text := strings.TrimSpace(string([]rune(lines[w])[:labelWidth+1]))
			if text == "" {
				continue
			}
			v, err := strconv.ParseFloat(text, 64)
			if err != nil {
				t.Fatalf("case %d: label %q does not read as a number", it, text)
			}
			p, ok := plotted(v, logY)
			a, b := interval(w)
			if !ok || p < a-1e-9*g.step || p >= b+1e-9*g.step {
				t.Errorf("case %d (log %v, %d×%d): label %s on row %d, whose interval is [%g, %g) in plotted units (%g)",
					it, logY, w, h, text, w, a, b, p)
			}
		}
		// Points: column j shows its round's value in the row containing it.
		for j := 0; j+1 < g.cols; j++ {
			v, ok := plotted(vals[g.roundOfCol[j]-1], logY)
			if !ok || v < g.lo-g.step/2 || v > g.hi+g.step/2 {
				continue
			}
			v = math.Min(math.Max(v, g.lo), g.hi)
			row := -1
			for w := 0; w < g.rows; w++ {
				if a, b := interval(w); v >= a-1e-9*g.step && v < b+1e-9*g.step {
					row = w
					break
				}
			}
			if row < 0 {
				t.Fatalf("case %d: value %g outside every row of [%g, %g]", it, v, g.lo, g.hi)
			}
			if got := []rune(lines[row]); plotLeft+j >= len(got) || got[plotLeft+j] != '•' {
				t.Errorf("case %d (log %v, %d rounds, %d×%d): column %d (round %d, %g) has no glyph on row %d:\n%s",
					it, logY, rounds, w, h, j, g.roundOfCol[j], v, row, ansi.Strip(out))
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
		c := columns(test.rounds, test.cols)
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
	out, _ := drawChart(chartSpec{width: 60, height: 12, rounds: n, logY: true, shared: sharedGlyph,
		curves: []series{{values: a, glyph: '•', racer: 0}, {values: b, glyph: '×', racer: 1}}})
	plain := ansi.Strip(out)
	if !strings.ContainsRune(plain, sharedGlyph) || !strings.ContainsRune(plain, '•') || !strings.ContainsRune(plain, '×') {
		t.Errorf("shared cells unmarked or a racer lost:\n%s", plain)
	}
}

// TestLabelsOnlyInEmptyCells checks that an annotation is written only over
// empty cells, and not at all when there is no room.
func TestLabelsOnlyInEmptyCells(t *testing.T) {
	n := 30
	vals := make([]float64, n)
	for k := range vals {
		vals[k] = math.Pow(0.8, float64(k))
	}
	spec := chartSpec{width: 70, height: 14, rounds: n, logY: true,
		curves: []series{{values: vals, glyph: '•', racer: 0}},
		labels: []chartLabel{{round: 20, value: vals[19], text: "stalls here"}}}
	with, _ := drawChart(spec)
	spec.labels = nil
	without, _ := drawChart(spec)
	wl, wo := strings.Split(ansi.Strip(with), "\n"), strings.Split(ansi.Strip(without), "\n")
	if !strings.Contains(ansi.Strip(with), "stalls here") {
		t.Fatalf("label not placed:\n%s", ansi.Strip(with))
	}
	for i := range wo {
		a, b := []rune(wo[i]), []rune(wl[i])
		for j := range a {
			if a[j] != ' ' && (j >= len(b) || b[j] != a[j]) {
				t.Fatalf("the label overwrote a drawn cell at row %d col %d (%c)", i, j, a[j])
			}
		}
	}
	full := chartSpec{width: 24, height: 4, rounds: n, logY: true, curves: spec.curves,
		labels: []chartLabel{{round: 20, value: vals[19], text: "a label far too long to fit anywhere"}}}
	if out, _ := drawChart(full); strings.Contains(out, "a label") {
		t.Error("a label that does not fit was drawn")
	}
}

// TestFormatTickFitsTheLabelColumn checks tick labels stay within their
// column and read back as the value.
func TestFormatTickFitsTheLabelColumn(t *testing.T) {
	for _, v := range []float64{1e-9, 1e-5, 0.0037, 0.01, 0.5, 1, 2.5, 10, 250, 1e4, 2.5e6, 1e12, -0.2, -300} {
		s := formatTick(v)
		if len(s) > labelWidth {
			t.Errorf("%g → %q, wider than %d", v, s, labelWidth)
		}
		if got, err := strconv.ParseFloat(s, 64); err != nil || math.Abs(got-v) > 0.01*math.Abs(v) {
			t.Errorf("%g → %q reads back as %g", v, s, got)
		}
	}
}

// TestFormatValue: three significant digits, trailing zeros kept, so
// that the legend shows the precision it means (0.0150, not 0.015).
func TestFormatValue(t *testing.T) {
	for _, test := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {1, "1.00"}, {0.5, "0.500"}, {0.015034, "0.0150"}, {1.2, "1.20"}, {10, "10.0"}, {123.4, "123"},
		{0.0442, "0.0442"}, {-0.5, "-0.500"}, {0.00827, "0.00827"}, {1.2e-5, "1.20e-5"}, {4500, "4500"}, {2.5e8, "2.50e+8"},
	} {
		if got := formatValue(test.v); got != test.want {
			t.Errorf("formatValue(%g) = %q, want %q", test.v, got, test.want)
		}
	}
}
