package experiment

import (
	"math"
	"slices"
)

// Chart is what a figure needs to know about one metric of a run or a
// sweep besides its rows (a Frame): which column holds it, its caption and
// scales, and the dashed lines the explorer draws on it — reference levels,
// the papers' predictions, a bound per racer. ChartsOfRun and ChartsOfSweep
// make them from the family's declarations, so a figure drawn for a slide
// (`run --plot`) and one of `fedscope reproduce` show what the explorer
// shows. Charts travel as JSON beside the CSV (reproduce's NAME.json).
type Chart struct {
	Metric  string `json:"metric"`
	Column  string `json:"column"` // the CSV column of the values
	Caption string `json:"caption"`
	LogY    bool   `json:"log_y"`
	X       string `json:"x"` // the CSV column of the x axis
	XLabel  string `json:"x_label"`
	// XScale is "linear", "log", or "index" (a grid spaced evenly and
	// labelled with its values: log-spaced grids that start at 0).
	XScale string `json:"x_scale"`
	// TableOnly metrics are written but not charted by default.
	TableOnly bool `json:"table_only,omitempty"`
	// Levels are horizontal dashed lines (references, predictions).
	Levels []Level `json:"levels,omitempty"`
	// Bound names a column drawn dashed in each racer's colour over this
	// one (paper 002's bound).
	Bound string `json:"bound,omitempty"`
	// Theory are a sweep's predictions: curves over the grid, or vertical
	// lines at a grid value.
	Theory []ChartTheory `json:"theory,omitempty"`
	Marks  []Mark        `json:"marks,omitempty"`
	// Grid is the sweep's grid (the x of Theory curves).
	Grid []float64 `json:"grid,omitempty"`
}

// ChartTheory is a Theory that survives JSON (NaN as null).
type ChartTheory struct {
	Label string `json:"label"`
	Curve []Num  `json:"curve,omitempty"`
	At    Num    `json:"at"`
	Racer string `json:"racer,omitempty"`
}

// ChartsOfRun describes the charts of a run: the metrics its family
// charts (Facts.Charts), against the round, with their levels and bounds.
func ChartsOfRun(sc Scenario, f Facts) []Chart {
	ms := sc.Family.Metrics(sc)
	var out []Chart
	for _, name := range f.Charts {
		i := MetricIndex(ms, name)
		if i < 0 {
			continue
		}
		m := ms[i]
		c := Chart{Metric: m.Name, Column: m.Name, Caption: m.Caption, LogY: m.Log, X: "round",
			XLabel: "communication round", XScale: "linear", Bound: m.Bound}
		for _, l := range f.Levels {
			if l.Metric == name && finite(l.Value) {
				c.Levels = append(c.Levels, l)
			}
		}
		out = append(out, c)
	}
	return out
}

// ChartsOfSweep describes the charts of a sweep: every metric's mean (or
// its single column) against the swept knob, log y as the sweep view draws
// it, with the reference level, the predictions and the marks.
func ChartsOfSweep(sc Scenario) []Chart {
	sw, err := sc.sweeper()
	if err != nil {
		return nil
	}
	grid := slices.Clone(sc.Sweep.Grid)
	scale := gridScale(grid)
	var out []Chart
	for _, m := range sw.SweepMetrics(sc) {
		col := m.Name + "_mean"
		if m.Single {
			col = m.Name
		}
		c := Chart{Metric: m.Name, Column: col, Caption: m.Caption, LogY: true, X: sc.Sweep.Knob,
			XLabel: sc.Sweep.Label, XScale: scale, TableOnly: m.TableOnly, Marks: m.Marks, Grid: grid}
		if finite(m.Ref) {
			c.Levels = append(c.Levels, Level{Metric: m.Name, Value: m.Ref, Label: m.RefNote})
		}
		for _, t := range m.Theory {
			ct := ChartTheory{Label: t.Label, At: Num(t.At), Racer: t.Racer}
			for _, v := range t.Curve {
				ct.Curve = append(ct.Curve, Num(v))
			}
			c.Theory = append(c.Theory, ct)
		}
		out = append(out, c)
	}
	return out
}

// gridScale says how a sweep's grid is best drawn: "log" for a log-spaced
// grid spanning a decade or more, "index" for a log-spaced grid that
// starts at 0 or below (spaced evenly, as the sweep view does), else
// "linear".
func gridScale(grid []float64) string {
	var pos []float64
	for _, v := range grid {
		if v > 0 {
			pos = append(pos, v)
		}
	}
	if len(pos) < 3 {
		return "linear"
	}
	slices.Sort(pos)
	lo, hi := math.Inf(1), 0.0
	for i := 1; i < len(pos); i++ {
		r := pos[i] / pos[i-1]
		lo, hi = min(lo, r), max(hi, r)
	}
	geometric := hi/lo <= 1.5 && pos[len(pos)-1]/pos[0] >= 10
	switch {
	case geometric && len(pos) < len(grid):
		return "index"
	case geometric:
		return "log"
	}
	return "linear"
}
