package experiment

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/fedscope/fedscope/algorithms"
)

// Engine runs scenarios. It owns the cache of prepared data, keyed by family
// and Family.DataKey, so that a re-run, or a change of a parameter that does
// not touch the data (η, s, the racers), reuses the statistics (docs/design.md:
// "computed once per dataset and shared by every algorithm and every
// re-run"). The TUI and the command line each hold one; it is safe for
// concurrent use.
type Engine struct {
	data *cache[string, any]
}

// NewEngine returns an engine with an empty cache.
func NewEngine() *Engine { return &Engine{data: newCache[string, any](6)} }

// Prepare returns the prepared data of sc, building them (once, however many
// callers ask at the same time) on a miss. report may be nil. A scenario
// whose memory estimate (Family.Memory) exceeds the memory available is
// refused with an *InputError before anything is allocated.
func (e *Engine) Prepare(ctx context.Context, sc Scenario, report func(Progress)) (any, error) {
	if err := checkMemory(ctx, sc); err != nil {
		return nil, err
	}
	key := sc.Family.DataKey(sc)
	if key == "" {
		return sc.Family.Prepare(ctx, sc, report)
	}
	for {
		ran := false
		v, err := e.data.get(sc.Family.Name()+"\x00"+key, func() (any, error) {
			ran = true
			return sc.Family.Prepare(ctx, sc, report)
		})
		// Waiting on another caller's build that was cancelled (the explorer
		// restarted while the data were being prepared) is not a failure of
		// this caller: the failed entry is gone, so build again.
		if err != nil && !ran && ctx.Err() == nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			continue
		}
		return v, err
	}
}

// Forget empties the cache (benchmarks measure cold runs with it).
func (e *Engine) Forget() { e.data.clear() }

// Point is one round of one racer in the merged stream of a race.
type Point struct {
	Racer int // index into Result.Racers
	Round Round
}

// Result describes a finished (or cancelled) race.
type Result struct {
	Racers []Racer
	Data   any   // what the family prepared
	Facts  Facts // the family's facts on the prepared data
	// Errs holds, per racer, why it stopped early: a *RacerError wrapping an
	// *algorithms.DivergedError, or nil when it ran all rounds.
	Errs []error
}

// Failed returns the racers' errors that are not nil.
func (r Result) Failed() []error {
	var out []error
	for _, err := range r.Errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// RacerError is a racer's failure, worded for the status line, e.g.
// "FedAvg s=10 diverged at round 7: η=1.2 exceeds the stable limit 0.95 …".
type RacerError struct {
	Label string
	Err   error
}

func (e *RacerError) Error() string { return e.Label + " " + e.Err.Error() }
func (e *RacerError) Unwrap() error { return e.Err }

// Observer receives what a race produces; any field may be nil. Its
// functions are never called concurrently, and Round may block to apply
// back-pressure, which pauses the race.
type Observer struct {
	Progress  func(Progress)         // data preparation
	Ready     func(Facts)            // the data are prepared
	Round     func(Point)            // one round of one racer
	RacerDone func(i int, err error) // racer i stopped: all rounds run (nil), or its *RacerError
}

// Run prepares the scenario's data (or takes them from the cache), tells the
// observer the family's facts on them, then races the racers concurrently
// on them, passing every round of every racer to the observer. A racer that
// diverges stops alone; its error is in Result.Errs. Run returns ctx.Err()
// when cancelled.
func (e *Engine) Run(ctx context.Context, sc Scenario, obs Observer) (Result, error) {
	if err := sc.Validate(); err != nil {
		return Result{}, err
	}
	if sc.IsSweep() {
		return Result{}, Errorf("preset %q is a sweep; run it with: fedscope sweep --preset %s", sc.Preset, sc.Preset)
	}
	var mu sync.Mutex // serialises the observer's calls
	if obs.Progress != nil {
		report := obs.Progress
		obs.Progress = func(p Progress) { mu.Lock(); defer mu.Unlock(); report(p) }
	}
	data, err := e.Prepare(ctx, sc, obs.Progress)
	if err != nil {
		return Result{}, err
	}
	res := Result{Racers: sc.Racers(), Data: data, Facts: sc.Family.Facts(sc, data)}
	if obs.Ready != nil {
		obs.Ready(res.Facts)
	}
	res.Errs, err = race(ctx, res.Racers, &mu, obs, func(r Racer, send func(Round)) error {
		return r.Run(ctx, data, sc.Rounds, send)
	})
	return res, err
}

// race runs every racer concurrently through run and merges their rounds
// into the observer (whose calls mu serialises). A racer that diverges stops
// alone: the returned slice holds, per racer, its *RacerError or nil. The
// error is ctx.Err() when cancelled, or any failure other than a divergence,
// which is a bug rather than a finding.
func race(ctx context.Context, racers []Racer, mu *sync.Mutex, obs Observer, run func(r Racer, send func(Round)) error) ([]error, error) {
	errs := make([]error, len(racers))
	var wg sync.WaitGroup
	for i, r := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := run(r, func(rd Round) {
				mu.Lock()
				defer mu.Unlock()
				if ctx.Err() == nil && obs.Round != nil {
					obs.Round(Point{Racer: i, Round: rd})
				}
			})
			if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				errs[i] = &RacerError{Label: r.Label, Err: err}
			}
			if ctx.Err() == nil && obs.RacerDone != nil {
				mu.Lock()
				obs.RacerDone(i, errs[i])
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return errs, err
	}
	for _, e := range errs {
		var de *algorithms.DivergedError
		if e != nil && !errors.As(e, &de) {
			return errs, fmt.Errorf("race: %w", e)
		}
	}
	return errs, nil
}
