package algorithms

import (
	"context"
	"math"
	"slices"

	"github.com/fedscope/fedscope/internal/parallel"
	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// RoundMap is one full-batch communication round of FedAvg or FedProx on the
// linear model written as an affine map (docs/papers.md §1.6, paper 000):
//
//	θ ↦ θ − Aθ + c,   A = Σ_i w_i (I − T_i),   c = Σ_i w_i t_i,
//
// where u ↦ T_i u + t_i is client i's local map: T_i = A_i^s and
// t_i = Σ_{τ<s} A_i^τ (η/n_i) X_iᵀy_i for s gradient steps
// (A_i = I − (η/n_i)X_iᵀX_i, §1.3), T_i = B_i = (I + (η/n_i)X_iᵀX_i)⁻¹ and
// t_i = η B_i X_iᵀy_i/n_i for the proximal step (§1.4).
//
// Once A and c are assembled a round costs one d×d product whatever the
// number of clients and local steps. A is symmetric up to rounding, and
// positive semi-definite for every stable step size.
type RoundMap struct {
	Dim int
	A   []float64 // d×d row-major
	C   []float64 // d
}

// MapSpec names one round map: FedAvg with Steps full-batch local gradient
// steps, or FedProx (Prox), with step size Eta.
type MapSpec struct {
	Prox  bool
	Eta   float64
	Steps int // FedAvg: s ≥ 1; ignored for FedProx
}

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
	b.specs = b.specs[:0]
	b.etas = b.etas[:0]
	clientWork := false
	for _, s := range specs {
		bs := builtSpec{MapSpec: s, chain: -1}
		switch {
		case !s.Prox && s.Steps < 1:
			panic("algorithms: FedAvg needs s ≥ 1 local steps")
		case !s.Prox && s.Steps == 1 && pooled != nil:
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
	if cap(b.maps) < len(specs) {
		b.maps = append(b.maps[:cap(b.maps)], make([]RoundMap, len(specs)-cap(b.maps))...)
	}
	b.maps = b.maps[:len(specs)]
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
	if !clientWork {
		return b.maps, nil
	}
	rmax, kmax, gram := 0, 0, false
	for i := range locals {
		rmax = max(rmax, locals[i].R)
		if sp := locals[i].Spec; sp != nil {
			kmax = max(kmax, sp.K)
		}
		gram = gram || locals[i].IsGram()
	}
	chunk := mapChunk(d, kmax, gram)
	chunks := (len(locals) + chunk - 1) / chunk
	workers := parallel.Workers(chunks)
	if b.Workers > 0 {
		workers = min(workers, b.Workers)
	}
	for len(b.slots) < workers {
		b.slots = append(b.slots, mapSlot{})
	}
	for s := range b.slots[:workers] {
		sl := &b.slots[s]
		for len(sl.dm) < len(specs) {
			sl.dm, sl.v = append(sl.dm, nil), append(sl.v, nil)
			sl.acc, sl.cacc, sl.stack = append(sl.acc, nil), append(sl.cacc, nil), append(sl.stack, nil)
			sl.cols = append(sl.cols, 0)
		}
		for k := range specs {
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
	parallel.OrderedOn(workers, chunks, func(c, slot int) {
		sl := &b.slots[slot]
		for k, s := range b.specs {
			if !s.pooled {
				clear(sl.acc[k])
				clear(sl.cacc[k])
				sl.cols[k] = 0
			}
		}
		if ctx.Err() != nil {
			return
		}
		for i := c * chunk; i < min(len(locals), (c+1)*chunk); i++ {
			if l := &locals[i]; w[i] != 0 && l.R > 0 && l.N > 0 {
				b.addClient(sl, l, i, w[i], d, chunk*kmax, chains)
			}
		}
		// The kernel-form clients of the chunk, stacked: Σ w_i Q_i diag(comp) Q_iᵀ
		// as one symmetric rank update of [Q_i diag(√(w_i comp_i))]_i.
		for k := range b.specs {
			if n := sl.cols[k]; n > 0 {
				tmp := sl.work[:d*d]
				blas64.Syrk(blas.NoTrans, 1, blas64.General{Rows: d, Cols: n, Stride: chunk * kmax, Data: sl.stack[k]},
					0, blas64.Symmetric{Uplo: blas.Upper, N: d, Stride: d, Data: tmp})
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
	}, func(_, slot int) {
		sl := &b.slots[slot]
		for k, s := range b.specs {
			if !s.pooled {
				blas64.Axpy(1, vec(sl.acc[k]), vec(b.maps[k].A))
				blas64.Axpy(1, vec(sl.cacc[k]), vec(b.maps[k].C))
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return b.maps, nil
}

// addClient adds client i's terms, weighted by w, to the slot's chunk sums
// of every spec that is not read off the pooled statistics. stride is the
// row stride of the stacked kernel-form factors.
func (b *MapBuilder) addClient(sl *mapSlot, l *model.Local, i int, w float64, d, stride int, chains ChainCache) {
	if l.IsGram() {
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
		return
	}
	sp := l.Spec
	for k, s := range b.specs {
		if s.pooled {
			continue
		}
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
		if sp.K == 0 {
			continue
		}
		// comp and geo·Qᵀb per eigenpair, then c += w Q (geo ∘ Qᵀb).
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
			continue
		}
		blas64.Gemv(blas.NoTrans, w, blas64.General{Rows: d, Cols: sp.K, Stride: sp.K, Data: sp.Q}, vec(z), 1, vec(sl.cacc[k]))
		// Columns Q diag(√(w comp)) appended to the chunk's stacked factors.
		off := sl.cols[k]
		for a := 0; a < d; a++ {
			q, dst := sp.Q[a*sp.K:(a+1)*sp.K], sl.stack[k][a*stride+off:a*stride+off+sp.K]
			for j, cj := range comp {
				dst[j] = q[j] * math.Sqrt(w*cj)
			}
		}
		sl.cols[k] += sp.K
	}
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

// NewFedAvgMap returns the round map of FedAvg with s full-batch local steps
// of size eta, with aggregation weights w (w_i = n_i/N), built from each
// client's eigendecomposition (model.SubspaceSpectrum): in that basis I − T_i
// and the input gain are diagonal. It is the spectral construction that
// MapBuilder's repeated squaring is tested against.
//
// NewFedAvgMap panics if s < 1.
func NewFedAvgMap(spectra []model.SubspaceSpectrum, w []float64, d int, eta float64, s int) RoundMap {
	if s < 1 {
		panic("algorithms: FedAvg needs s ≥ 1 local steps")
	}
	return newRoundMap(spectra, w, d, func(lambda float64) (comp, geo float64) {
		_, comp, geo = model.GDCoefficients(lambda, eta, s)
		return comp, geo
	})
}

// NewFedProxMap returns the round map of full-batch FedProx with parameter
// eta and aggregation weights w, from the clients' eigendecompositions.
func NewFedProxMap(spectra []model.SubspaceSpectrum, w []float64, d int, eta float64) RoundMap {
	return newRoundMap(spectra, w, d, func(lambda float64) (comp, geo float64) {
		_, comp, geo = model.ProxCoefficients(lambda, eta)
		return comp, geo
	})
}

// newRoundMap accumulates A = Σ w_i P Q_i diag(comp) Q_iᵀ Pᵀ and
// c = Σ w_i P Q_i (geo ∘ Q_iᵀ b_i), coef giving comp = 1 − (local
// multiplier) and geo = input gain per eigenvalue.
func newRoundMap(spectra []model.SubspaceSpectrum, w []float64, d int, coef func(lambda float64) (comp, geo float64)) RoundMap {
	m := RoundMap{Dim: d, A: make([]float64, d*d), C: make([]float64, d)}
	var work []float64
	for i := range spectra {
		if n := spectra[i].R * (spectra[i].K + spectra[i].R); n > len(work) {
			work = make([]float64, n)
		}
	}
	for i := range spectra {
		sp := &spectra[i]
		if w[i] == 0 || sp.K == 0 {
			continue
		}
		comp, geo := make([]float64, sp.K), make([]float64, sp.K)
		for j, lam := range sp.Lambda {
			comp[j], geo[j] = coef(lam)
		}
		sp.AddOuterTo(m.A, d, w[i], comp, work)
		sp.AddVecTo(m.C, w[i], geo)
	}
	return m
}

// Step sets dst = θ − Aθ + c, one round from θ (dst and theta must not
// overlap).
func (m RoundMap) Step(dst, theta []float64) {
	copy(dst, m.C)
	blas64.Axpy(1, blas64.Vector{N: m.Dim, Inc: 1, Data: theta}, blas64.Vector{N: m.Dim, Inc: 1, Data: dst})
	blas64.Gemv(blas.NoTrans, -1, blas64.General{Rows: m.Dim, Cols: m.Dim, Stride: m.Dim, Data: m.A},
		blas64.Vector{N: m.Dim, Inc: 1, Data: theta}, 1, blas64.Vector{N: m.Dim, Inc: 1, Data: dst})
}

// Limit returns the fixed point θ_∞ of the round map (see LimitTo).
func (m RoundMap) Limit() []float64 {
	theta := make([]float64, m.Dim)
	m.LimitTo(theta, nil)
	return theta
}

// LimitWork is scratch memory for LimitTo; one serves one goroutine.
type LimitWork struct {
	obs  []int
	a, c []float64
	sol  []float64
	sw   model.SolveWork
}

// LimitTo sets theta to the fixed point θ_∞ of the round map, the solution
// of Aθ = c (docs/papers.md §1.6). When A is singular (the pooled XᵀX is: some
// directions are seen by no client) the minimum-norm solution is returned,
// which is the fixed point in the row space of X that the iterates reach from
// θ_0 = 0. Coordinates that no client observes (a zero row and column of A,
// e.g. in the covariate-subspace model) are split off first, so the common
// singular case costs a Cholesky solve on the observed coordinates only.
// ws may be nil; reused, it makes the common case allocation-free.
func (m RoundMap) LimitTo(theta []float64, ws *LimitWork) {
	if ws == nil {
		ws = &LimitWork{}
	}
	d := m.Dim
	ws.obs = ws.obs[:0]
	for k := 0; k < d; k++ {
		if m.A[k*d+k] != 0 || m.C[k] != 0 {
			ws.obs = append(ws.obs, k)
		}
	}
	clear(theta[:d])
	q := len(ws.obs)
	if q == 0 {
		return
	}
	ws.a, ws.c, ws.sol = grow(ws.a, q*q), grow(ws.c, q), grow(ws.sol, q)
	for i, ki := range ws.obs {
		ws.c[i] = m.C[ki]
		for j, kj := range ws.obs {
			// Symmetrise: the accumulated blocks are symmetric only up to rounding.
			ws.a[i*q+j] = (m.A[ki*d+kj] + m.A[kj*d+ki]) / 2
		}
	}
	model.MinNormSolveTo(ws.sol, ws.a, ws.c, q, &ws.sw)
	for i, k := range ws.obs {
		theta[k] = ws.sol[i]
	}
}

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

// mapRound advances θ by one application of the round map.
func mapRound(m *RoundMap) func(t int, theta []float64) error {
	next := make([]float64, m.Dim)
	return func(_ int, theta []float64) error {
		m.Step(next, theta)
		copy(theta, next)
		return nil
	}
}
