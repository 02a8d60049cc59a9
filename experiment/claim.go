package experiment

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Reproduction is what one paper's family declares for `fedscope
// reproduce` (docs/papers.md): the runs and sweeps that measure the paper's
// claims, the claims read off their rows, and the paper's figures redrawn
// from the same rows. A family without one leaves Definition.Reproduce nil.
type Reproduction struct {
	Paper string // the paper's short key, e.g. "000"
	Title string // its short title
	// Experiments are the runs and sweeps, in the order they are made.
	Experiments []Experiment
	// Claims are read off the experiments' rows, in report order.
	Claims []Claim
	// Figures are the paper's figures, each a grid of panels.
	Figures []Figure
}

// Experiment is one run or sweep of `fedscope reproduce`: a preset with
// assignments, written as NAME.csv (and NAME.jsonl for a run) in the
// report's directory.
type Experiment struct {
	// Name is the file stem, unique over every family: "000-fig1".
	Name   string
	Preset string
	// Set are --set assignments applied to the preset, in order.
	Set []string
	// Rounds and Trials override the preset's when not 0 (Trials: sweeps).
	Rounds, Trials int
	// Quick is what --quick changes.
	Quick Quick
	// Files are knobs set to a file found in the --data directory, e.g.
	// {"data": "pendigits.scale"}; without it the experiment is not
	// reproducible here and its claims say so.
	Files []DataFile
}

// DataFile is a knob set to a file of the --data directory.
type DataFile struct{ Knob, Name string }

// Quick is how --quick shortens an experiment for a first look.
type Quick struct {
	Skip   bool // --quick leaves it out; its claims are "not run"
	Trials int  // sweeps: trials under --quick (0: as in full)
	Rounds int  // rounds under --quick (0: as in full)
}

// Figure is one of the paper's figures as `fedscope reproduce` draws it:
// a grid of panels, each one metric of one experiment.
type Figure struct {
	Name  string // file stem: "000-fig1" → 000-fig1.svg
	Title string
	// Panels are drawn left to right, Columns per row (0: up to 3).
	Panels  []Panel
	Columns int
}

// Panel is one chart of a figure: a metric of an experiment, against the
// round (a run), the swept knob (a sweep) or another column X.
type Panel struct {
	Experiment string
	Metric     string // the metric's name (a sweep metric's stem)
	Title      string // e.g. "(a) B = 20"
	X          string // the column of the x axis; "" for the default
	Linear     bool   // a linear y axis where the chart's is log (Fig. 6(b): 1/MSE)
	XLabel     string // names the x axis of X when no chart does
}

// Claim is one statement of a paper that fedscope re-measures: where the
// paper says it, what it states (its number, when it gives one), what
// fedscope measures and how the verdict is decided.
type Claim struct {
	ID    string // stable key, e.g. "000-fig1-stall"
	Where string // "Fig. 1(a)", "Table 3", "Thm 2.1"
	// Experiments the claim reads; Measure gets them in this order.
	Experiments []string
	// States is what the paper states, in words.
	States string
	// Paper is the paper's number, as it writes it ("≈ 7.5", "97.29"); ""
	// for a qualitative statement.
	Paper string
	// Criterion says what fedscope measures and what decides the verdict.
	Criterion string
	Rule      Rule
	// Measure reads the measured value off the experiments' rows and says
	// it in words (with the numbers it rests on).
	Measure func(ms []*Measured) (value float64, text string, err error)
	// Differs is why fedscope's number differs from the paper's, when it
	// does: said beside a "differs" verdict.
	Differs string
	// Offline, when set, is why the claim cannot be reproduced here (data
	// not available offline); nothing is run for it.
	Offline string
}

// RuleKind is how a measured value is compared with what the paper states.
type RuleKind int

const (
	// Near holds when |v − Want| ≤ Tol·|Want| (relative) or, with Abs, ≤ Tol.
	Near RuleKind = iota
	// AtLeast holds when v ≥ Want.
	AtLeast
	// AtMost holds when v ≤ Want.
	AtMost
	// Between holds when Lo ≤ v ≤ Hi.
	Between
)

// Rule is the tolerance of a claim and how its verdict is decided.
type Rule struct {
	Kind   RuleKind
	Want   float64
	Tol    float64
	Abs    bool // Tol is absolute, not relative
	Lo, Hi float64
}

