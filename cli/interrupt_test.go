package cli

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/linear"
)

// interrupter is the linear family with a Ctrl-C built in: it cancels the
// command's context from inside the stream, after a racer has emitted its
// k-th round or once k sweep evaluations have finished, so that a test
// interrupts a run at a known point without a timer.
type interrupter struct {
	experiment.Family
	s *interruptState
}

type interruptState struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	k, n   int
}

// tick counts one event and cancels at the k-th.
func (s *interruptState) tick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n++; s.n == s.k {
		s.cancel()
	}
}

// Presets are the linear presets, opening scenarios of the interrupter.
func (f interrupter) Presets() []experiment.Preset {
	ps := f.Family.Presets()
	for i := range ps {
		build := ps[i].Build
		ps[i].Build = func() experiment.Scenario {
			sc := build()
			sc.Family = f
			return sc
		}
	}
	return ps
}

// Racers counts the rounds each racer has handed to the engine.
func (f interrupter) Racers(sc experiment.Scenario) []experiment.Racer {
	rs := f.Family.Racers(sc)
	for i := range rs {
		run := rs[i].Run
		rs[i].Run = func(ctx context.Context, data any, rounds int, emit func(experiment.Round)) error {
			return run(ctx, data, rounds, func(r experiment.Round) {
				emit(r)
				f.s.tick()
			})
		}
	}
	return rs
}

// Sweeps counts finished evaluations.
func (f interrupter) Sweeps() experiment.Sweeper { return interruptSweeps{f.Family.Sweeps(), f.s} }

type interruptSweeps struct {
	experiment.Sweeper
	s *interruptState
}

// Evaluate counts finished evaluations; the k-th cancels before it returns,
// so its own result is dropped.
func (f interruptSweeps) Evaluate(ctx context.Context, sc experiment.Scenario) ([][]float64, error) {
	v, err := f.Sweeper.Evaluate(ctx, sc)
	if err == nil {
		f.s.tick()
	}
	return v, err
}

// interrupted runs a headless command on the interrupter's catalog,
// cancelling its context at the k-th event.
func interrupted(t *testing.T, k int, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fam := interrupter{Family: linear.Family, s: &interruptState{cancel: cancel, k: k}}
	return runCmd(ctx, newApp(experiment.NewCatalog(fam)), args...)
}

// TestInterruptedRunKeepsRows: a headless run cancelled midway (Ctrl-C,
// here from inside the stream after round k) still writes every round
// computed so far, exactly rounds 1..k, and exits with status 130.
func TestInterruptedRunKeepsConsecutiveRounds(t *testing.T) {
	const k = 7
	out, errs, code := interrupted(t, k, "run", "--set", "rounds=100000", "--set", "clients=5", "--set", "dim=100",
		"--set", "samples=200", "--set", "algorithms=fedavg:s=3")
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d; stderr %q", code, ExitInterrupted, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "algorithm,round,") {
		t.Fatalf("no rows written: %q", out)
	}
	if len(lines)-1 != k {
		t.Errorf("%d rows, want the %d computed before the interrupt", len(lines)-1, k)
	}
	// Rows are consecutive rounds 0..k−1 of the single racer.
	for i, l := range lines[1:] {
		if f := strings.Split(l, ","); f[1] != strconv.Itoa(i) {
			t.Fatalf("row %d has round %s", i+1, f[1])
		}
	}
	if !strings.Contains(errs, "interrupted") || !strings.Contains(errs, strconv.Itoa(k)+" rows") || strings.Count(errs, "\n") != 1 {
		t.Errorf("stderr %q, want one line saying interrupted after %d rows", errs, k)
	}
}

// TestSweepInterrupted: a sweep cancelled midway writes the rows of every
// value with at least one trial, counts trials honestly and exits 130. The
// cancel comes from inside the stream: with W workers, the (W+1)-th
// finished evaluation cancels and is dropped, so between 1 and W trials are
// kept (some worker finished two evaluations, and it records its first
// before starting its second).
func TestSweepInterrupted(t *testing.T) {
	workers := runtime.GOMAXPROCS(0)
	out, errs, code := interrupted(t, workers+1, "sweep", "--preset", "fedgain-covariate", "--trials", "1000")
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d; stderr %q", code, ExitInterrupted, errs)
	}
	header, rows := readCSV(t, out)
	if header[1] != "subspace_dim" || len(rows) == 0 {
		t.Fatalf("header %v, %d rows", header, len(rows))
	}
	trials := map[string]int{} // per swept value
	for _, r := range rows {
		n, _ := strconv.Atoi(r[2])
		if n < 1 || n >= 1000 {
			t.Fatalf("row %v: trials %s", r, r[2])
		}
		trials[r[1]] = n
	}
	if len(rows) != 4*len(trials) {
		t.Errorf("%d rows for %d swept values, want one per racer (4) and value", len(rows), len(trials))
	}
	kept := 0
	for _, n := range trials {
		kept += n
	}
	if kept < 1 || kept > workers {
		t.Errorf("%d trials kept with %d workers, want 1..%d", kept, workers, workers)
	}
	if !strings.Contains(errs, "interrupted") || strings.Count(errs, "\n") != 1 {
		t.Errorf("stderr %q", errs)
	}
}
