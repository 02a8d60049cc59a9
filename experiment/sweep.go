package experiment

import (
	"bufio"
	"context"
	"encoding/csv"
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
	// Check, if set, validates the data of a point scenario cheaply (e.g.
	// subspace_dim ≤ dim at every grid value).
	Check func(p Scenario) error
}

func (s SweepSpec) describe() string {
	if len(s.Grid) == 0 {
		return "no values"
	}
	return fmt.Sprintf("%d values from %s to %s", len(s.Grid), FormatFloat(s.Grid[0]), FormatFloat(s.Grid[len(s.Grid)-1]))
}

// SweepMetric is one metric of a sweep: columns <Name>_mean and <Name>_std
// (or <Name> alone when Single).
type SweepMetric struct {
	Name    string  // snake_case stem, e.g. fg_scarce
	Caption string  // what the chart shows, e.g. "FG of the first data-scarce client"
	Ref     float64 // a level drawn as a dashed reference line (FG = 1); NaN for none
	RefNote string  // what the reference line means, e.g. "FG = 1"
	// TableOnly metrics are written as columns but not charted (e.g. the
	// fraction of diverged trials, the empirical heterogeneity).
	TableOnly bool
	// Single metrics are already one statistic of the trials (a median, a
	// quantile): written as the one column <Name>, holding what Stat returns
	// as the mean, without a standard deviation.
	Single bool
	// Spread names another metric of the same table drawn as a band or a
	// second line beside this one (e.g. the median of the per-trial FG).
	Spread string
	// Theory are the papers' predictions drawn dashed on this metric's
	// chart, named in the legend and toggled with the theory overlays.
	Theory []Theory
	// Marks are grid values the chart marks with a vertical line and a
	// note (e.g. r = n_j, where single trials spike).
	Marks []Mark
}

// Theory is a prediction of a paper on a sweep's chart: a curve with one
// value per grid point (NaN where it does not apply), or, when Curve is nil,
// a vertical line at the grid value At (e.g. the coverage point
// r = d·ln d/M of paper 000's Thm 6).
type Theory struct {
	Label string
	Curve []float64
	At    float64
	// Racer, when set, is the label of the racer the prediction is about:
	// the curve is drawn in its colour.
	Racer string
}

// Mark is a grid value a sweep chart singles out, and why.
type Mark struct {
	At   float64
	Note string
}

// sweeper returns the scenario's family as a Sweeper, or an *InputError
// when the scenario is not a sweep.
func (sc Scenario) sweeper() (Sweeper, error) {
	f := sc.Family.Sweeps()
	if f == nil || !sc.IsSweep() {
		return nil, Errorf("preset %q is not a sweep; sweep presets: %s", sc.Preset, sc.sweepPresetNames())
	}
	return f, nil
}

// sweepPresetNames lists the sweep presets of the scenario's family, or
// says there are none.
func (sc Scenario) sweepPresetNames() string {
	var names []string
	for _, p := range sc.Family.Presets() {
		if p.Scenario().IsSweep() {
			names = append(names, p.Name)
		}
	}
	if len(names) == 0 {
		return "none in this family"
	}
	return strings.Join(names, ", ")
}

// validateSweep checks the sweep part of a scenario (Validate calls it).
func (sc Scenario) validateSweep() error {
	if !sc.IsSweep() {
		return nil
	}
	if _, err := sc.sweeper(); err != nil {
		return err
	}
	switch {
	case sc.Trials < 1 || sc.Trials > MaxTrials:
		return &InputError{Msg: fmt.Sprintf("trials=%d: must lie in 1..%d", sc.Trials, MaxTrials)}
	case len(sc.Sweep.Grid) == 0:
		return &InputError{Msg: fmt.Sprintf("%s: the sweep has no grid values", sc.Sweep.Knob)}
	}
	// Every grid point must make a valid scenario (e.g. subspace_dim ≤ dim).
	for i := range sc.Sweep.Grid {
		if _, err := sc.PointScenario(i, 0); err != nil {
			return err
		}
	}
	return nil
}

