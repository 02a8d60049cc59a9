package experiment_test

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/fedscope/fedscope/experiment"
)

// toyConfig and toyData are the types of toy, a family that counts to its
// level: what a new family writes, with nothing of fedscope's papers.
type toyConfig struct {
	Level  float64
	Racers []experiment.RacerSpec
}

type toyData struct{ level float64 }

var toyKinds = []experiment.RacerKind{{Name: "count", Options: []experiment.RacerOption{{Key: "step", Min: 1, Max: 10}}}}

// toy is the family under test.
var toy = experiment.Define(experiment.Definition[toyConfig, *toyData]{Name: "toy", Compute: toyCompute{}, Present: toyPresent{}})

type (
	toyCompute struct{}
	toyPresent struct{}
)

func (toyCompute) Presets() []experiment.Preset {
	return []experiment.Preset{{Name: "toy", Build: func() experiment.Scenario {
		return experiment.Scenario{Family: toy, Rounds: 3, Seed: 1,
			Config: toyConfig{Level: 2, Racers: []experiment.RacerSpec{{Kind: "count"}, {Kind: "count", Opts: []experiment.RacerOpt{{Key: "step", Value: 2}}}}}}
	}}}
}

func (toyCompute) Knobs(experiment.Scenario, toyConfig) []experiment.Knob {
	return []experiment.Knob{
		experiment.FloatKnob("level", "the level counted to", false, func(c *toyConfig) *float64 { return &c.Level }).
			WithLive(experiment.Live{Down: []string{"["}, Up: []string{"]"}, Name: "level",
				Step: experiment.LadderStep([]float64{1, 2, 4}, func(c *toyConfig) *float64 { return &c.Level })}),
		experiment.RacersKnob(toyKinds, func(c *toyConfig) *[]experiment.RacerSpec { return &c.Racers }),
	}
}

func (toyCompute) Validate(_ experiment.Scenario, c toyConfig) error {
	return experiment.CheckRacers(c.Racers, toyKinds)
}

func (toyCompute) Metrics(experiment.Scenario, toyConfig) []experiment.Metric {
	return []experiment.Metric{{Name: "gap"}}
}

func (toyCompute) Racers(_ experiment.Scenario, c toyConfig) []experiment.RacerOf[*toyData] {
	var out []experiment.RacerOf[*toyData]
	for _, spec := range c.Racers {
		step, ok := spec.Opt("step")
		if !ok {
			step = 1
		}
		out = append(out, experiment.RacerOf[*toyData]{Label: spec.String(), Spec: spec,
			Run: func(ctx context.Context, d *toyData, rounds int, emit func(experiment.Round)) error {
				for t := 1; t <= rounds; t++ {
					emit(experiment.Round{Index: t, Values: []float64{math.Max(0, d.level-step*float64(t))}})
				}
				return nil
			}})
	}
	return out
}

func (toyCompute) DataKey(experiment.Scenario, toyConfig) string { return "" }

func (toyCompute) Prepare(_ context.Context, _ experiment.Scenario, c toyConfig, _ func(experiment.Progress)) (*toyData, error) {
	if c.Level > 100 {
		return nil, experiment.Errorf("level=%v: too high", c.Level)
	}
	return &toyData{level: c.Level}, nil
}

func (toyCompute) Memory(experiment.Scenario, toyConfig) (uint64, string) { return 8, "level" }
func (toyCompute) InputFiles(experiment.Scenario, toyConfig) []string     { return nil }

func (toyPresent) Facts(_ experiment.Scenario, _ toyConfig, d *toyData) experiment.Facts {
	if d == nil {
		return experiment.Facts{Summary: "not ready"}
	}
	return experiment.Facts{Summary: "ready"}
}

func (toyPresent) Help(experiment.Scenario, toyConfig) string    { return "the gap to the level" }
func (toyPresent) Story(experiment.Scenario, toyConfig) string   { return "Counting up." }
func (toyPresent) Caption(experiment.Scenario, toyConfig) string { return "Counting up." }
func (toyPresent) Annotations(experiment.Scenario, toyConfig) []experiment.Annotation {
	return nil
}
func (toyPresent) Summarize(experiment.Scenario, toyConfig, *experiment.Table) []experiment.RacerSummary {
	return nil
}
func (toyPresent) Menu(experiment.Scenario, toyConfig) []experiment.RacerSpec { return nil }
func (toyPresent) Looks() map[string]int                                      { return map[string]int{"count": 0} }

// TestDefine races the toy family through the engine: the typed racers get
// the typed data, Facts gets nil before the data are ready, a failed
// preparation is an untyped nil, the menu falls back on the presets'
// racers, and a family without sweeps has no Sweeper.
func TestDefine(t *testing.T) {
	cat := experiment.NewCatalog(toy)
	sc, err := cat.Scenario("toy", "level=4")
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Summary(); got != "not ready" {
		t.Errorf("summary before the data = %q, want the facts of a nil *toyData", got)
	}
	var last [2]float64
	res, err := experiment.NewEngine().Run(context.Background(), sc, experiment.Observer{Round: func(p experiment.Point) {
		last[p.Racer] = p.Round.Values[0]
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Facts.Summary != "ready" || last != [2]float64{1, 0} {
		t.Errorf("facts %q, last gaps %v; want ready and [1 0]", res.Facts.Summary, last)
	}
	if toy.Sweeps() != nil {
		t.Error("a family without sweeps has a Sweeper")
	}
	if m := toy.Menu(sc); len(m) != 2 || m[1].String() != "count:step=2" {
		t.Errorf("Menu = %v, want the preset's two racers", m)
	}
	if up, err := sc.Knobs()[0].Live.Step(sc, true); err != nil || up.Get("level") != "4" {
		t.Errorf("level 4 one rung up: %v, %v; want 4, the top of the ladder", up.Get("level"), err)
	}
	if down, _ := sc.Knobs()[0].Live.Step(sc, false); down.Get("level") != "2" || sc.Get("level") != "4" {
		t.Errorf("level 4 one rung down: %s (the original %s); want 2 (4)", down.Get("level"), sc.Get("level"))
	}
	bad, _ := cat.Scenario("toy")
	_ = bad.Set("level", "200")
	data, err := toy.Prepare(context.Background(), bad, nil)
	var ie *experiment.InputError
	if data != nil || !errors.As(err, &ie) {
		t.Errorf("a failed Prepare returned %#v, %v; want nil and the InputError", data, err)
	}
}

// TestDefineRefusesAMissingPart: a definition without its computation is a
// programming error, caught when the family is defined.
func TestDefineRefusesAMissingPart(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Define without a Compute part did not panic")
		}
	}()
	experiment.Define(experiment.Definition[toyConfig, *toyData]{Name: "broken", Present: toyPresent{}})
}
