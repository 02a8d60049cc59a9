package algorithms

import (
	"context"
	"math"
	"slices"

	"github.com/fedscope/fedscope/model"
)

// The round maps of a problem are built once and kept with it
// (model.Problem.Keep), with the power chains of its Gram-form clients.

// mapKey names a round map kept with a Problem.
type mapKey MapSpec

// chainKey names the power chains of a Problem's Gram-form clients, kept for
// the latest FedAvg step size.
type chainKey struct{}

// problemChains are the kept power chains, one per client, for one η.
type problemChains struct {
	eta    float64
	chains []model.GDChain
}

// maxChains bounds the memory of the kept power chains: beyond it (large
// Gram-form federations) every build squares afresh.
const maxChains = 128 << 20

// ProblemMap returns the round map of spec on p, built on first use and kept
// with the problem (model.Problem.Keep), so that a re-run, and every racer
// with the same step size and local steps, reuse it.
func ProblemMap(p *model.Problem, spec MapSpec) *RoundMap {
	m, _ := problemMap(context.Background(), p, spec)
	return m
}

func problemMap(ctx context.Context, p *model.Problem, spec MapSpec) (*RoundMap, error) {
	if m, ok := p.Lookup(mapKey(spec)); ok {
		return m.(*RoundMap), nil
	}
	// The map as built or found, not read back from the problem's store,
	// which may refuse or evict it.
	maps, err := prepareMaps(ctx, p, []MapSpec{spec})
	if err != nil {
		return nil, err
	}
	return maps[spec], nil
}

// PrepareMaps builds, in one pass over the clients, the round maps of specs
// that p does not keep yet, and keeps them. The racers of one scenario call
// it with all their specs before running, so that FedAvg racers with the same
// η share the power chains of their clients, and only the first caller
// builds while the others wait. FedAvg with s = 1 is read off the pooled
// Gram matrix; clients are touched only for s ≥ 2 and FedProx. A cancelled
// ctx stops the build (keeping nothing) and is returned.
func PrepareMaps(ctx context.Context, p *model.Problem, specs []MapSpec) error {
	_, err := prepareMaps(ctx, p, specs)
	return err
}

// prepareMaps is PrepareMaps returning the map of every spec, found or
// built.
func prepareMaps(ctx context.Context, p *model.Problem, specs []MapSpec) (map[MapSpec]*RoundMap, error) {
	var err error
	out := map[MapSpec]*RoundMap{}
	p.Build(func() {
		var missing []MapSpec
		for _, s := range specs {
			if m, ok := p.Lookup(mapKey(s)); ok {
				out[s] = m.(*RoundMap)
			} else if !slices.Contains(missing, s) {
				missing = append(missing, s)
			}
		}
		if len(missing) == 0 {
			return
		}
		var locals []model.Local
		var chains ChainCache
		for _, s := range missing {
			if s.Prox || s.Steps > 1 {
				locals = p.Locals()
				break
			}
		}
		if ctx.Err() != nil {
			err = ctx.Err()
			return
		}
		if locals != nil {
			chains = problemChainCache(p, missing, locals)
		}
		var b MapBuilder
		var maps []RoundMap
		maps, err = b.Build(ctx, locals, p.Weights, p.Dim, missing, &Pooled{Gram: p.Gram, XtY: p.XtY}, chains)
		for k := range maps {
			m := &maps[k]
			out[missing[k]] = m
			p.Keep(mapKey(missing[k]), m, 8*(len(m.A)+len(m.C)))
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// problemChainCache returns the kept power chains of p for the first FedAvg
// step size among specs, creating or replacing them, or nil when they would
// not fit in maxChains. It is called under p's build lock.
func problemChainCache(p *model.Problem, specs []MapSpec, locals []model.Local) ChainCache {
	eta, levels := math.NaN(), 0
	for _, s := range specs {
		if !s.Prox && s.Steps > 1 && (math.IsNaN(eta) || s.Eta == eta) {
			eta, levels = s.Eta, max(levels, model.Levels(s.Steps))
		}
	}
	if math.IsNaN(eta) {
		return nil
	}
	size := 0
	for i := range locals {
		if locals[i].IsGram() {
			r := locals[i].R
			size += 8 * levels * (r*r + r)
		}
	}
	if size > maxChains {
		return nil
	}
	// The chains of the previous step size are recycled: a session that
	// scrubs η keeps one set of chains, not one per η.
	var pc *problemChains
	if v, ok := p.Lookup(chainKey{}); ok {
		pc = v.(*problemChains)
	} else {
		pc = &problemChains{eta: math.NaN(), chains: make([]model.GDChain, len(locals))}
	}
	if pc.eta != eta {
		pc.eta = eta
		for i := range pc.chains {
			pc.chains[i].Reset()
		}
	}
	p.Keep(chainKey{}, pc, size)
	return func(i int, e float64) *model.GDChain {
		if e != eta || !locals[i].IsGram() {
			return nil
		}
		return &pc.chains[i]
	}
}
