// Package experiment is the engine of fedscope: complete, reproducible
// scenarios, the Family interface every paper implements, racing a
// scenario's algorithms side by side on data prepared once, sweeps with
// trials, and CSV / JSON-lines tables. It knows no paper: each paper is a
// family in its own subpackage (experiment/linear, experiment/lowrank,
// experiment/bound, experiment/newton, experiment/mixture), listed in one
// registry (experiment/registry), and nothing here switches on which family
// a scenario belongs to.
//
// A new paper is one package that implements Family (and Sweeper if it has
// sweeps) plus one line in the registry.
package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Family is everything one paper brings: its presets, its knobs (typed, with
// ranges and the live keys that move them), its racers and their syntax, its
// data preparation, the metrics it reports, its sweeps, its one-line summary
// and its help. The engine, the command line, the exporters and the TUI ask
// the family; none of them switches on which family it is.
type Family interface {
	// Name is the family's short key, e.g. "linear".
	Name() string
	// Paper names the paper the family implements, e.g.
	// "000_8dadcc9301cefdf4.txt (docs/papers.md §1)".
	Paper() string
	// Presets are the family's named scenarios, in the order `fedscope
	// presets` lists them.
	Presets() []Preset
	// Knobs are the keys `--set` accepts for sc besides rounds and seed, in
	// the order the help shows them.
	Knobs(sc Scenario) []Knob
	// Validate reports the first problem of sc's configuration (racers
	// included) as an *InputError. Rounds, seed and the generic sweep checks
	// are the engine's.
	Validate(sc Scenario) error
	// Metrics are the per-round metrics of a run of sc, in column order.
	Metrics(sc Scenario) []Metric
	// Racers resolves sc's racers against its configuration.
	Racers(sc Scenario) []Racer
	// DataKey identifies the data Prepare builds for sc: scenarios with the
	// same key share one preparation (and re-runs reuse it); "" disables
	// caching.
	DataKey(sc Scenario) string
	// Prepare generates or loads the data of sc and computes the statistics
	// every racer shares. It checks ctx and reports its progress through
	// report (which may be nil). Bad data files give an *InputError.
	Prepare(ctx context.Context, sc Scenario, report func(Progress)) (any, error)
	// Facts describes sc for the views; data is what Prepare returned, or
	// nil before the data are ready.
	Facts(sc Scenario, data any) Facts
	// Help explains what the run view shows for sc, in a sentence or two.
	Help(sc Scenario) string
}

// Sweeper is implemented by families with sweep presets. A sweep is a grid
// over one knob × trials × racers; its unit of work is one (grid value,
// trial) evaluation, which returns one number per racer and metric.
type Sweeper interface {
	// SweepMetrics are the metrics of a sweep: columns <name>_mean, <name>_std
	// (<name> alone for a Single metric).
	SweepMetrics(sc Scenario) []SweepMetric
	// SweepLabels are the curves' labels, one per row of Evaluate's result.
	SweepLabels(sc Scenario) []string
	// Evaluate runs one point scenario: the swept knob set, Adjust applied,
	// Seed = base seed + trial, no sweep. It must be deterministic in that
	// scenario, safe to call concurrently, and return ctx.Err() promptly
	// when cancelled. It returns out[racer][metric] (or, with SweepStat, rows
	// the family's statistic reads).
	Evaluate(ctx context.Context, sc Scenario) ([][]float64, error)
	// SweepStat, if not nil, aggregates a metric over the trials of one grid
	// point; nil means the mean and sample standard deviation of the
	// per-trial values.
	SweepStat(sc Scenario) StatFunc
	// SweepSummary is the line under the title of a sweep.
	SweepSummary(sc Scenario) string
}

// StatFunc aggregates one racer's metric over the trials done at one grid
// point (cells[trial], nil where not done): its mean, spread and how many
// trials it rests on.
type StatFunc func(cells [][][]float64, racer, metric int) (mean, std float64, n int)

// Progress is how far a data preparation has come: Stage names the work
// ("random features", "tuning σ²"), Done of Total its steps (Total 0 when
// unknown).
type Progress struct {
	Stage       string
	Done, Total int
}

// Preset is a named scenario, one per figure of the papers plus the default
// demonstration.
type Preset struct {
	Name    string
	Summary string // one line for `fedscope presets`
	Build   func() Scenario
}

// Scenario returns a fresh copy of the preset's scenario.
func (p Preset) Scenario() Scenario {
	sc := p.Build()
	sc.Preset = p.Name
	return sc
}

// RacerMenu is implemented by families that suggest racers for the
// algorithm picker beyond those of their presets.
type RacerMenu interface {
	Menu(sc Scenario) []RacerSpec
}

// Storyteller is implemented by families that explain their presets: a
// short story (what is on screen, what to look for and why, citing the
// paper) and the annotations that appear on the charts when they become
// true.
type Storyteller interface {
	Story(sc Scenario) string
	Annotations(sc Scenario) []Annotation
}

// AnnotationKind is the condition of an annotation.
type AnnotationKind int

const (
	// Plateau holds when a racer's metric has changed by less than Tol
	// (relative) over the last Window rounds.
	Plateau AnnotationKind = iota
	// Reaches holds when a racer's metric falls to within Tol (relative)
	// above the level labelled Level (Facts.Levels; "" is the metric's
	// first level): v ≤ (1 + Tol)·level.
	Reaches
	// Diverges holds when a racer stopped with a divergence; the label
	// names its stable step size.
	Diverges
)

// Annotation is a label drawn at a racer's curve on the chart of Metric once
// its condition holds. Text may hold one %s, replaced by the racer's short
// name ("s=5").
type Annotation struct {
	Metric string
	Kind   AnnotationKind
	Tol    float64
	Window int
	Level  string
	Text   string
	// Only, when set, restricts the annotation to racers whose spec starts
	// with one of these prefixes (e.g. "fedavg:s=5", "fedprox").
	Only []string
	// Skip lists racer spec prefixes the annotation never applies to
	// (e.g. "fedavg:s=1", which is gradient descent and never stalls).
	Skip []string
}

// LessonFile is a built-in lesson: the name `fedscope lesson NAME` opens
// and its Markdown source (see experiment/lesson for the format).
type LessonFile struct {
	Name   string
	Source []byte
}

// Teacher is implemented by families with built-in lessons.
type Teacher interface {
	Lessons() []LessonFile
}

// Summarizer is implemented by families that summarise a finished run from
// its whole table, one entry per racer (paper 000: the rounds each racer
// took to come within 5 % of its final error, and the saving against FedAvg
// s=1). Facts cannot hold this: they are computed before the run.
type Summarizer interface {
	Summarize(sc Scenario, t *Table) []RacerSummary
}

// RacerSummary is one racer's end-of-run summary: named numbers and the
// sentence the front ends show.
type RacerSummary struct {
	Label  string
	Values []SummaryValue
	Text   string
	// Brief says the same without the label, for a legend entry: forms
	// from the longest to the shortest, the longest that fits is shown
	// ("within 5 % from round 14 · 4.50× fewer rounds").
	Brief []string
}

// SummaryValue is one named number of a RacerSummary.
type SummaryValue struct {
	Name  string // snake_case key, e.g. rounds_to_5pct
	Value float64
}

// MarshalJSON writes the summary as one JSON-lines record,
// {"record":"summary","algorithm":…,<name>:<value>,…,"text":…}, leaving out
// values that are not finite.
func (s RacerSummary) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	str := func(v string) string { q, _ := json.Marshal(v); return string(q) }
	fmt.Fprintf(&b, `{"record":"summary","algorithm":%s`, str(s.Label))
	for _, v := range s.Values {
		if n := Number(v.Value); n != "" {
			fmt.Fprintf(&b, `,%s:%s`, str(v.Name), n)
		}
	}
	fmt.Fprintf(&b, `,"text":%s}`, str(s.Text))
	return []byte(b.String()), nil
}