// Holds reports whether the measured value v satisfies the rule; a value
// that is not finite never does.
func (r Rule) Holds(v float64) bool {
	if !finite(v) {
		return false
	}
	switch r.Kind {
	case Near:
		tol := r.Tol
		if !r.Abs {
			tol *= math.Abs(r.Want)
		}
		return math.Abs(v-r.Want) <= tol
	case AtLeast:
		return v >= r.Want
	case AtMost:
		return v <= r.Want
	case Between:
		return v >= r.Lo && v <= r.Hi
	}
	return false
}

// String says the rule as the report's tolerance column does.
func (r Rule) String() string {
	g := func(v float64) string { return Short(v) }
	switch r.Kind {
	case Near:
		if r.Abs {
			return fmt.Sprintf("%s ± %s", g(r.Want), g(r.Tol))
		}
		return fmt.Sprintf("within %s %% of %s", g(100*r.Tol), g(r.Want))
	case AtLeast:
		return "≥ " + g(r.Want)
	case AtMost:
		return "≤ " + g(r.Want)
	case Between:
		return fmt.Sprintf("in [%s, %s]", g(r.Lo), g(r.Hi))
	}
	return "?"
}

// Short writes v with at most four significant digits, as the report and
// the paper guide quote numbers.
func Short(v float64) string {
	if !finite(v) {
		return fmt.Sprint(v)
	}
	return strings.Replace(fmt.Sprintf("%.4g", v), "e-0", "e-", 1)
}

// Verdict is the outcome of a claim.
type Verdict int

// The verdicts of a claim.
const (
	Reproduced Verdict = iota
	Differs
	NotHere // not reproducible here: data not available offline, or a file not given
	NotRun  // its experiments were left out (--quick)
)

func (v Verdict) String() string {
	switch v {
	case Reproduced:
		return "reproduced"
	case Differs:
		return "differs"
	case NotHere:
		return "not reproducible here"
	case NotRun:
		return "not run"
	}
	return "?"
}

// Unavailable is the error of an experiment that could not run here (a
// data file not given), or was left out: the claims that read it get the
// verdict Verdict with this reason.
type Unavailable struct {
	Verdict Verdict
	Reason  string
}

func (e *Unavailable) Error() string { return e.Reason }

// Judgement is a claim's verdict on a measurement.
type Judgement struct {
	Verdict Verdict
	Value   float64 // NaN when nothing was measured
	Text    string  // what was measured, in words
	Why     string  // the reason beside "differs", "not reproducible here", "not run"
}

// Judge decides the claim's verdict from what Measure returned: the
// offline reason first, then an unavailable experiment, then the rule on a
// finite value (a failed or non-finite measurement differs, saying why).
func (c Claim) Judge(value float64, text string, err error) Judgement {
	j := Judgement{Value: value, Text: text}
	var un *Unavailable
	switch {
	case c.Offline != "":
		return Judgement{Verdict: NotHere, Value: math.NaN(), Why: c.Offline}
	case errors.As(err, &un):
		return Judgement{Verdict: un.Verdict, Value: math.NaN(), Why: un.Reason}
	case err != nil:
		j.Verdict, j.Value, j.Why = Differs, math.NaN(), "not measured: "+err.Error()
	case !finite(value):
		j.Verdict, j.Why = Differs, "no finite value was measured"
		if c.Differs != "" {
			j.Why += "; " + c.Differs
		}
	case c.Rule.Holds(value):
		j.Verdict = Reproduced
	default:
		j.Verdict, j.Why = Differs, c.Differs
		if j.Why == "" {
			j.Why = "outside the tolerance"
		}
	}
	return j
}

// Evaluate measures the claim on its experiments (nil entries are
// experiments not available, each with its reason in missing) and judges it.
func (c Claim) Evaluate(ms []*Measured, missing []error) Judgement {
	if c.Offline != "" {
		return c.Judge(math.NaN(), "", nil)
	}
	for i := range ms {
		if ms[i] == nil {
			err := missing[i]
			if err == nil {
				err = &Unavailable{Verdict: NotRun, Reason: "experiment " + c.Experiments[i] + " was not run"}
			}
			return c.Judge(math.NaN(), "", err)
		}
	}
	if c.Measure == nil {
		return c.Judge(math.NaN(), "", errors.New("the claim has no measurement"))
	}
	v, text, err := c.Measure(ms)
	return c.Judge(v, text, err)
}

