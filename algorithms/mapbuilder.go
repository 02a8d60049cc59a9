package algorithms

import (
	"context"
	"math"

	"github.com/fedscope/fedscope/internal/dense"
	"github.com/fedscope/fedscope/internal/parallel"
	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/blas/blas64"
)

// MapBuilder assembles round maps from the clients' statistics in the form
// of model.Local. It keeps its scratch and output memory between calls, so
// a sweep worker that builds the maps of trial after trial allocates
// nothing once it has grown to the largest trial. A builder serves one
// goroutine at a time.
type MapBuilder struct {
	// Workers caps the goroutines of a build; 0 means one per CPU. A sweep,
	// already parallel over trials, builds each trial's maps on one.
	Workers int

	slots []mapSlot
	maps  []RoundMap
	// flags per spec, reused
	specs []builtSpec
	etas  []float64
}

type builtSpec struct {
	MapSpec
	pooled bool // read off the pooled Gram matrix instead of the clients
	chain  int  // index into the distinct step sizes of the FedAvg specs
}

// mapSlot is one worker's scratch: the current client's terms per spec,
// its power chains per distinct step size, and the current chunk's sums
// per spec (acc, cacc) with the stacked kernel-form factors (stack).
type mapSlot struct {
	chains    []model.GDChain
	dm, v     [][]float64
	acc, cacc [][]float64
	stack     [][]float64
	cols      []int
	work      []float64
}

// mapChunk is how many clients one task of Build handles: their terms are
// summed in the task, kernel-form ones by one symmetric rank-k update of
// their stacked factors (up to about 256 columns, which stay in cache),
// and the tasks' sums are then added in order. A Gram-form client is work
// enough for a task of its own (O(r³)), so with any of them, as with a large
// d (which bounds the memory of the per-task sums), a task is one client.
// The size depends on the data only, never on the CPUs, so the sums do not
// either.
func mapChunk(d, kmax int, gram bool) int {
	if gram || d > 1000 {
		return 1
	}
	return max(1, min(32, 256/max(kmax, 1)))
}

// Pooled is XᵀX/N and Xᵀy/N of a federation. FedAvg with s = 1 is
// centralised gradient descent on the pooled loss (docs/papers.md §1.3), so its
// round map is A = ηXᵀX/N, c = ηXᵀy/N, read off the pooled statistics without
// touching the clients.
type Pooled struct {
	Gram, XtY []float64
}

// ChainCache, when set in Build, returns a power chain kept between builds
// for client i and step size eta (extended in place by the worker that
// handles client i), or nil to use scratch; a change of s then costs at
// most popcount(s) − 1 products per client instead of a fresh chain.
type ChainCache func(i int, eta float64) *model.GDChain

// Build returns the round maps of specs for clients with statistics locals
// and aggregation weights w in dimension d:
//
//	A = Σ_i w_i P_i D_i P_iᵀ,   c = Σ_i w_i P_i v_i,
//
// where u ↦ u − D_i u + v_i is client i's local map on its coordinates P_i
// (model.Local). In Gram form s gradient steps come from repeated squaring
// (model.GDChain: ⌊log₂ s⌋ symmetric products and popcount(s) − 1 general
// ones) and the proximal step from one Cholesky factorisation; in kernel
// form both are diagonal in the cached n_i×n_i eigenbasis. Every spec is
// built in the same pass over the clients, which run in parallel while their
// terms are added in client order, so the maps are the same bit for bit on
// any number of CPUs. pooled, when not nil, serves FedAvg with s = 1.
// The maps are valid until the next call. Build stops early, returning
// ctx.Err(), when ctx is cancelled.
func (b *MapBuilder) Build(ctx context.Context, locals []model.Local, w []float64, d int, specs []MapSpec, pooled *Pooled, chains ChainCache) ([]RoundMap, error) {
	clientWork := b.plan(specs, pooled != nil)
	b.startMaps(d, pooled)
	if !clientWork {
		return b.maps, nil
	}
	rmax, kmax, gram := sizes(locals)
	chunk := mapChunk(d, kmax, gram)
	chunks := (len(locals) + chunk - 1) / chunk
	workers := parallel.Workers(chunks)
	if b.Workers > 0 {
		workers = min(workers, b.Workers)
	}
	b.growSlots(workers, d, rmax, kmax, chunk)
	parallel.OrderedOn(workers, chunks, func(c, slot int) {
		sl := &b.slots[slot]
		b.clearSums(sl)
		if ctx.Err() != nil {
			return
		}
		for i := c * chunk; i < min(len(locals), (c+1)*chunk); i++ {
			if l := &locals[i]; w[i] != 0 && l.R > 0 && l.N > 0 {
				b.addClient(sl, l, i, w[i], d, chunk*kmax, chains)
			}
		}
		b.addStacked(sl, d, chunk*kmax)
	}, func(_, slot int) { b.addSums(&b.slots[slot]) })
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return b.maps, nil
}

