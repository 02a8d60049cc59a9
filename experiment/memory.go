package experiment

import (
	"context"
	"fmt"

	"github.com/fedscope/fedscope/internal/sysmem"
)

// InputFiles returns the files sc reads, or nil.
func (sc Scenario) InputFiles() []string { return sc.Family.InputFiles(sc) }

type memoryKey struct{}

// WithMemory returns a context under which MemoryAvailable reports avail
// bytes instead of asking the machine: tests set the figure so that they do
// not depend on the machine they run on.
func WithMemory(ctx context.Context, avail uint64) context.Context {
	return context.WithValue(ctx, memoryKey{}, avail)
}

// MemoryAvailable returns the memory a preparation may use: the figure of
// WithMemory, or what the machine has available (sysmem.Available).
func MemoryAvailable(ctx context.Context) uint64 {
	if v, ok := ctx.Value(memoryKey{}).(uint64); ok {
		return v
	}
	b, _ := sysmem.Available()
	return b
}

// Headroom is the memory a live size of need bytes takes in a Go process:
// need and a quarter more, for the garbage not yet collected and the
// allocator's rounding (the peak resident sizes measured for scenarios of
// 0.3–5 GB were 0.66–1.10 times the families' estimates).
func Headroom(need uint64) uint64 { return SatAdd(need, need/4) }

// CheckMemory returns an *InputError when need bytes (with Headroom)
// exceed what ctx allows (MemoryAvailable): "<what> needs about 812 GB of
// memory, but 21.3 GB is available". what says what needs it:
// `rff_dim=5000: the scenario`, or `data="big.libsvm" (2 rows × 50000000
// features), rff_dim=2000:`.
func CheckMemory(ctx context.Context, need uint64, what string) error {
	need = Headroom(need)
	if avail := MemoryAvailable(ctx); need > avail {
		return &InputError{Msg: fmt.Sprintf("%s needs about %s of memory, but %s is available",
			what, sysmem.Format(need), sysmem.Format(avail))}
	}
	return nil
}

// checkMemory refuses sc when the family's estimate exceeds the memory
// available, naming the knob that drives it.
func checkMemory(ctx context.Context, sc Scenario) error {
	need, knob := sc.Family.Memory(sc)
	if err := CheckMemory(ctx, need, fmt.Sprintf("%s=%s: the scenario", knob, sc.Get(knob))); err != nil {
		return &InputError{Msg: err.Error() + "; lower " + knob}
	}
	return nil
}

// sweepWorkers returns how many point scenarios of a sweep may be evaluated
// at once: want, or fewer when that many would not fit in the memory
// available (the output does not depend on the number of workers). It
// refuses the sweep when even one point does not fit.
func sweepWorkers(ctx context.Context, sc Scenario, want int) (int, error) {
	var need uint64
	var worst Scenario
	for i := range sc.Sweep.Grid {
		p, err := sc.PointScenario(i, 0)
		if err != nil {
			return 0, err
		}
		if n, _ := p.Family.Memory(p); n >= need {
			need, worst = n, p
		}
	}
	if err := checkMemory(ctx, worst); err != nil {
		return 0, &InputError{Msg: fmt.Sprintf("%s (at %s=%s, the largest point of the sweep)", err, sc.Sweep.Knob, worst.Get(sc.Sweep.Knob))}
	}
	if need == 0 {
		return want, nil
	}
	return max(1, min(want, int(min(MemoryAvailable(ctx)/Headroom(need), uint64(want))))), nil
}

// SatMul multiplies byte counts without wrapping around: an estimate that
// overflows is the largest number, which no machine has.
func SatMul(a uint64, bs ...uint64) uint64 {
	for _, b := range bs {
		if a != 0 && b > ^uint64(0)/a {
			return ^uint64(0)
		}
		a *= b
	}
	return a
}

// SatAdd adds byte counts without wrapping around.
func SatAdd(xs ...uint64) uint64 {
	var s uint64
	for _, x := range xs {
		if s+x < s {
			return ^uint64(0)
		}
		s += x
	}
	return s
}

// Floats is the size in bytes of n float64 values, saturating, for
// estimates computed from ints that may be large.
func Floats(n ...int) uint64 {
	b := uint64(8)
	for _, x := range n {
		if x < 0 {
			x = 0
		}
		b = SatMul(b, uint64(x))
	}
	return b
}
