package experiment_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/linear"
)

// smallFedGainModel is the fedgain-model sweep shrunk so that a sweep takes
// milliseconds, even under -race, keeping its grid and racers.
func smallFedGainModel(t testing.TB) experiment.Scenario {
	return scenario(t, "fedgain-model", "clients=6", "dim=12", "samples=40", "scarce_clients=3", "scarce_samples=6", "rounds=30")
}

// TestSweepCompletionOrder: the table's output does not depend on the order
// in which trials arrive. Real trial results are added in several random
// orders, and the output must match byte for byte.
func TestSweepCompletionOrder(t *testing.T) {
	sc := smallFedGainModel(t)
	sc.Trials = 4
	var results []experiment.TrialResult
	if err := experiment.RunSweep(context.Background(), sc, func(r experiment.TrialResult) { results = append(results, r) }); err != nil {
		t.Fatal(err)
	}
	if len(results) != len(sc.Sweep.Grid)*sc.Trials {
		t.Fatalf("%d results, want %d", len(results), len(sc.Sweep.Grid)*sc.Trials)
	}
	var first string
	rng := rand.New(rand.NewPCG(1, 1))
	for k := range 6 {
		rng.Shuffle(len(results), func(i, j int) { results[i], results[j] = results[j], results[i] })
		table, err := experiment.NewSweepTable(sc)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			table.Add(r)
		}
		var b bytes.Buffer
		if err := table.Write(&b, experiment.CSV); err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			first = b.String()
		} else if b.String() != first {
			t.Fatalf("order %d: output differs", k)
		}
	}
}

// startCounter is the linear family with the evaluations that start after a
// sweep was cancelled counted, and their errors kept.
type startCounter struct {
	experiment.Family
	s *startState
}

func (f startCounter) Sweeps() experiment.Sweeper { return startCounting{f.Family.Sweeps(), f.s} }

// startCounting is the linear sweeps, counting as startCounter says.
type startCounting struct {
	experiment.Sweeper
	s *startState
}

type startState struct {
	mu        sync.Mutex
	cancelled bool
	late      []error // what each evaluation started after the cancel returned
}

func (f startCounting) Evaluate(ctx context.Context, sc experiment.Scenario) ([][]float64, error) {
	f.s.mu.Lock()
	late := f.s.cancelled
	f.s.mu.Unlock()
	v, err := f.Sweeper.Evaluate(ctx, sc)
	if late {
		f.s.mu.Lock()
		f.s.late = append(f.s.late, err)
		f.s.mu.Unlock()
	}
	return v, err
}

// TestSweepCancel: RunSweep returns context.Canceled after a cancellation
// from inside the stream and emits nothing afterwards. It also returns
// promptly, which is checked without a clock: no worker takes new work once
// the sweep is cancelled — only a worker that had already taken its task
// may start it (at most one per other worker), and that evaluation sees the
// cancellation and returns context.Canceled instead of a result.
func TestSweepCancel(t *testing.T) {
	sc := scenario(t, "fedgain-model")
	st := &startState{}
	sc.Family = startCounter{Family: linear.Family, s: st}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var after int
	err := experiment.RunSweep(ctx, sc, func(experiment.TrialResult) {
		st.mu.Lock()
		if st.cancelled {
			after++
		}
		cancel()
		st.cancelled = true
		st.mu.Unlock()
	})
	if !errors.Is(err, context.Canceled) || after != 0 {
		t.Errorf("err %v, %d results after cancel", err, after)
	}
	if workers := runtime.GOMAXPROCS(0); len(st.late) > workers-1 {
		t.Errorf("%d evaluations started after the cancel with %d workers, want at most %d", len(st.late), workers, workers-1)
	}
	for i, err := range st.late {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("evaluation %d started after the cancel returned %v, want context.Canceled", i, err)
		}
	}
}

// TestSweepStatsAgainstGonum: the polynomial sweep reports gonum's
// stat.MeanStdDev of the per-trial values for its per-trial metrics (its
// 1/MSE is 1/(mean MSE), tested in experiment/linear), read from the raw row
// at the metric's column.
func TestSweepStatsAgainstGonum(t *testing.T) {
	sc := scenario(t, "polynomial")
	sc.Trials = 5
	table, err := experiment.NewSweepTable(sc)
	if err != nil {
		t.Fatal(err)
	}
	var results []experiment.TrialResult
	if err := experiment.RunSweep(context.Background(), sc, func(r experiment.TrialResult) { results = append(results, r); table.Add(r) }); err != nil {
		t.Fatal(err)
	}
	for m, col := range map[int]int{0: 0, 2: 1, 3: 2} { // mse, inv_mse_trial, total_samples
		var xs []float64
		for _, r := range results {
			if r.Point == 3 {
				xs = append(xs, r.Values[2][col])
			}
		}
		wantMean, wantStd := stat.MeanStdDev(xs, nil)
		mean, std, n := table.Stat(3, 2, m)
		if n != sc.Trials || math.Abs(mean-wantMean) > 1e-12*math.Abs(wantMean) || math.Abs(std-wantStd) > 1e-10*wantStd+1e-300 {
			t.Errorf("metric %d: Stat = (%v, %v, %d), gonum (%v, %v, %d)", m, mean, std, n, wantMean, wantStd, sc.Trials)
		}
	}
}
