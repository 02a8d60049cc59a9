package experiment

import (
	"context"
	"fmt"
	"io/fs"
)

// Define makes a Family of a definition. It panics when a required part
// is missing: a family that cannot work is a programming error.
func Define[C, D any](def Definition[C, D]) Family {
	if def.Name == "" || def.Compute == nil || def.Present == nil {
		panic("experiment: Define needs a Name, a Compute and a Present part")
	}
	f := &defined[C, D]{def: def}
	if def.Sweeps != nil {
		f.sweeps = sweepsOf[C]{def.Sweeps}
	}
	return f
}

// configOf returns the configuration of sc as the family's type C: the one
// cast from Scenario.Config, used by Define's family and the typed knob
// helpers.
func configOf[C any](sc Scenario) C {
	c, ok := sc.Config.(C)
	if !ok {
		panic(fmt.Sprintf("experiment: the scenario holds a %T configuration, want %T", sc.Config, c))
	}
	return c
}

// dataOf returns prepared data as the family's type D.
func dataOf[D any](family string, data any) D {
	d, ok := data.(D)
	if !ok {
		panic(fmt.Sprintf("experiment: family %s was handed %T data, want %T", family, data, d))
	}
	return d
}

// defined is the Family Define makes: every method casts once and asks the
// typed definition.
type defined[C, D any] struct {
	def    Definition[C, D]
	sweeps Sweeper
}

func (f *defined[C, D]) Name() string      { return f.def.Name }
func (f *defined[C, D]) Paper() string     { return f.def.Paper }
func (f *defined[C, D]) Presets() []Preset { return f.def.Compute.Presets() }
func (f *defined[C, D]) Sweeps() Sweeper   { return f.sweeps }
func (f *defined[C, D]) Lessons() fs.FS    { return f.def.Lessons }
func (f *defined[C, D]) Reproduction() *Reproduction {
	return f.def.Reproduce
}
func (f *defined[C, D]) Looks() map[string]int {
	return f.def.Present.Looks()
}

func (f *defined[C, D]) Knobs(sc Scenario) []Knob {
	return f.def.Compute.Knobs(sc, configOf[C](sc))
}

func (f *defined[C, D]) Validate(sc Scenario) error {
	return f.def.Compute.Validate(sc, configOf[C](sc))
}

func (f *defined[C, D]) Metrics(sc Scenario) []Metric {
	return f.def.Compute.Metrics(sc, configOf[C](sc))
}

// Racers hands each racer its data as D.
func (f *defined[C, D]) Racers(sc Scenario) []Racer {
	typed := f.def.Compute.Racers(sc, configOf[C](sc))
	out := make([]Racer, len(typed))
	for i, r := range typed {
		out[i] = Racer{Label: r.Label, Spec: r.Spec,
			Run: func(ctx context.Context, data any, rounds int, emit func(Round)) error {
				return r.Run(ctx, dataOf[D](f.def.Name, data), rounds, emit)
			}}
	}
	return out
}

func (f *defined[C, D]) DataKey(sc Scenario) string {
	return f.def.Compute.DataKey(sc, configOf[C](sc))
}

func (f *defined[C, D]) Prepare(ctx context.Context, sc Scenario, report func(Progress)) (any, error) {
	d, err := f.def.Compute.Prepare(ctx, sc, configOf[C](sc), report)
	if err != nil {
		return nil, err // not a typed nil inside a non-nil any
	}
	return d, nil
}

func (f *defined[C, D]) Memory(sc Scenario) (uint64, string) {
	return f.def.Compute.Memory(sc, configOf[C](sc))
}

func (f *defined[C, D]) InputFiles(sc Scenario) []string {
	return f.def.Compute.InputFiles(sc, configOf[C](sc))
}

func (f *defined[C, D]) Facts(sc Scenario, data any) Facts {
	var d D
	if data != nil {
		d = dataOf[D](f.def.Name, data)
	}
	return f.def.Present.Facts(sc, configOf[C](sc), d)
}

func (f *defined[C, D]) Help(sc Scenario) string {
	return f.def.Present.Help(sc, configOf[C](sc))
}

func (f *defined[C, D]) Story(sc Scenario) string {
	return f.def.Present.Story(sc, configOf[C](sc))
}

func (f *defined[C, D]) Caption(sc Scenario) string {
	return f.def.Present.Caption(sc, configOf[C](sc))
}

func (f *defined[C, D]) Annotations(sc Scenario) []Annotation {
	return f.def.Present.Annotations(sc, configOf[C](sc))
}

func (f *defined[C, D]) Summarize(sc Scenario, t *Table) []RacerSummary {
	return f.def.Present.Summarize(sc, configOf[C](sc), t)
}

// Menu falls back on the racers of the family's presets.
func (f *defined[C, D]) Menu(sc Scenario) []RacerSpec {
	if m := f.def.Present.Menu(sc, configOf[C](sc)); m != nil {
		return m
	}
	var out []RacerSpec
	for _, p := range f.Presets() {
		for _, r := range p.Scenario().Racers() {
			out = append(out, r.Spec)
		}
	}
	return out
}

// sweepsOf is the Sweeper of a family's typed Sweeps.
type sweepsOf[C any] struct{ s Sweeps[C] }

func (w sweepsOf[C]) SweepMetrics(sc Scenario) []SweepMetric {
	return w.s.Metrics(sc, configOf[C](sc))
}

func (w sweepsOf[C]) SweepLabels(sc Scenario) []string { return w.s.Labels(sc, configOf[C](sc)) }

func (w sweepsOf[C]) Evaluate(ctx context.Context, sc Scenario) ([][]float64, error) {
	return w.s.Evaluate(ctx, sc, configOf[C](sc))
}

// canonical is the family's canonical form of a sweep for its shards
// (Canonicalizer, shard.go), or sc itself.
func (w sweepsOf[C]) canonical(sc Scenario) Scenario {
	if c, ok := w.s.(Canonicalizer[C]); ok {
		sc.Config = c.Canonical(sc, configOf[C](sc))
	}
	return sc
}

func (w sweepsOf[C]) SweepStat(sc Scenario) StatFunc  { return w.s.Stat(sc, configOf[C](sc)) }
func (w sweepsOf[C]) SweepSummary(sc Scenario) string { return w.s.Summary(sc, configOf[C](sc)) }
