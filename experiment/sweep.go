package experiment

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A sweep is a grid over one knob × trials × racers (DESIGN.md, "Command
// line"; PAPERS.md §1.9 and §8 for the figures it rebuilds). Its unit of
// work is one (grid value, trial) evaluation, which returns one number per
// racer and metric; trial t runs with seed Seed+t (PAPERS.md §8), the same
// seed at every grid value, so curves compare like with like.
//
// Extension point. A family becomes sweepable by adding an entry to
// sweepFamilies: its metric columns, optionally its racers' labels, and an
// evaluate function that receives the scenario of one grid point and trial —
// the swept knob already set, Adjust applied, Seed = base seed + trial — and
// returns out[racer][metric]. evaluate must be deterministic in that
// scenario, safe to call concurrently, and should return ctx.Err() promptly
// when cancelled. A preset then sets Family, Sweep (knob, grid) and Trials;
// RunSweep, SweepTable, `fedscope sweep` and the sweep view need nothing more.

// SweepSpec is the swept knob of a sweep scenario and its grid.
type SweepSpec struct {
	Knob  string    // the knob varied, named as in --set: gamma, subspace_dim, samples
	Grid  []float64 // its values, in plot order
	Label string    // axis caption, e.g. "model heterogeneity Γ"
	// Adjust, if set, changes other parameters once the knob is set to a grid
	// value, e.g. η = 0.1·r/d in E000-4.
	Adjust func(sc *Scenario)
	// Axis, if set, names a metric measured on the data at each grid value
	// (equal for every racer, e.g. the empirical Δ_Dj of paper 003) that
	// the sweep view can label the x axis with instead of the knob.
	Axis string
}

// IsSweep reports whether the scenario is a sweep rather than a run.
func (sc Scenario) IsSweep() bool { return sc.Sweep.Knob != "" }

func (s SweepSpec) describe() string {
	if len(s.Grid) == 0 {
		return "no values"
	}
	return fmt.Sprintf("%d values from %s to %s", len(s.Grid), formatFloat(s.Grid[0]), formatFloat(s.Grid[len(s.Grid)-1]))
}

// SweepMetric is one metric of a sweep: columns <Name>_mean and <Name>_std.
type SweepMetric struct {
	Name    string  // snake_case stem, e.g. fg_scarce
	Caption string  // what the chart shows, e.g. "FG of the first data-scarce client"
	Ref     float64 // a level drawn as a dashed reference line (FG = 1); NaN for none
	RefNote string  // what the reference line means, e.g. "FG = 1"
	// TableOnly metrics are written as columns but not charted (e.g. the
	// fraction of diverged trials, the empirical heterogeneity).
	TableOnly bool
}

// sweepFamily is what a family supplies to be swept (see "Extension point"
// at the top of this file).
type sweepFamily struct {
	metrics  func(sc Scenario) []SweepMetric
	labels   func(sc Scenario) []string // nil: the labels of sc.Resolve()
	evaluate func(ctx context.Context, sc Scenario) ([][]float64, error)
	validate func(sc Scenario) error // extra checks of a sweep scenario; may be nil
	// stat, if set, aggregates a metric over the trials of one grid point
	// from the rows evaluate returned (which then need not be one number per
	// metric); nil means the mean and sample standard deviation of the
	// per-trial values.
	stat func(sc Scenario) func(cells [][][]float64, racer, metric int) (mean, std float64, n int)
}

// sweepFamilies lists the sweepable families.
var sweepFamilies = map[Family]sweepFamily{
	FamilyFedGain:    fedGainFamily,
	FamilyPolynomial: polynomialFamily,
}

func (sc Scenario) sweepFamily() (sweepFamily, error) {
	f, ok := sweepFamilies[sc.Family]
	if !ok || !sc.IsSweep() {
		return sweepFamily{}, &InputError{Msg: fmt.Sprintf("preset %q is not a sweep; sweep presets: %s",
			sc.Preset, strings.Join(SweepPresetNames(), ", "))}
	}
	return f, nil
}

func (f sweepFamily) labelsOf(sc Scenario) []string {
	if f.labels != nil {
		return f.labels(sc)
	}
	var out []string
	for _, r := range sc.Resolve() {
		out = append(out, r.Label)
	}
	return out
}

// validateSweep checks the sweep part of a scenario (Validate calls it).
func (sc Scenario) validateSweep() error {
	if !sc.IsSweep() {
		return nil
	}
	f, err := sc.sweepFamily()
	if err != nil {
		return err
	}
	switch {
	case sc.Trials < 1 || sc.Trials > maxTrials:
		return &InputError{Msg: fmt.Sprintf("trials=%d: must lie in 1..%d", sc.Trials, maxTrials)}
	case len(sc.Sweep.Grid) == 0:
		return &InputError{Msg: fmt.Sprintf("%s: the sweep has no grid values", sc.Sweep.Knob)}
	}
	// Every grid point must make a valid scenario (e.g. subspace_dim ≤ dim).
	for i := range sc.Sweep.Grid {
		if _, err := sc.PointScenario(i, 0); err != nil {
			return err
		}
	}
	if f.validate != nil {
		return f.validate(sc)
	}
	return nil
}

// PointScenario returns the scenario of grid point i and trial t: the swept
// knob set to Grid[i], Adjust applied, the seed Seed+t and no sweep.
func (sc Scenario) PointScenario(i, t int) (Scenario, error) {
	p := sc
	p.Sweep = SweepSpec{}
	p.Racers = append([]RacerSpec(nil), sc.Racers...)
	if err := p.setKnob(sc.Sweep.Knob, formatFloat(sc.Sweep.Grid[i])); err != nil {
		return Scenario{}, err
	}
	if sc.Sweep.Adjust != nil {
		sc.Sweep.Adjust(&p)
	}
	p.Seed = sc.Seed + uint64(t)
	if err := p.Data.Validate(); err != nil {
		msg := err.Error()
		if at := fmt.Sprintf("%s=%s", sc.Sweep.Knob, formatFloat(sc.Sweep.Grid[i])); !strings.HasPrefix(msg, at) {
			msg = at + " (a value of the sweep): " + msg
		}
		return Scenario{}, &InputError{Msg: msg}
	}
	return p, nil
}

// TrialResult is one finished evaluation: Values[racer][metric] at grid
// point Point in trial Trial.
type TrialResult struct {
	Point, Trial int
	Values       [][]float64
}

// sweepTask is one unit of work.
type sweepTask struct{ point, trial int }

// sweepOrder lists the work so that a coarse curve comes first: trial 0
// visits the grid coarse to fine (both ends, then every 2^k-th point for
// decreasing k), and every later trial in the same order.
func sweepOrder(points, trials int) []sweepTask {
	idx := coarseToFine(points)
	out := make([]sweepTask, 0, points*trials)
	for t := 0; t < trials; t++ {
		for _, p := range idx {
			out = append(out, sweepTask{p, t})
		}
	}
	return out
}

func coarseToFine(n int) []int {
	seen := make([]bool, n)
	var out []int
	add := func(i int) {
		if i >= 0 && i < n && !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	add(0)
	add(n - 1)
	stride := 1
	for stride*2 < n {
		stride *= 2
	}
	for ; stride >= 1; stride /= 2 {
		for i := 0; i < n; i += stride {
			add(i)
		}
	}
	return out
}

// RunSweep evaluates every (grid point, trial) of a sweep scenario in
// parallel on GOMAXPROCS workers, calling emit once per finished evaluation
// (never concurrently; in completion order, which varies from run to run —
// SweepTable's output does not depend on it). It stops at the first error,
// and returns ctx.Err() when cancelled, after every worker has stopped.
func RunSweep(ctx context.Context, sc Scenario, emit func(TrialResult)) error {
	if err := sc.Validate(); err != nil {
		return err
	}
	fam, err := sc.sweepFamily()
	if err != nil {
		return err
	}
	order := sweepOrder(len(sc.Sweep.Grid), sc.Trials)
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	for range min(runtime.GOMAXPROCS(0), len(order)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for inner.Err() == nil {
				k := int(next.Add(1)) - 1
				if k >= len(order) {
					return
				}
				task := order[k]
				vals, err := sc.evaluate(inner, fam, task)
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = err
						cancel()
					}
				} else if inner.Err() == nil {
					emit(TrialResult{Point: task.point, Trial: task.trial, Values: vals})
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return firstErr
}

func (sc Scenario) evaluate(ctx context.Context, fam sweepFamily, task sweepTask) ([][]float64, error) {
	p, err := sc.PointScenario(task.point, task.trial)
	if err != nil {
		return nil, err
	}
	vals, err := fam.evaluate(ctx, p)
	if err != nil && !errors.Is(err, context.Canceled) {
		err = fmt.Errorf("%s=%s, trial %d (seed %d): %w", sc.Sweep.Knob, formatFloat(sc.Sweep.Grid[task.point]),
			task.trial+1, p.Seed, err)
	}
	return vals, err
}

// Progress is how far a sweep has come.
type Progress struct {
	Done, Total int
	Elapsed     time.Duration
}

// ETA estimates the time left from the mean time per evaluation so far; 0
// when nothing is done yet or everything is.
func (p Progress) ETA() time.Duration {
	if p.Done == 0 || p.Done >= p.Total {
		return 0
	}
	return time.Duration(float64(p.Elapsed) * float64(p.Total-p.Done) / float64(p.Done))
}

// Fraction is Done/Total in [0, 1].
func (p Progress) Fraction() float64 {
	if p.Total == 0 {
		return 0
	}
	return float64(p.Done) / float64(p.Total)
}

// SweepTable collects the trials of a sweep and reports, per grid point,
// racer and metric, the mean and standard deviation over the trials done so
// far. Each trial is stored in its slot, and every statistic sums the trials
// in index order, so the numbers are the same whatever order the trials
// finished in and whatever the number of CPUs.
type SweepTable struct {
	Knob    string
	Grid    []float64
	Labels  []string
	Metrics []SweepMetric
	Trials  int

	cells [][][][]float64 // [point][trial][racer][metric]; nil until done
	count []int           // trials done per point
	done  int
	// stat is the family's aggregation over trials; nil for per-value stats.
	stat func(cells [][][]float64, racer, metric int) (mean, std float64, n int)
}

// NewSweepTable prepares the table of a sweep scenario.
func NewSweepTable(sc Scenario) (*SweepTable, error) {
	fam, err := sc.sweepFamily()
	if err != nil {
		return nil, err
	}
	t := &SweepTable{Knob: sc.Sweep.Knob, Grid: sc.Sweep.Grid, Labels: fam.labelsOf(sc), Metrics: fam.metrics(sc),
		Trials: sc.Trials, cells: make([][][][]float64, len(sc.Sweep.Grid)), count: make([]int, len(sc.Sweep.Grid))}
	for i := range t.cells {
		t.cells[i] = make([][][]float64, sc.Trials)
	}
	if fam.stat != nil {
		t.stat = fam.stat(sc)
	}
	return t, nil
}

// Add records one evaluation; a repeated (point, trial) replaces the first.
func (t *SweepTable) Add(r TrialResult) {
	if t.cells[r.Point][r.Trial] == nil {
		t.count[r.Point]++
		t.done++
	}
	t.cells[r.Point][r.Trial] = r.Values
}

// Done returns the number of evaluations recorded; Total the number planned.
func (t *SweepTable) Done() int  { return t.done }
func (t *SweepTable) Total() int { return len(t.Grid) * t.Trials }

// Count returns the number of trials done at grid point i.
func (t *SweepTable) Count(i int) int { return t.count[i] }

// Stat returns the mean and the sample standard deviation over the trials
// done at grid point i of one racer's metric, and how many finite values
// they rest on (non-finite values are left out); the mean is NaN with no
// value, the standard deviation with fewer than two.
func (t *SweepTable) Stat(point, racer, metric int) (mean, std float64, n int) {
	if t.stat != nil {
		return t.stat(t.cells[point], racer, metric)
	}
	var vals []float64
	for _, c := range t.cells[point] {
		// A trial's row may lack the value (a malformed evaluation): skip it
		// rather than fail the whole table.
		if racer < len(c) && metric < len(c[racer]) {
			if v := c[racer][metric]; !math.IsNaN(v) && !math.IsInf(v, 0) {
				vals = append(vals, v)
			}
		}
	}
	n = len(vals)
	if n == 0 {
		return math.NaN(), math.NaN(), 0
	}
	for _, v := range vals {
		mean += v
	}
	mean /= float64(n)
	return mean, sampleStd(vals), n
}

// Rows returns the number of rows Write prints: one per racer and grid point
// with at least one trial done.
func (t *SweepTable) Rows() int {
	n := 0
	for _, c := range t.count {
		if c > 0 {
			n++
		}
	}
	return n * len(t.Labels)
}

// Snapshot returns a copy that stays valid while the original keeps growing
// (recorded trials are never modified).
func (t *SweepTable) Snapshot() *SweepTable {
	s := *t
	s.count = append([]int(nil), t.count...)
	s.cells = make([][][][]float64, len(t.cells))
	for i, c := range t.cells {
		s.cells[i] = append([][][]float64(nil), c...)
	}
	return &s
}

// Columns returns the CSV header: algorithm,<knob>,trials, then
// <metric>_mean,<metric>_std for every metric.
func (t *SweepTable) Columns() []string {
	cols := []string{"algorithm", t.Knob, "trials"}
	for _, m := range t.Metrics {
		cols = append(cols, m.Name+"_mean", m.Name+"_std")
	}
	return cols
}

// Write prints one row per (racer, grid value) with at least one trial done,
// racers in order, grid values in grid order. A statistic that does not
// exist (no finite value, or a standard deviation of one trial) is left
// empty in CSV and omitted in JSON lines.
func (t *SweepTable) Write(w io.Writer, f Format) error {
	bw := bufio.NewWriter(w)
	cols := t.Columns()
	if f == CSV {
		bw.WriteString(strings.Join(cols, ",") + "\n")
	}
	for r, label := range t.Labels {
		for i, v := range t.Grid {
			if t.count[i] == 0 {
				continue
			}
			stats := make([]float64, 0, 2*len(t.Metrics))
			for m := range t.Metrics {
				mean, std, _ := t.Stat(i, r, m)
				stats = append(stats, mean, std)
			}
			if f == CSV {
				bw.WriteString(csvField(label) + "," + number(v) + "," + strconv.Itoa(t.count[i]))
				for _, s := range stats {
					bw.WriteString("," + number(s))
				}
			} else {
				name, _ := json.Marshal(label)
				fmt.Fprintf(bw, `{"algorithm":%s,%q:%s,"trials":%d`, name, t.Knob, number(v), t.count[i])
				for k, s := range stats {
					if !math.IsNaN(s) && !math.IsInf(s, 0) {
						fmt.Fprintf(bw, `,%q:%s`, cols[3+k], number(s))
					}
				}
				bw.WriteString("}")
			}
			bw.WriteString("\n")
		}
	}
	return bw.Flush()
}