// PointScenario returns the scenario of grid point i and trial t: the swept
// knob set to Grid[i], Adjust applied, the seed Seed+t and no sweep.
func (sc Scenario) PointScenario(i, t int) (Scenario, error) {
	p := sc
	p.Sweep = SweepSpec{}
	if err := p.setKnob(sc.Sweep.Knob, FormatFloat(sc.Sweep.Grid[i])); err != nil {
		return Scenario{}, err
	}
	if sc.Sweep.Adjust != nil {
		sc.Sweep.Adjust(&p)
	}
	p.Seed = sc.Seed + uint64(t)
	if sc.Sweep.Check != nil {
		if err := sc.Sweep.Check(p); err != nil {
			msg := err.Error()
			if at := fmt.Sprintf("%s=%s", sc.Sweep.Knob, FormatFloat(sc.Sweep.Grid[i])); !strings.HasPrefix(msg, at) {
				msg = at + " (a value of the sweep): " + msg
			}
			return Scenario{}, &InputError{Msg: msg}
		}
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
// parallel on GOMAXPROCS workers (fewer when that many points would not fit
// in the memory available; a sweep whose largest point does not fit is
// refused with an *InputError), calling emit once per finished evaluation
// (never concurrently; in completion order, which varies from run to run —
// SweepTable's output does not depend on it). It stops at the first error,
// and returns ctx.Err() when cancelled, after every worker has stopped.
func RunSweep(ctx context.Context, sc Scenario, emit func(TrialResult)) error {
	if err := sc.Validate(); err != nil {
		return err
	}
	fam, err := sc.sweeper()
	if err != nil {
		return err
	}
	return runTasks(ctx, sc, fam, sweepOrder(len(sc.Sweep.Grid), sc.Trials), emit)
}

// runTasks evaluates the tasks in order on GOMAXPROCS workers (fewer when
// that many would not fit in memory), for RunSweep and RunSweepShard.
func runTasks(ctx context.Context, sc Scenario, fam Sweeper, order []sweepTask, emit func(TrialResult)) error {
	workers, err := sweepWorkers(ctx, sc, min(runtime.GOMAXPROCS(0), len(order)))
	if err != nil {
		return err
	}
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	for range workers {
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

func (sc Scenario) evaluate(ctx context.Context, fam Sweeper, task sweepTask) ([][]float64, error) {
	p, err := sc.PointScenario(task.point, task.trial)
	if err != nil {
		return nil, err
	}
	vals, err := fam.Evaluate(ctx, p)
	if err != nil && !errors.Is(err, context.Canceled) {
		err = fmt.Errorf("%s=%s, trial %d (seed %d): %w", sc.Sweep.Knob, FormatFloat(sc.Sweep.Grid[task.point]),
			task.trial+1, p.Seed, err)
	}
	return vals, err
}

// SweepProgress is how far a sweep has come.
type SweepProgress struct {
	Done, Total int
	Elapsed     time.Duration
}

// ETA estimates the time left from the mean time per evaluation so far; 0
// when nothing is done yet or everything is.
func (p SweepProgress) ETA() time.Duration {
	if p.Done == 0 || p.Done >= p.Total {
		return 0
	}
	return time.Duration(float64(p.Elapsed) * float64(p.Total-p.Done) / float64(p.Done))
}

// Fraction is Done/Total in [0, 1].
func (p SweepProgress) Fraction() float64 {
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
	stat StatFunc
}

// NewSweepTable prepares the table of a sweep scenario.
func NewSweepTable(sc Scenario) (*SweepTable, error) {
	fam, err := sc.sweeper()
	if err != nil {
		return nil, err
	}
	t := &SweepTable{Knob: sc.Sweep.Knob, Grid: sc.Sweep.Grid, Labels: fam.SweepLabels(sc), Metrics: fam.SweepMetrics(sc),
		Trials: sc.Trials, cells: make([][][][]float64, len(sc.Sweep.Grid)), count: make([]int, len(sc.Sweep.Grid)),
		stat: fam.SweepStat(sc)}
	for i := range t.cells {
		t.cells[i] = make([][][]float64, sc.Trials)
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
	return Mean(vals), SampleStd(vals), n
}

// Mean is the arithmetic mean of xs, summed in order.
func Mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// SampleStd is the sample standard deviation, NaN with fewer than two values.
func SampleStd(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	mean := Mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
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
// <metric>_mean,<metric>_std for every metric (<metric> for a Single one).
func (t *SweepTable) Columns() []string {
	cols := []string{"algorithm", t.Knob, "trials"}
	for _, m := range t.Metrics {
		if m.Single {
			cols = append(cols, m.Name)
			continue
		}
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
	cw := csv.NewWriter(bw)
	if f == CSV {
		cw.Write(cols)
	}
	keys := make([][]byte, len(cols))
	for k, c := range cols {
		keys[k], _ = json.Marshal(c)
	}
	for r, label := range t.Labels {
		name, _ := json.Marshal(label)
		for i, v := range t.Grid {
			if t.count[i] == 0 {
				continue
			}
			stats := make([]float64, 0, 2*len(t.Metrics))
			for m, metric := range t.Metrics {
				mean, std, _ := t.Stat(i, r, m)
				stats = append(stats, mean)
				if !metric.Single {
					stats = append(stats, std)
				}
			}
			if f == CSV {
				row := []string{label, Number(v), strconv.Itoa(t.count[i])}
				for _, s := range stats {
					row = append(row, Number(s))
				}
				cw.Write(row)
				continue
			}
			fmt.Fprintf(bw, `{"algorithm":%s,%s:%s,"trials":%d`, name, keys[1], Number(v), t.count[i])
			for k, s := range stats {
				if finite(s) {
					fmt.Fprintf(bw, `,%s:%s`, keys[3+k], Number(s))
				}
			}
			bw.WriteString("}\n")
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}