// Measured is what one experiment produced, read back from the files
// `fedscope reproduce` wrote: its rows (the CSV), the parameters the family
// reported and the lines of its charts.
type Measured struct {
	Name    string
	Command string // the command line that writes the same rows
	Sweep   bool
	Seed    uint64
	Rounds  int
	Trials  int // sweeps
	Frame   *Frame
	Params  map[string]float64
	Charts  []Chart
	// Failed are the racers' errors of a run (a divergence), in words.
	Failed []string
}

// Param returns a parameter the family reported (Facts.Params), or an
// error naming it.
func (m *Measured) Param(name string) (float64, error) {
	v, ok := m.Params[name]
	if !ok {
		return math.NaN(), fmt.Errorf("%s: no parameter %q", m.Name, name)
	}
	return v, nil
}

// Level returns the value of the dashed level of a run's chart whose label
// starts with label.
func (m *Measured) Level(metric, label string) (float64, error) {
	for _, c := range m.Charts {
		if c.Metric != metric {
			continue
		}
		for _, l := range c.Levels {
			if strings.HasPrefix(l.Label, label) {
				return l.Value, nil
			}
		}
	}
	return math.NaN(), fmt.Errorf("%s: no level %q on the %s chart", m.Name, label, metric)
}

// Series returns the racer's values of column y against column x, in row
// order (the rows of a run are rounds ascending, of a sweep grid values).
func (m *Measured) Series(racer, x, y string) (xs, ys []float64, err error) {
	return m.Frame.Series(racer, x, y)
}

// Final returns the racer's value of column y in its last row.
func (m *Measured) Final(racer, y string) (float64, error) {
	_, ys, err := m.Frame.Series(racer, m.Frame.Columns[1], y)
	if err != nil {
		return math.NaN(), err
	}
	if len(ys) == 0 {
		return math.NaN(), fmt.Errorf("%s: %s has no rows", m.Name, racer)
	}
	return ys[len(ys)-1], nil
}

// At returns the racer's value of column y in the row whose x column
// (the round, or the swept knob) equals x.
func (m *Measured) At(racer string, x float64, y string) (float64, error) {
	xs, ys, err := m.Frame.Series(racer, m.Frame.Columns[1], y)
	if err != nil {
		return math.NaN(), err
	}
	for i := range xs {
		if xs[i] == x {
			return ys[i], nil
		}
	}
	return math.NaN(), fmt.Errorf("%s: %s has no row at %s = %s", m.Name, racer, m.Frame.Columns[1], FormatFloat(x))
}

// RoundsToWithin returns the first round from which the racer's column y
// stays within tol (relative) of its final value: the rounds a racer needs
// to converge (paper 000's communication saving).
func RoundsToWithin(rounds, ys []float64, tol float64) float64 {
	if len(ys) == 0 {
		return math.NaN()
	}
	final := ys[len(ys)-1]
	at := rounds[len(rounds)-1]
	for i := len(ys) - 1; i >= 0; i-- {
		if math.Abs(ys[i]-final) > tol*math.Abs(final) {
			break
		}
		at = rounds[i]
	}
	return at
}

// Crossing returns where the curve (xs, ys) first falls through the level
// y = level, interpolating log y against log x between the two grid values
// around it; NaN when it never does.
func Crossing(xs, ys []float64, level float64) float64 {
	for i := 1; i < len(xs); i++ {
		a, b := ys[i-1], ys[i]
		if a >= level && b < level && a > 0 && b > 0 && xs[i-1] > 0 {
			f := (math.Log(a) - math.Log(level)) / (math.Log(a) - math.Log(b))
			return math.Exp(math.Log(xs[i-1]) + f*(math.Log(xs[i])-math.Log(xs[i-1])))
		}
	}
	return math.NaN()
}

// Slope is the least-squares slope of ys against xs.
func Slope(xs, ys []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	mx, my := Mean(xs), Mean(ys)
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	return sxy / sxx
}

// RSquared is the coefficient of determination of the least-squares line
// of ys against xs.
func RSquared(xs, ys []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	b := Slope(xs, ys)
	mx, my := Mean(xs), Mean(ys)
	var res, tot float64
	for i := range xs {
		e := ys[i] - my - b*(xs[i]-mx)
		res += e * e
		tot += (ys[i] - my) * (ys[i] - my)
	}
	return 1 - res/tot
}