// plan reads the specs into b.specs, each FedAvg spec with the index of its
// step size in b.etas (the power chains are per step size), and reports
// whether any spec needs the clients: FedAvg with s = 1 is read off the
// pooled statistics when there are some.
func (b *MapBuilder) plan(specs []MapSpec, pooled bool) (clientWork bool) {
	b.specs = b.specs[:0]
	b.etas = b.etas[:0]
	for _, s := range specs {
		bs := builtSpec{MapSpec: s, chain: -1}
		switch {
		case !s.Prox && s.Steps < 1:
			panic("algorithms: FedAvg needs s ≥ 1 local steps")
		case !s.Prox && s.Steps == 1 && pooled:
			bs.pooled = true
		case !s.Prox:
			bs.chain = indexOf(b.etas, s.Eta)
			if bs.chain < 0 {
				bs.chain = len(b.etas)
				b.etas = append(b.etas, s.Eta)
			}
		}
		clientWork = clientWork || !bs.pooled
		b.specs = append(b.specs, bs)
	}
	return clientWork
}

// startMaps sizes one zero map per spec in b.maps, and fills in those read
// off the pooled statistics.
func (b *MapBuilder) startMaps(d int, pooled *Pooled) {
	n := len(b.specs)
	if cap(b.maps) < n {
		b.maps = append(b.maps[:cap(b.maps)], make([]RoundMap, n-cap(b.maps))...)
	}
	b.maps = b.maps[:n]
	for k := range b.maps {
		m := &b.maps[k]
		m.Dim = d
		m.A, m.C = growZero(m.A, d*d), growZero(m.C, d)
		if s := b.specs[k]; s.pooled {
			for j, g := range pooled.Gram {
				m.A[j] = s.Eta * g
			}
			for j, v := range pooled.XtY {
				m.C[j] = s.Eta * v
			}
		}
	}
}

// sizes returns the largest subspace dimension r and kernel size k of the
// clients, and whether any is in Gram form.
func sizes(locals []model.Local) (rmax, kmax int, gram bool) {
	for i := range locals {
		rmax = max(rmax, locals[i].R)
		if sp := locals[i].Spec; sp != nil {
			kmax = max(kmax, sp.K)
		}
		gram = gram || locals[i].IsGram()
	}
	return rmax, kmax, gram
}

// growSlots gives the first workers slots the scratch of every spec for
// clients up to rmax × kmax in dimension d, chunk clients per task.
func (b *MapBuilder) growSlots(workers, d, rmax, kmax, chunk int) {
	for len(b.slots) < workers {
		b.slots = append(b.slots, mapSlot{})
	}
	n := len(b.specs)
	for s := range b.slots[:workers] {
		sl := &b.slots[s]
		for len(sl.dm) < n {
			sl.dm, sl.v = append(sl.dm, nil), append(sl.v, nil)
			sl.acc, sl.cacc, sl.stack = append(sl.acc, nil), append(sl.cacc, nil), append(sl.stack, nil)
			sl.cols = append(sl.cols, 0)
		}
		for k := range n {
			sl.dm[k], sl.v[k] = grow(sl.dm[k], rmax*rmax), grow(sl.v[k], rmax)
			sl.acc[k], sl.cacc[k] = grow(sl.acc[k], d*d), grow(sl.cacc[k], d)
			if kmax > 0 {
				sl.stack[k] = grow(sl.stack[k], d*chunk*kmax)
			}
		}
		sl.work = grow(sl.work, max(rmax*rmax, rmax*kmax+2*kmax, d*d))
		for len(sl.chains) < len(b.etas) {
			sl.chains = append(sl.chains, model.GDChain{})
		}
	}
}

// clearSums empties the slot's chunk sums before a task.
func (b *MapBuilder) clearSums(sl *mapSlot) {
	for k, s := range b.specs {
		if !s.pooled {
			clear(sl.acc[k])
			clear(sl.cacc[k])
			sl.cols[k] = 0
		}
	}
}

// addStacked adds the kernel-form clients of the chunk, stacked, to the
// slot's sums: Σ w_i Q_i diag(comp) Q_iᵀ as one symmetric rank update of
// [Q_i diag(√(w_i comp_i))]_i, whose rows are stride apart.
func (b *MapBuilder) addStacked(sl *mapSlot, d, stride int) {
	for k := range b.specs {
		n := sl.cols[k]
		if n == 0 {
			continue
		}
		tmp := sl.work[:d*d]
		dense.SyrkUpper(d, n, 1, sl.stack[k], stride, 0, tmp, d)
		acc := sl.acc[k]
		for a := 0; a < d; a++ {
			acc[a*d+a] += tmp[a*d+a]
			for j := a + 1; j < d; j++ {
				acc[a*d+j] += tmp[a*d+j]
				acc[j*d+a] += tmp[a*d+j]
			}
		}
	}
}

