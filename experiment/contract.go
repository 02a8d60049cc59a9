package experiment

import (
	"context"
	"io/fs"
)

// Definition is one paper's family written against its own configuration
// type C (the value a scenario of the family holds in Scenario.Config) and
// the type D of its prepared data (a pointer: Facts gets the zero D, nil,
// before the data are ready). Define turns it into a Family, and is the one
// place where Scenario.Config and the engine's cached data are cast back to
// C and D.
//
// What the engine runs (Compute) is kept apart from what the front ends say
// about it (Present); Sweeps and Lessons are left nil by the families that
// have none.
type Definition[C, D any] struct {
	// Name is the family's short key, e.g. "linear".
	Name string
	// Paper names the paper the family implements, e.g.
	// "000_8dadcc9301cefdf4.txt (docs/papers.md §1)".
	Paper   string
	Compute Computation[C, D]
	Present Presentation[C, D]
	Sweeps  Sweeps[C]
	// Lessons holds the family's built-in lessons, Markdown files of steps.
	Lessons fs.FS
	// Reproduce declares the paper's claims, the experiments that measure
	// them and its figures, for `fedscope reproduce`; nil for none.
	Reproduce *Reproduction
}

// Computation is what the engine needs from a family: its presets, its
// knobs and their checks, its racers, its data, and the memory they take.
// Every method gets the scenario and its configuration c.
type Computation[C, D any] interface {
	// Presets are the family's named scenarios, in the order `fedscope
	// presets` lists them.
	Presets() []Preset
	// Knobs are the keys `--set` accepts besides rounds and seed, in the
	// order the help shows them.
	Knobs(sc Scenario, c C) []Knob
	// Validate reports the first problem of the configuration (racers
	// included) as an *InputError. Rounds, seed and the generic sweep checks
	// are the engine's.
	Validate(sc Scenario, c C) error
	// Metrics are the per-round metrics of a run, in column order.
	Metrics(sc Scenario, c C) []Metric
	// Racers resolves the scenario's racers against its configuration.
	Racers(sc Scenario, c C) []RacerOf[D]
	// DataKey identifies the data Prepare builds: scenarios with the same
	// key share one preparation (and re-runs reuse it); "" disables caching.
	DataKey(sc Scenario, c C) string
	// Prepare generates or loads the data and computes the statistics every
	// racer shares. It checks ctx and reports its progress through report
	// (which may be nil). Bad data files give an *InputError.
	Prepare(ctx context.Context, sc Scenario, c C, report func(Progress)) (D, error)
	// Memory estimates, before anything is allocated, the bytes the
	// preparation and a run need, and names the knob (or data file) that
	// contributes most. Engine.Prepare and RunSweep (per worker) refuse a
	// scenario whose estimate exceeds the memory available, naming the knob.
	Memory(sc Scenario, c C) (bytes uint64, knob string)
	// InputFiles are the files a run reads (nil for none), so that the
	// command line can refuse an --out that would overwrite one of them.
	InputFiles(sc Scenario, c C) []string
}

// Presentation is what the front ends say about a family's scenarios:
// sentences, labels and looks, none of which changes a number.
type Presentation[C, D any] interface {
	// Facts describe the scenario for the views; data is what Prepare
	// returned, or the zero D before the data are ready.
	Facts(sc Scenario, c C, data D) Facts
	// Help explains what the run view shows, in a sentence or two.
	Help(sc Scenario, c C) string
	// Story is a short story of the scenario: what is on screen, what to
	// look for and why, citing the paper.
	Story(sc Scenario, c C) string
	// Caption says in one or two sentences (at most 150 characters) what to
	// look at, for screens too small for the story.
	Caption(sc Scenario, c C) string
	// Annotations label the charts when their conditions become true.
	Annotations(sc Scenario, c C) []Annotation
	// Summarize summarises a finished run from its whole table, one entry
	// per racer; nil when the family has no end-of-run summary. Facts cannot
	// hold this: they are computed before the run.
	Summarize(sc Scenario, c C, t *Table) []RacerSummary
	// Menu lists the racers the algorithm picker suggests beyond the ones
	// the scenario races; nil suggests the racers of the presets.
	Menu(sc Scenario, c C) []RacerSpec
	// Looks fixes the look slot (glyph and colour) of well-known racers by
	// spec, e.g. "fedavg:s=1" → 0, so that a preset's racers look the same
	// on every screen; a racer not listed takes a look from its spec's hash.
	Looks() map[string]int
}

// Sweeps is how a family evaluates its sweep presets, each a grid over one
// knob × trials × racers.
type Sweeps[C any] interface {
	// Metrics are the metrics of a sweep: columns <name>_mean, <name>_std
	// (<name> alone for a Single metric).
	Metrics(sc Scenario, c C) []SweepMetric
	// Labels are the curves' labels, one per row of Evaluate's result.
	Labels(sc Scenario, c C) []string
	// Evaluate runs one point scenario: the swept knob set, Adjust applied,
	// Seed = base seed + trial, no sweep. It must be deterministic in that
	// scenario, safe to call concurrently, and return ctx.Err() promptly
	// when cancelled. It returns out[racer][metric] (or, with Stat, rows
	// the family's statistic reads).
	Evaluate(ctx context.Context, sc Scenario, c C) ([][]float64, error)
	// Stat, if not nil, aggregates a metric over the trials of one grid
	// point; nil means the mean and sample standard deviation of the
	// per-trial values.
	Stat(sc Scenario, c C) StatFunc
	// Summary is the line under the title of a sweep.
	Summary(sc Scenario, c C) string
}
