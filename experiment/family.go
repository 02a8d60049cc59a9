// Package experiment is the engine of fedscope: complete, reproducible
// scenarios, the family contract every paper fulfils, racing a scenario's
// algorithms side by side on data prepared once, sweeps with trials, and
// CSV / JSON-lines tables. It knows no paper: each paper is a family in its
// own subpackage (experiment/linear, experiment/lowrank, experiment/bound,
// experiment/newton, experiment/mixture), listed in one registry
// (experiment/registry), and nothing here switches on which family a
// scenario belongs to.
//
// A new paper is one package that writes a Definition against its own
// configuration and data types and passes it to Define, plus one line in
// the registry.
package experiment

import (
	"context"
	"io/fs"
)

// Family is one paper's family as the engine, the command line and the
// views see it: scenarios and prepared data pass untyped. Families are built
// by Define from a typed Definition, which says what each method means; the
// methods fall into what the engine computes and what the front ends show.
type Family interface {
	Name() string
	Paper() string
	Presets() []Preset

	// Computation.
	Knobs(sc Scenario) []Knob
	Validate(sc Scenario) error
	Metrics(sc Scenario) []Metric
	Racers(sc Scenario) []Racer
	DataKey(sc Scenario) string
	Prepare(ctx context.Context, sc Scenario, report func(Progress)) (any, error)
	Memory(sc Scenario) (bytes uint64, knob string)
	InputFiles(sc Scenario) []string
	// Sweeps is nil for a family without sweep presets.
	Sweeps() Sweeper

	// Presentation.
	Facts(sc Scenario, data any) Facts
	Help(sc Scenario) string
	Story(sc Scenario) string
	Caption(sc Scenario) string
	Annotations(sc Scenario) []Annotation
	Summarize(sc Scenario, t *Table) []RacerSummary
	// Menu is never empty for a family with racers: the family's menu, or
	// the racers of its presets.
	Menu(sc Scenario) []RacerSpec
	Looks() map[string]int
	// Lessons is nil for a family without built-in lessons.
	Lessons() fs.FS
	// Reproduction is nil for a family that declares no claims.
	Reproduction() *Reproduction
}

// Sweeper evaluates the sweep presets of a family (Family.Sweeps). A sweep
// is a grid over one knob × trials × racers; its unit of work is one (grid
// value, trial) evaluation, which returns one number per racer and metric.
// Sweeps says what each method means.
type Sweeper interface {
	SweepMetrics(sc Scenario) []SweepMetric
	SweepLabels(sc Scenario) []string
	Evaluate(ctx context.Context, sc Scenario) ([][]float64, error)
	SweepStat(sc Scenario) StatFunc
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
