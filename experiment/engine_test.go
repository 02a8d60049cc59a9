package experiment_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/linear"
)

// linearCatalog is a catalog of the one family these tests race on.
var linearCatalog = experiment.NewCatalog(linear.Family)

// scenario returns a preset of the linear family with the assignments
// applied, as `--set` would apply them.
func scenario(t testing.TB, preset string, sets ...string) experiment.Scenario {
	t.Helper()
	sc, err := linearCatalog.Scenario(preset, sets...)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// smallScenario is the paradox shrunk so that a run takes milliseconds, even
// under -race, keeping its four racers and their dynamics.
func smallScenario(t testing.TB, sets ...string) experiment.Scenario {
	t.Helper()
	return scenario(t, "paradox", append([]string{"clients=6", "samples=80", "dim=12", "rounds=30"}, sets...)...)
}

// tracked is the linear family with every racer's Run counted while it
// runs, so that a test can see whether a racer outlives the race.
type tracked struct {
	experiment.Family
	live *atomic.Int32
}

func (f tracked) Racers(sc experiment.Scenario) []experiment.Racer {
	rs := f.Family.Racers(sc)
	for i := range rs {
		run := rs[i].Run
		rs[i].Run = func(ctx context.Context, data any, rounds int, emit func(experiment.Round)) error {
			f.live.Add(1)
			defer f.live.Add(-1)
			return run(ctx, data, rounds, emit)
		}
	}
	return rs
}

// TestCancelAfterRound cancels the context from inside emit after round k
// and checks that exactly k points arrive, that Run reports
// context.Canceled, and that no racer or goroutine outlives the race
// (docs/codebase.md §6).
func TestCancelAfterRound(t *testing.T) {
	for _, test := range []struct {
		name   string
		racers string // the algorithms= value; "" keeps the paradox's four
		k      int
	}{
		{"fedavg s=1", "fedavg:s=1", 1},
		{"fedavg s=5", "fedavg:s=5", 4},
		{"fedprox", "fedprox", 7},
		{"fedavg minibatch", "fedavg:s=2:b=16", 3},
		// With several racers, no point may be emitted after the cancel,
		// whichever racer it comes from.
		{"four racers", "", 5},
	} {
		t.Run(test.name, func(t *testing.T) {
			var sets []string
			if test.racers != "" {
				sets = append(sets, "algorithms="+test.racers)
			}
			sc := smallScenario(t, sets...)
			var live atomic.Int32
			sc.Family = tracked{Family: linear.Family, live: &live}
			eng := experiment.NewEngine()
			if _, err := eng.Prepare(context.Background(), sc, nil); err != nil { // keep the cache's work out of the count
				t.Fatal(err)
			}
			before := runtime.NumGoroutine()

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var got []experiment.Point
			res, err := eng.Run(ctx, sc, experiment.Observer{Round: func(p experiment.Point) {
				got = append(got, p)
				if len(got) == test.k {
					cancel()
				}
			}})
			if n := live.Load(); n != 0 {
				t.Errorf("%d racers still running after Run returned", n)
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Run returned %v, want context.Canceled", err)
			}
			if len(got) != test.k {
				t.Errorf("got %d points, want exactly %d", len(got), test.k)
			}
			if test.racers != "" {
				// Rows start at round 0, θ_0 = 0 (issue 11).
				for i, p := range got {
					if p.Racer != 0 || p.Round.Index != i {
						t.Errorf("point %d is racer %d round %d, want racer 0 round %d", i, p.Racer, p.Round.Index, i)
					}
				}
			}
			if f := res.Failed(); len(f) != 0 {
				t.Errorf("a cancelled race reports failures: %v", f)
			}
			checkNoLeak(t, before)
		})
	}
}

// checkNoLeak fails if more goroutines exist than before. A goroutine that
// has signalled its end may still be returning, so the check yields until
// the count drops; the bound is a number of yields, not a time, and only a
// goroutine that never ends exhausts it.
func checkNoLeak(t *testing.T, before int) {
	t.Helper()
	for i := 0; i < 10_000_000 && runtime.NumGoroutine() > before; i++ {
		runtime.Gosched()
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines before the race, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
	}
}

// TestCancelledBeforeStart checks that an already-cancelled context emits
// nothing.
func TestCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n := 0
	_, err := experiment.NewEngine().Run(ctx, smallScenario(t), experiment.Observer{Round: func(experiment.Point) { n++ }})
	if !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("Run on a cancelled context: err %v, %d points; want context.Canceled, 0", err, n)
	}
}

// gated is the linear family whose first preparation blocks until its
// context is cancelled (a preparation the explorer abandons).
type gated struct {
	experiment.Family
	calls   *atomic.Int32
	started chan struct{}
}

func (f gated) Prepare(ctx context.Context, sc experiment.Scenario, report func(experiment.Progress)) (any, error) {
	if f.calls.Add(1) == 1 {
		close(f.started)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return f.Family.Prepare(ctx, sc, report)
}

// TestCancelledPreparationDoesNotFailOthers: a caller waiting on the same
// data as one that is cancelled gets the data (built again), not the
// other's context.Canceled.
func TestCancelledPreparationDoesNotFailOthers(t *testing.T) {
	sc := smallScenario(t)
	sc.Family = gated{Family: linear.Family, calls: new(atomic.Int32), started: make(chan struct{})}
	eng := experiment.NewEngine()
	first, cancel := context.WithCancel(context.Background())
	firstErr := make(chan error, 1)
	go func() { _, err := eng.Prepare(first, sc, nil); firstErr <- err }()
	<-sc.Family.(gated).started
	second := make(chan error, 1)
	go func() { _, err := eng.Prepare(context.Background(), sc, nil); second <- err }()
	for range 1000 { // let the second caller reach the wait on the first's build
		runtime.Gosched()
	}
	cancel()
	if err := <-firstErr; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled caller got %v, want context.Canceled", err)
	}
	if err := <-second; err != nil {
		t.Fatalf("the other caller got %v, want the data", err)
	}
}
