package linear

import (
	"testing"

	"github.com/fedscope/fedscope/experiment"
)

// catalog holds the one family of these tests.
var catalog = experiment.NewCatalog(Family)

// smallSweeps shrink each sweep preset so that it takes milliseconds, even
// under -race, keeping its grid, racers and families.
var smallSweeps = map[string][]string{
	"fedgain-model":     {"clients=6", "dim=12", "samples=40", "scarce_clients=3", "scarce_samples=6", "rounds=30"},
	"fedgain-covariate": {"clients=2", "dim=100", "samples=101", "scarce_clients=1", "scarce_samples=5"},
	"polynomial":        nil,
}

// preset returns a preset with assignments applied as `--set` applies them.
func preset(t testing.TB, name string, sets ...string) experiment.Scenario {
	t.Helper()
	sc, err := catalog.Scenario(name, sets...)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// sweepScenario is a sweep preset shrunk by smallSweeps.
func sweepScenario(t testing.TB, name string, extra ...string) experiment.Scenario {
	t.Helper()
	return preset(t, name, append(append([]string(nil), smallSweeps[name]...), extra...)...)
}

// fedavg is the racer spec of FedAvg pinned to s local steps.
func fedavg(s int) experiment.RacerSpec {
	return experiment.RacerSpec{Kind: KindFedAvg, Opts: []experiment.RacerOpt{{Key: "s", Value: float64(s)}}}
}

// cfg reads a scenario's configuration back.
func cfg(sc experiment.Scenario) Config { return sc.Config.(Config) }
