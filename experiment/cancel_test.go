package experiment

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

// smallScenario is the reduced paradox as a Scenario value.
func smallScenario(t *testing.T) Scenario {
	t.Helper()
	p, err := LookupPreset("paradox")
	if err != nil {
		t.Fatal(err)
	}
	sc := p.Scenario()
	if err := sc.SetAll([]string{"clients=6", "samples=80", "dim=12", "rounds=30"}); err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestCancelAfterRound cancels the context from inside emit after round k
// and checks that exactly k points arrive, that Run reports
// context.Canceled, and that no goroutine outlives the race (STYLE.md §5).
func TestCancelAfterRound(t *testing.T) {
	for _, test := range []struct {
		name   string
		racers []RacerSpec
		k      int
	}{
		{"fedavg s=1", []RacerSpec{{Kind: KindFedAvg, LocalSteps: 1, Batch: -1}}, 1},
		{"fedavg s=5", []RacerSpec{{Kind: KindFedAvg, LocalSteps: 5, Batch: -1}}, 4},
		{"fedprox", []RacerSpec{{Kind: KindFedProx, Batch: -1}}, 7},
		{"fedavg minibatch", []RacerSpec{{Kind: KindFedAvg, LocalSteps: 2, Batch: 16}}, 3},
		// With several racers, no point may be emitted after the cancel,
		// whichever racer it comes from.
		{"four racers", nil, 5},
	} {
		t.Run(test.name, func(t *testing.T) {
			sc := smallScenario(t)
			if test.racers != nil {
				sc.Racers = test.racers
			}
			if _, err := Prepare(sc); err != nil { // keep the cache's work out of the count
				t.Fatal(err)
			}
			before := runtime.NumGoroutine()

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var got []Point
			res, err := Run(ctx, sc, func(p Point) {
				got = append(got, p)
				if len(got) == test.k {
					cancel()
				}
			})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Run returned %v, want context.Canceled", err)
			}
			if len(got) != test.k {
				t.Errorf("got %d points, want exactly %d", len(got), test.k)
			}
			if test.racers != nil {
				for i, p := range got {
					if p.Racer != 0 || p.Round.Index != i+1 {
						t.Errorf("point %d is racer %d round %d, want racer 0 round %d", i, p.Racer, p.Round.Index, i+1)
					}
				}
			}
			if f := res.Failed(); len(f) != 0 {
				t.Errorf("a cancelled race reports failures: %v", f)
			}

			deadline := time.Now().Add(2 * time.Second)
			for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > before {
				buf := make([]byte, 1<<16)
				t.Errorf("%d goroutines before the race, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
			}
		})
	}
}

// TestCancelledBeforeStart checks that an already-cancelled context emits
// nothing.
func TestCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n := 0
	_, err := Run(ctx, smallScenario(t), func(Point) { n++ })
	if !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("Run on a cancelled context: err %v, %d points; want context.Canceled, 0", err, n)
	}
}
