package model

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedscope/fedscope/datasets"
)

// TestNewRFFContextDrawsLikeNewRFF checks that the cancellable constructor
// gives the same map as NewRFF, bit for bit.
func TestNewRFFContextDrawsLikeNewRFF(t *testing.T) {
	want := NewRFF(7, 300, 2.5, 9)
	got, err := NewRFFContext(context.Background(), 7, 300, 2.5, 9)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Omega, want.Omega) || !slices.Equal(got.B, want.B) {
		t.Error("NewRFFContext and NewRFF draw different maps")
	}
}

// TestCancelledConstructors checks that a cancelled context stops both
// constructors with context.Canceled, and that one cancelled in the middle
// of NewRidge's feature loop (from inside MapTo, after the first block)
// returns context.Canceled rather than a half-built problem.
func TestCancelledConstructors(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewRFFContext(ctx, 3, 3, 1, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("NewRFFContext on a cancelled context: err = %v", err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	set := randomSet(rng, 3*featureBlock, 4, 0)
	if _, err := NewRidgeContext(ctx, []*datasets.Set{set}, nil, Identity(4), 0.1); !errors.Is(err, context.Canceled) {
		t.Errorf("NewRidgeContext on a cancelled context: err = %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	fm := &countingMap{FeatureMap: Identity(4), after: func() {
		if calls++; calls == 1 {
			cancel()
		}
	}}
	if _, err := NewRidgeContext(ctx, []*datasets.Set{set}, nil, fm, 0.1); !errors.Is(err, context.Canceled) {
		t.Errorf("NewRidgeContext cancelled after the first block: err = %v", err)
	}
	if calls != 1 {
		t.Errorf("the feature map was applied to %d blocks after the cancellation, want only the first", calls)
	}
}

// countingMap calls after once per block it actually maps.
type countingMap struct {
	FeatureMap
	after func()
}

func (c *countingMap) MapTo(dst, x []float64, n int) { c.FeatureMap.MapTo(dst, x, n); c.after() }
