package newton

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/experiment"
	"github.com/fedscope/fedscope/experiment/guardtest"
)

func apply(t *testing.T, sc experiment.Scenario, sets ...string) experiment.Scenario {
	t.Helper()
	sc, err := experiment.NewCatalog(Family).Apply(sc, sets)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestMemoryGuard(t *testing.T) {
	sc := newtonRounds()
	sc.Preset = "newton-rounds"
	guardtest.Run(t, apply(t, sc, "rounds=2", "clients=4", "samples=40", "test_size=50", "rff_dim=30"))
	sw := newtonHeterogeneity()
	sw.Preset = "newton-heterogeneity"
	sw = apply(t, sw, "trials=1", "clients=3", "samples=30", "test_size=20", "rff_dim=20", "rounds=2")
	sw.Sweep.Grid = sw.Sweep.Grid[:3]
	guardtest.Sweep(t, sw)
}

// TestMemoryOfRandomFeatures checks the terms the crashes came
// from: M = 5000 random features for 10000 clients (their H_j, M² each,
// bounded by 2|D|M in all), and a test set of a million points mapped to
// M features.
func TestMemoryOfRandomFeatures(t *testing.T) {
	sc := apply(t, newtonRounds(), "rff_dim=5000", "clients=10000", "samples=400")
	need, knob := Family.Memory(sc)
	// |D| = 10000·400 rows: the clients' statistics alone are
	// min(2mM², 2|D|M) = 2·4·10⁶·5000 numbers, twice (H_j and H_j + μI).
	if want := uint64(2 * 2 * 4_000_000 * 5000 * 8); need < want || knob != "clients" {
		t.Errorf("rff_dim=5000 clients=10000: %d bytes (knob %s), want at least %d and knob clients", need, knob, want)
	}
	sc = apply(t, newtonRounds(), "test_size=1000000")
	if need, knob := Family.Memory(sc); need < 1_000_000*200*8 || knob != "test_size" {
		t.Errorf("test_size=1000000: %d bytes (knob %s), want at least 1.6 GB and knob test_size", need, knob)
	}
}

// TestWideFileIsRefusedBeforeAllocating gives a two-row LIBSVM file whose
// largest feature index is 500000: with 2000 random features the map alone
// is 500000 × 2000 numbers (8 GB). The refusal comes from the count of the
// first pass, names the file, its rows and features, and says what is
// available; the same holds for a test file (PadTo would widen both).
func TestWideFileIsRefusedBeforeAllocating(t *testing.T) {
	dir := t.TempDir()
	narrow := filepath.Join(dir, "narrow.libsvm")
	wide := filepath.Join(dir, "wide.libsvm")
	os.WriteFile(narrow, []byte(strings.Repeat("1 1:0.5 2:1\n2 1:1 2:0.5\n", 10)), 0o644)
	os.WriteFile(wide, []byte("1 1:0.5\n2 500000:1\n"), 0o644)
	ctx := experiment.WithMemory(context.Background(), 1<<30)
	for _, test := range []struct {
		sets []string
		file string
	}{
		{[]string{"data=" + wide}, "wide.libsvm"},
		{[]string{"data=" + narrow, "test=" + wide, "clients=2"}, "wide.libsvm"},
	} {
		sc := apply(t, newtonRounds(), test.sets...)
		_, err := Family.Prepare(ctx, sc, nil)
		var ie *experiment.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), test.file) || !strings.Contains(err.Error(), "× 500000 features") ||
			!strings.Contains(err.Error(), "is available") {
			t.Errorf("%v: err = %v; want an InputError naming %s, its 500000 features and the memory available", test.sets, err, test.file)
		}
	}
}

// TestFileRunIsGuarded runs a small data file one byte over and at the
// file's own estimate (the Check before allocating) and checks the refusal
// and the run.
func TestFileRunIsGuarded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "small.libsvm")
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "%d 1:%g 3:%g\n", i%2, float64(i)/40, float64(i%7)/7)
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
	sc := apply(t, newtonRounds(), "data="+path, "clients=2", "rff_dim=20")
	var need uint64
	_, err := Family.Prepare(context.Background(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The largest check made while preparing is the one with the classes.
	d := cfg(sc).Data
	test := int(40*d.Holdout) + 1
	s := ridgeSize{clients: 2, rows: 40, in: 3, features: 20, outputs: 1, testRows: test, inputRows: 2 * 40}
	need = s.bytes(len(cfg(sc).Racers))
	s2 := ridgeSize{clients: 2, rows: 40 - 8, in: 3, features: 20, outputs: 2, testRows: 8, inputRows: 2 * 40}
	need = max(need, s2.bytes(len(cfg(sc).Racers)))
	limit := experiment.Headroom(need)
	if _, err := Family.Prepare(experiment.WithMemory(context.Background(), limit-1), sc, nil); err == nil {
		t.Errorf("one byte under the estimate of %d bytes the file was prepared", need)
	}
	if _, err := Family.Prepare(experiment.WithMemory(context.Background(), limit), sc, nil); err != nil {
		t.Errorf("at the estimate: %v", err)
	}
}

// TestTooManyClasses refuses a forced classification of a file with more
// than MaxClasses distinct labels, before the one-hot targets are built.
func TestTooManyClasses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "many.libsvm")
	var b strings.Builder
	for i := range 1200 {
		fmt.Fprintf(&b, "%d 1:%d\n", i, i%13)
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
	sc := apply(t, newtonRounds(), "data="+path, "task=classification", "clients=2")
	_, err := Family.Prepare(context.Background(), sc, nil)
	var ie *experiment.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "too many classes") || !strings.Contains(err.Error(), "task=regression") {
		t.Errorf("err = %v; want an InputError about too many classes suggesting task=regression", err)
	}
}

// TestPrepareIsCancellable cancels the preparation of a file run from
// inside the file read (the Check between the passes) and of a synthetic
// run before it starts: both stop with context.Canceled.
func TestPrepareIsCancellable(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sc := apply(t, newtonRounds(), "rounds=1")
	if _, err := Family.Prepare(ctx, sc, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("synthetic: err = %v, want context.Canceled", err)
	}
	path := filepath.Join(t.TempDir(), "d.libsvm")
	os.WriteFile(path, []byte(strings.Repeat("1 1:1\n2 1:2\n", 20)), 0o644)
	sc = apply(t, newtonRounds(), "data="+path, "clients=2")
	if _, err := Family.Prepare(ctx, sc, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("file: err = %v, want context.Canceled", err)
	}
}

// TestInputFiles lists the data and test files, which --out must not
// overwrite.
func TestInputFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.libsvm")
	os.WriteFile(path, []byte("1 1:1\n2 1:2\n"), 0o644)
	sc := apply(t, newtonRounds(), "data="+path, "test="+path)
	if got := sc.InputFiles(); !slices.Equal(got, []string{path, path}) {
		t.Errorf("InputFiles = %v", got)
	}
	if got := newtonRounds().InputFiles(); got != nil {
		t.Errorf("synthetic InputFiles = %v, want none", got)
	}
}
