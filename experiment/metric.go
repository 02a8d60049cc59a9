package experiment

import "math"

// Metric is one per-round metric of a family, declared once: its name is the
// CSV column and the JSON key, its caption titles the chart and the readout,
// and Log chooses the axis. The value is read from Round.Values at the
// metric's position in the family's list.
type Metric struct {
	Name    string // snake_case column, e.g. grad_norm
	Caption string // e.g. "gradient norm ‖∇ℓ(θ_t)‖"
	Short   string // a few characters for readouts, e.g. "‖∇ℓ‖"; Name when empty
	Log     bool   // drawn on a log axis (while the view's log toggle is on)
	// XAxis marks a cumulative metric the run view can use as its x axis
	// instead of the round (the oracle complexity of paper 001).
	XAxis bool
	// Bound names another metric of the same racer drawn dashed over this
	// one: a bound the measured curve stays under (paper 002).
	Bound string
}

// Label is the metric's short name for readouts.
func (m Metric) Label() string {
	if m.Short != "" {
		return m.Short
	}
	return m.Name
}

// MetricIndex returns the position of the metric named name, or −1.
func MetricIndex(ms []Metric, name string) int {
	for i, m := range ms {
		if m.Name == name {
			return i
		}
	}
	return -1
}

// Round is what a racer reports after one communication round: what every
// family has (index, model, phase, assignments) and the family's metric
// values. A value that is not measured in a round is NaN (an empty CSV cell,
// an omitted JSON key), never 0.
type Round struct {
	Index  int
	Theta  []float64 // the global model (k×d cluster models for clustered racers)
	Phase  int       // 1, 2, … for phased algorithms; 0 otherwise
	Assign []int     // clients' cluster labels, relabelled to the truth; nil otherwise
	Values []float64 // one per metric, in Family.Metrics order
	// Warning, when set, says that something went outside the regime the
	// paper covers at this round (e.g. a cluster without an anchor): written
	// to stderr by `fedscope run`, as a "warning" key in JSON lines, and on
	// the TUI's status line — never passed over silently.
	Warning string
}

// Value returns the round's value of metric i (NaN when out of range).
func (r *Round) Value(i int) float64 {
	if i < 0 || i >= len(r.Values) {
		return math.NaN()
	}
	return r.Values[i]
}
