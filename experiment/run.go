package experiment

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
)

// Point is one round of one racer in the merged stream of a race.
type Point struct {
	Racer int // index into Result.Racers
	Round algorithms.Round
}

// Result describes a finished (or cancelled) race.
type Result struct {
	Racers   []Racer
	Problem  *model.Problem
	Prepared *Prepared      // newton and lowrank families
	Mixture  *model.Mixture // the data of a mixture-family race (Problem is nil)
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

// Facts are what a view shows about prepared data before the first round.
type Facts struct {
	LSError       float64 // error of pooled least squares, the reference line; NaN if none
	RealisedGamma float64 // max_{i,j} ‖θ_i* − θ_j*‖ (PAPERS.md §8: show it); NaN if none
	Note          string  // how defaults were resolved, e.g. the bandwidth from the median distance
}

// NoFacts is the value before the data are prepared.
func NoFacts() Facts { return Facts{LSError: math.NaN(), RealisedGamma: math.NaN()} }

// FactsOf reads the facts of a prepared linear problem.
func FactsOf(p *model.Problem) Facts {
	return Facts{LSError: p.LSError, RealisedGamma: p.Fed.RealisedGamma}
}

// problemKey identifies the data a Problem was built from.
type problemKey struct {
	data datasets.Linear
	seed uint64
}

// problems caches prepared linear data (see cache).
var problems = newCache[problemKey, *model.Problem](4)

// Prepare generates the scenario's federation and its statistics, or returns
// them from the cache.
func Prepare(sc Scenario) (*model.Problem, error) {
	return problems.get(problemKey{sc.Data, sc.Seed}, func() (*model.Problem, error) {
		fed, err := sc.Data.Generate(sc.Seed)
		if err != nil {
			return nil, &InputError{Msg: err.Error()}
		}
		return model.NewProblem(fed), nil
	})
}

// Run races the scenario's algorithms concurrently on the same data, calling
// emit for every round of every racer (never concurrently: emit may block to
// apply back-pressure, which pauses the race). A racer that diverges stops
// alone; its error is in Result.Errs. Run returns ctx.Err() when cancelled.
func Run(ctx context.Context, sc Scenario, emit func(Point)) (Result, error) {
	if err := sc.Validate(); err != nil {
		return Result{}, err
	}
	if sc.IsSweep() {
		return Result{}, &InputError{Msg: fmt.Sprintf("preset %q is a sweep; run it with: fedscope sweep --preset %s", sc.Preset, sc.Preset)}
	}
	switch sc.Family {
	case FamilyLinear:
		return runLinear(ctx, sc, emit)
	case FamilyNewton, FamilyLowRank:
		return runFamily(ctx, sc, emit)
	case FamilyMixture:
		return runMixture(ctx, sc, emit)
	}
	return Result{}, fmt.Errorf("experiment: unknown family %q", sc.Family)
}

// runLinear races FedAvg/FedProx racers on a linear-regression federation.
func runLinear(ctx context.Context, sc Scenario, emit func(Point)) (Result, error) {
	p, err := Prepare(sc)
	if err != nil {
		return Result{}, err
	}
	res := Result{Racers: sc.Resolve(), Problem: p}
	res.Errs, err = race(ctx, res.Racers, emit, func(r Racer, send func(algorithms.Round)) error {
		return r.Algorithm.Run(ctx, p, sc.Rounds, send)
	})
	return res, err
}

// race runs every racer concurrently on data prepared once, through run,
// and merges their rounds into emit (never called concurrently; emit may
// block to apply back-pressure, which pauses the race). A racer that
// diverges stops alone: the returned slice holds, per racer, its
// *RacerError or nil. The error is ctx.Err() when cancelled, or any failure
// other than a divergence, which is a bug rather than a finding.
func race(ctx context.Context, racers []Racer, emit func(Point), run func(r Racer, send func(algorithms.Round)) error) ([]error, error) {
	errs := make([]error, len(racers))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, r := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := run(r, func(rd algorithms.Round) {
				mu.Lock()
				defer mu.Unlock()
				if ctx.Err() == nil {
					emit(Point{Racer: i, Round: rd})
				}
			})
			if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				errs[i] = &RacerError{Label: r.Label, Err: err}
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
