package algorithms

import (
	"context"
	"math"
	"sync"

	"github.com/fedscope/fedscope/model"
)

// Phase1 is FedMD's whole run on a federation (docs/papers.md §5.2): its rounds
// as TwoPhase emits them (the last with its warning), the k coarse centres
// it hands to Phase 2, and how far its worst anchor ended from the truth
// of its own cluster.
type Phase1 struct {
	Rounds  []ClusterRound
	Centres []float64
	// WorstAnchor is max_h ‖θ_{h,T} − θ*_{z_h}‖ / (εΔ), Δ the true
	// separation: Thm 1 eq. (4) promises every anchor within εΔ (up to its
	// constant 2/α), so above 1 that promise failed on this draw.
	WorstAnchor float64
}

// RunPhase1 runs FedMD on p, once per (federation, configuration): TwoPhase
// and the facts of a run read the same result (a few of the latest are
// kept). A cancelled run is not kept.
func RunPhase1(ctx context.Context, f FedMD, p *model.Mixture) (*Phase1, error) {
	if err := f.validate(p); err != nil {
		return nil, err
	}
	return phase1Runs.get(ctx, phase1Key{p, f}, func() (*Phase1, error) { return f.run(ctx, p) })
}

// run is FedMD's T rounds.
func (f FedMD) run(ctx context.Context, p *model.Mixture) (*Phase1, error) {
	st := newFedMD(f, p)
	out := &Phase1{}
	for t := 1; t <= f.Rounds; t++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st.round()
		centres, groups := st.centres()
		sc := p.Score(centres, nil)
		r := ClusterRound{Index: t, Phase: 1, Centres: centres, Distance: sc.Distance, Misclustered: math.NaN(), ClientError: math.NaN()}
		if t == f.Rounds {
			out.WorstAnchor = worstAnchor(p, st.anchors, f.Epsilon)
			r.Warning = phase1Warning(p, f, groups, sc.Distance, st.moving)
		}
		out.Rounds = append(out.Rounds, r)
		out.Centres = centres
	}
	return out, nil
}

// worstAnchor returns max_h ‖θ_h − θ*_{z_h}‖ / (εΔ) over the anchors.
func worstAnchor(p *model.Mixture, anchors [][]float64, eps float64) float64 {
	var worst float64
	for h, th := range anchors {
		worst = math.Max(worst, model.Distance(th, p.Fed.Truths[p.Fed.AnchorLabels[h]]))
	}
	return worst / (eps * p.Fed.Delta)
}

type phase1Key struct {
	p *model.Mixture
	f FedMD
}

// phase1Runs keeps the latest Phase-1 runs.
var phase1Runs = &phase1Cache{max: 4}

// phase1Cache holds runs by key; concurrent callers of one key wait for one
// computation; a failed one is forgotten.
type phase1Cache struct {
	mu      sync.Mutex
	entries []*phase1Entry
	max     int
}

type phase1Entry struct {
	key  phase1Key
	done chan struct{}
	res  *Phase1
	err  error
}

func (c *phase1Cache) get(ctx context.Context, key phase1Key, build func() (*Phase1, error)) (*Phase1, error) {
	for {
		c.mu.Lock()
		var e *phase1Entry
		for _, x := range c.entries {
			if x.key == key {
				e = x
			}
		}
		if e == nil {
			e = &phase1Entry{key: key, done: make(chan struct{})}
			c.entries = append(c.entries, e)
			if len(c.entries) > c.max {
				c.entries = c.entries[1:]
			}
			c.mu.Unlock()
			e.res, e.err = build()
			if e.err != nil {
				c.mu.Lock()
				for i, x := range c.entries {
					if x == e {
						c.entries = append(c.entries[:i], c.entries[i+1:]...)
						break
					}
				}
				c.mu.Unlock()
			}
			close(e.done)
			return e.res, e.err
		}
		c.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if e.err == nil {
			return e.res, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}
