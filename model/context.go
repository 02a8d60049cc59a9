package model

import (
	"context"
	"math"
	"math/rand/v2"

	"github.com/fedscope/fedscope/datasets"
)

// This file holds the cancellable forms of the constructors of the ridge
// problem (issue 13: Ctrl-C during data preparation ends it within a
// second). They wrap NewRFF and NewRidge rather than change them, so that
// the numerics stay in one place.

// rffCheckEvery is how many random draws NewRFFContext makes between two
// looks at its context (a few milliseconds of work).
const rffCheckEvery = 1 << 16

// NewRFFContext is NewRFF that stops with ctx.Err() when ctx is cancelled
// while drawing. It draws exactly the numbers NewRFF draws, in the same
// order, so both give the same map.
func NewRFFContext(ctx context.Context, in, out int, bandwidth float64, seed uint64) (*RFF, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, rffStream))
	f := &RFF{In: in, Out: out, Bandwidth: bandwidth, Omega: make([]float64, in*out), B: make([]float64, out)}
	sd := 1 / math.Sqrt(bandwidth)
	for k := range f.Omega {
		if k%rffCheckEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		f.Omega[k] = sd * rng.NormFloat64()
	}
	for k := range f.B {
		f.B[k] = 2 * math.Pi * rng.Float64()
	}
	return f, nil
}

// cancellableMap is a feature map that stops mapping once its context is
// cancelled: the remaining blocks of NewRidge's feature loops then cost a
// clear instead of a matrix product and the cosines, and NewRidgeContext
// throws the result away.
type cancellableMap struct {
	FeatureMap
	ctx context.Context
}

// MapTo implements FeatureMap.
func (c cancellableMap) MapTo(dst, x []float64, n int) {
	if c.ctx.Err() != nil {
		_, out := c.Dims()
		clear(dst[:n*out])
		return
	}
	c.FeatureMap.MapTo(dst, x, n)
}

// NewRidgeContext is NewRidge that returns ctx.Err() when ctx is cancelled:
// its feature loops (clients and test set) stop mapping at the next block
// of rows. The factorisations already under way finish first (LAPACK cannot
// be interrupted), which the memory guard of the newton family bounds.
func NewRidgeContext(ctx context.Context, clients []*datasets.Set, test *datasets.Set, fm FeatureMap, lambda float64) (*Ridge, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := NewRidge(clients, test, cancellableMap{fm, ctx}, lambda)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return r, err
}

// NewRidgeStatsContext is NewRidgeStats that returns ctx.Err() when ctx is
// cancelled, as NewRidgeContext does. The statistics it returns keep fm
// itself, not the cancellable wrapper: their pooled part is built later, on
// first use, when ctx may long be done.
func NewRidgeStatsContext(ctx context.Context, clients []*datasets.Set, test *datasets.Set, fm FeatureMap) (*RidgeStats, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := NewRidgeStats(clients, test, cancellableMap{fm, ctx})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if s != nil {
		s.fm = fm
	}
	return s, err
}