// addSums adds a finished task's sums to the maps (in task order).
func (b *MapBuilder) addSums(sl *mapSlot) {
	for k, s := range b.specs {
		if !s.pooled {
			blas64.Axpy(1, vec(sl.acc[k]), vec(b.maps[k].A))
			blas64.Axpy(1, vec(sl.cacc[k]), vec(b.maps[k].C))
		}
	}
}

// addClient adds client i's terms, weighted by w, to the slot's chunk sums
// of every spec that is not read off the pooled statistics. stride is the
// row stride of the stacked kernel-form factors.
func (b *MapBuilder) addClient(sl *mapSlot, l *model.Local, i int, w float64, d, stride int, chains ChainCache) {
	if l.IsGram() {
		b.addGramClient(sl, l, i, w, d, chains)
		return
	}
	for k, s := range b.specs {
		if !s.pooled && l.Spec.K > 0 {
			b.addKernelClient(sl, k, l, w, d, stride)
		}
	}
}

// addGramClient adds a Gram-form client's terms: s gradient steps from its
// power chain for each step size, and the proximal step.
func (b *MapBuilder) addGramClient(sl *mapSlot, l *model.Local, i int, w float64, d int, chains ChainCache) {
	for c, eta := range b.etas {
		levels := 0
		for _, s := range b.specs {
			if s.chain == c {
				levels = max(levels, model.Levels(s.Steps))
			}
		}
		var ch *model.GDChain
		if chains != nil {
			ch = chains(i, eta)
		}
		if ch == nil {
			ch = &sl.chains[c]
			ch.Reset()
		}
		ch.Extend(l, eta, levels)
		for k, s := range b.specs {
			if s.chain == c {
				ch.Combine(s.Steps, l.R, sl.dm[k], sl.v[k], sl.work)
				l.AddTerm(sl.acc[k], sl.cacc[k], d, w, sl.dm[k], sl.v[k])
			}
		}
	}
	for k, s := range b.specs {
		if s.Prox {
			l.ProxTerm(s.Eta, sl.dm[k], sl.v[k], sl.work)
			l.AddTerm(sl.acc[k], sl.cacc[k], d, w, sl.dm[k], sl.v[k])
		}
	}
}

// addKernelClient adds a kernel-form client's term of spec k, diagonal in
// its eigenbasis: c += w Q (geo ∘ Qᵀb) at once, and A's part as the columns
// Q diag(√(w comp)) appended to the chunk's stacked factors (addStacked);
// a client on a coordinate subset, or with a negative comp (an unstable
// step), adds its term directly.
func (b *MapBuilder) addKernelClient(sl *mapSlot, k int, l *model.Local, w float64, d, stride int) {
	sp, s := l.Spec, b.specs[k]
	eta, steps := s.Eta, s.Steps
	coef := func(lambda float64) (comp, geo float64) {
		_, comp, geo = model.GDCoefficients(lambda, eta, steps)
		return comp, geo
	}
	if s.Prox {
		coef = func(lambda float64) (comp, geo float64) {
			_, comp, geo = model.ProxCoefficients(lambda, eta)
			return comp, geo
		}
	}
	comp, z := sl.work[:sp.K], sl.work[sp.K:2*sp.K]
	nonneg := true
	for j, lam := range sp.Lambda {
		cj, g := coef(lam)
		comp[j], z[j] = cj, g*sp.QtB[j]
		nonneg = nonneg && cj >= 0
	}
	if l.Coords != nil || !nonneg {
		l.Spec.TermTo(sl.dm[k], sl.v[k], sl.work, coef)
		l.AddTerm(sl.acc[k], sl.cacc[k], d, w, sl.dm[k], sl.v[k])
		return
	}
	dense.GemvN(d, sp.K, w, sp.Q, sp.K, z, 1, sl.cacc[k]) // gonum's Dgemv, bit for bit
	off := sl.cols[k]
	for j, cj := range comp { // the column scales √(w·comp_j), once per client
		comp[j] = math.Sqrt(w * cj)
	}
	for a := 0; a < d; a++ {
		q, dst := sp.Q[a*sp.K:(a+1)*sp.K], sl.stack[k][a*stride+off:a*stride+off+sp.K]
		for j, sc := range comp {
			dst[j] = q[j] * sc
		}
	}
	sl.cols[k] += sp.K
}

func vec(x []float64) blas64.Vector { return blas64.Vector{N: len(x), Inc: 1, Data: x} }

func indexOf(xs []float64, x float64) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

func grow(buf []float64, n int) []float64 {
	if cap(buf) < n {
		return make([]float64, n)
	}
	return buf[:n]
}

func growZero(buf []float64, n int) []float64 {
	buf = grow(buf, n)
	clear(buf)
	return buf
}
