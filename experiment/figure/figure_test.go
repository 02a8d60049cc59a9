package figure

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/experiment"
)

// frame reads a small CSV table.
func frame(t *testing.T, csv string) *experiment.Frame {
	t.Helper()
	f, err := experiment.ReadFrame(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// strokes parses the SVG as XML and counts its <path> elements by
// colour: the stroke of a line, the fill of a dot.
func strokes(t *testing.T, svg []byte) map[string]int {
	t.Helper()
	out := map[string]int{}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("the SVG is not XML: %v", err)
		}
		if el, ok := tok.(xml.StartElement); ok && el.Name.Local == "path" {
			for _, a := range el.Attr {
				if a.Name.Local != "style" {
					continue
				}
				for _, part := range strings.Split(a.Value, ";") {
					c, ok := strings.CutPrefix(part, "stroke:")
					if !ok {
						c, ok = strings.CutPrefix(part, "fill:")
					}
					if ok && c != "none" {
						out[strings.ToUpper(c)]++
					}
				}
			}
		}
	}
}

func hex(i int) string {
	c := Palette[i]
	return fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B)
}

// TestOnePathPerRacer draws a run of three racers in two log panels, one
// with a dashed reference level: the SVG parses as XML and carries, per
// panel, one path per racer (its line) and one in the legend — a racer
// whose value is missing at a round (a divergence) is broken there into
// two paths. The same panels give the same bytes.
func TestOnePathPerRacer(t *testing.T) {
	f := frame(t, "algorithm,round,err,grad\n"+
		"A,0,10,5\nA,1,1,4\nA,2,0.1,3\nA,3,0.05,2\n"+
		"B,0,10,5\nB,1,2,4\nB,2,0.5,3\nB,3,0.3,2\n"+
		"C,0,10,5\nC,1,3,4\nC,2,,3\nC,3,0.2,2\n")
	charts := []experiment.Chart{
		{Metric: "err", Column: "err", Caption: "error", LogY: true, X: "round", XLabel: "round", XScale: "linear",
			Levels: []experiment.Level{{Metric: "err", Value: 0.05, Label: "least squares"}}},
		{Metric: "grad", Column: "grad", Caption: "gradient", LogY: true, X: "round", XLabel: "round", XScale: "linear"},
	}
	panels := []Panel{{Title: "(a)", Chart: charts[0], Frame: f}, {Title: "(b)", Chart: charts[1], Frame: f}}
	var a, b bytes.Buffer
	if err := Write(&a, "test", panels, 0); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, "test", panels, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("the same panels gave different bytes")
	}
	got := strokes(t, a.Bytes())
	for i, want := range []int{4, 4, 5} { // C's error: a line to round 1, a dot at round 3
		if got[hex(i)] != want {
			t.Errorf("racer %d (%s): %d paths, want %d (%v)", i, hex(i), got[hex(i)], want, got)
		}
	}
	if got["#555555"] != 2 { // the level and its legend sample
		t.Errorf("reference level: %d paths, want 2 (%v)", got["#555555"], got)
	}
	if !strings.Contains(a.String(), "least squares") || !strings.Contains(a.String(), ">A<") {
		t.Error("the legend does not name the level and the racers")
	}
}

// TestSweepPanel draws a sweep on an evenly spaced grid that starts at 0
// and on a log grid, with a prediction curve in a racer's colour, a
// vertical prediction and a mark: every line is drawn, values ≤ 0 on a log
// axis are left out rather than panicking, and a panel without any
// positive value falls back to a linear axis.
func TestSweepPanel(t *testing.T) {
	f := frame(t, "algorithm,alpha,trials,mse_mean\n"+
		"A,0,2,1\nA,0.01,2,2\nA,0.1,2,0\nA,1,2,4\n"+
		"B,0,2,1.5\nB,0.01,2,2.5\nB,0.1,2,3.5\nB,1,2,4.5\n")
	grid := []float64{0, 0.01, 0.1, 1}
	ch := experiment.Chart{Metric: "mse", Column: "mse_mean", Caption: "MSE", LogY: true, X: "alpha", XLabel: "α", XScale: "index",
		Grid: grid, Levels: []experiment.Level{{Value: 1, Label: "FG = 1"}},
		Theory: []experiment.ChartTheory{{Label: "theory", Curve: []experiment.Num{1, 2, experiment.Num(math.NaN()), 3}, Racer: "B"},
			{Label: "at", At: 0.05}},
		Marks: []experiment.Mark{{At: 0.1, Note: "square"}}}
	var out bytes.Buffer
	if err := Write(&out, "sweep", []Panel{{Title: "index", Chart: ch, Frame: f}}, 1); err != nil {
		t.Fatal(err)
	}
	got := strokes(t, out.Bytes())
	// A: a line, then a dot after its 0, and its legend sample; B: its
	// line, its legend sample, the theory curve and its legend sample.
	if got[hex(0)] != 3 || got[hex(1)] != 4 {
		t.Errorf("paths per colour %v", got)
	}
	logCh := ch
	logCh.XScale, logCh.Grid = "log", nil
	logCh.Theory, logCh.Marks = nil, nil
	zero := frame(t, "algorithm,alpha,trials,mse_mean\nA,0.01,2,0\nA,0.1,2,0\n")
	for _, p := range []Panel{{Chart: logCh, Frame: f}, {Chart: logCh, Frame: zero}} {
		if err := Write(io.Discard, "log", []Panel{p}, 0); err != nil {
			t.Error(err)
		}
	}
	if err := Write(io.Discard, "none", nil, 0); err == nil {
		t.Error("a figure without panels was drawn")
	}
}
