package model

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/internal/dense"
	"github.com/fedscope/fedscope/internal/parallel"
	"gonum.org/v1/gonum/blas"
)

// RidgeStats are the statistics of a ridge problem in feature space that do
// not depend on λ (docs/papers.md §4.1): every client's right-hand side
// b_j = Φ_jᵀY_j/|D_j| and either its Gram matrix Φ_jᵀΦ_j/|D_j| (|D_j| ≥ M)
// or its features Φ_j and kernel matrix Φ_jΦ_jᵀ (|D_j| < M), the same for
// the pooled data, and the test features. The random features and the Gram
// matrices — nearly all the work — are computed once; At(λ) then costs one
// Cholesky factorisation per Hessian, so that tuning λ over a grid
// (docs/papers.md §4.6) does not rebuild them for every value.
type RidgeStats struct {
	M, C    int // feature dimension, outputs (1, or the number of classes)
	Classes int // 0 for regression
	N       int // |D|
	Weights []float64

	clients  []hessianStats
	pooled   *hessianStats // built on first use (pooledStats)
	poolOnce sync.Once

	TestPhi []float64 // NTest×M
	TestY   []float64
	NTest   int

	sets []*datasets.Set
	fm   FeatureMap
}

// hessianStats are the λ-free statistics of one Hessian ΦᵀΦ/n + λI.
type hessianStats struct {
	n    int
	b    []float64 // Φᵀy/n, M×C
	gram []float64 // primal: upper triangle of ΦᵀΦ/n, M×M (strict lower triangle zero)
	phi  []float64 // dual: Φ, n×M
	kern []float64 // dual: upper triangle of ΦΦᵀ, n×n
}

// featureBlock is the number of rows mapped to features at once.
const featureBlock = 256

// featureBufs recycles the feature buffers of clientStats (rows and their
// transpose), which the many clients of a sweep would otherwise allocate
// afresh.
var featureBufs = sync.Pool{New: func() any { return new([2][]float64) }}

// growTo returns (*b)[:n], growing *b first when it is shorter.
func growTo(b *[]float64, n int) []float64 {
	if cap(*b) < n {
		*b = make([]float64, n)
	}
	return (*b)[:n]
}

// NewRidgeStats maps every client's rows and the test rows through fm and
// computes the statistics. Classification sets (Classes > 0) get one-hot
// targets. Clients are prepared in parallel and every sum runs in a fixed
// order, so the result does not depend on the number of CPUs.
func NewRidgeStats(clients []*datasets.Set, test *datasets.Set, fm FeatureMap) (*RidgeStats, error) {
	if len(clients) == 0 {
		return nil, errors.New("ridge: no clients")
	}
	in, m := fm.Dims()
	classes := clients[0].Classes
	c := max(classes, 1)
	s := &RidgeStats{M: m, C: c, Classes: classes, clients: make([]hessianStats, len(clients)),
		Weights: make([]float64, len(clients)), sets: clients, fm: fm}
	for j, set := range clients {
		if set.Dim != in {
			return nil, fmt.Errorf("ridge: client %d has %d features, the map expects %d", j, set.Dim, in)
		}
		if set.N == 0 {
			return nil, fmt.Errorf("ridge: client %d holds no samples", j)
		}
		s.N += set.N
	}
	parallel.For(len(clients), func(j int) { s.clients[j] = clientStats(clients[j], fm, classes) })
	for j := range s.clients {
		s.Weights[j] = float64(s.clients[j].n) / float64(s.N)
	}
	if err := s.SetTest(test); err != nil {
		return nil, err
	}
	return s, nil
}

// SetTest maps the rows of a test set (nil for none) to features, replacing
// any test set before.
func (s *RidgeStats) SetTest(test *datasets.Set) error {
	s.NTest, s.TestY, s.TestPhi = 0, nil, nil
	if test == nil || test.N == 0 {
		return nil
	}
	in, m := s.fm.Dims()
	if test.Dim != in {
		return fmt.Errorf("ridge: test set has %d features, the map expects %d", test.Dim, in)
	}
	s.NTest, s.TestY = test.N, test.Y
	s.TestPhi = make([]float64, test.N*m)
	blocks := (test.N + featureBlock - 1) / featureBlock
	parallel.For(blocks, func(b int) {
		lo := b * featureBlock
		nb := min(featureBlock, test.N-lo)
		s.fm.MapTo(s.TestPhi[lo*m:(lo+nb)*m], test.X[lo*in:(lo+nb)*in], nb)
	})
	return nil
}

// clientStats maps one client's rows to features block by block and
// accumulates its statistics: the Gram matrix when it holds at least M
// samples, its features and kernel matrix otherwise.
func clientStats(set *datasets.Set, fm FeatureMap, classes int) hessianStats {
	in, m := fm.Dims()
	c := max(classes, 1)
	h := hessianStats{n: set.N, b: make([]float64, m*c)}
	dual := set.N < m
	if dual {
		h.phi = make([]float64, set.N*m)
	} else {
		h.gram = make([]float64, m*m)
	}
	block := min(featureBlock, set.N)
	bufs := featureBufs.Get().(*[2][]float64)
	defer featureBufs.Put(bufs)
	buf := growTo(&bufs[0], block*m)
	var bt []float64
	if !dual {
		bt = growTo(&bufs[1], block*m)
	}
	tgt := make([]float64, block*c)
	inv := 1 / float64(set.N)
	for lo := 0; lo < set.N; lo += block {
		nb := min(block, set.N-lo)
		rows := buf[:nb*m]
		if dual {
			rows = h.phi[lo*m : (lo+nb)*m]
		}
		fm.MapTo(rows, set.X[lo*in:(lo+nb)*in], nb)
		targetsTo(tgt[:nb*c], set.Y[lo:lo+nb], classes)
		if c == 1 {
			gemv(blas.Trans, inv, general(nb, m, rows), tgt[:nb], 1, h.b)
		} else {
			// gonum's Dgemm(Trans, NoTrans, …, beta = 1), bit for bit.
			dense.GemmTNAcc(m, c, nb, inv, rows, m, tgt[:nb*c], c, 1, h.b, c)
		}
		if !dual {
			transposeTo(bt[:nb*m], rows, nb, m)
			beta := 1.0
			if lo == 0 {
				beta = 0
			}
			symRankTo(h.gram, bt[:nb*m], m, nb, inv, beta) // ΦᵀΦ/n: dot products of feature columns
		}
	}
	if dual {
		h.kern = kernelOf(h.phi, set.N, m)
	}
	return h
}

// pooledStats returns the pooled statistics, summing them on first use (the
// pooled Gram matrix costs as much as all the clients' together, and the Υ
// checks of tuning do without it).
func (s *RidgeStats) pooledStats() *hessianStats {
	s.poolOnce.Do(func() {
		if len(s.clients) == 1 {
			s.pooled = &s.clients[0]
		} else {
			s.pooled = s.pool()
		}
	})
	return s.pooled
}

// pool sums the clients' statistics into the pooled ones, in client order:
// H = Σ p_j H_j, b = Σ p_j b_j (docs/papers.md §4.1).
func (s *RidgeStats) pool() *hessianStats {
	m := s.M
	h := &hessianStats{n: s.N, b: make([]float64, m*s.C)}
	for j := range s.clients {
		floatsAxpy(s.Weights[j], s.clients[j].b, h.b)
	}
	if s.N < m { // every client is dual too: stack their features
		h.phi = make([]float64, 0, s.N*m)
		for j := range s.clients {
			h.phi = append(h.phi, s.clients[j].phi...)
		}
		h.kern = kernelOf(h.phi, s.N, m)
		return h
	}
	h.gram = make([]float64, m*m)
	var t []float64
	for j := range s.clients {
		cl := &s.clients[j]
		if cl.gram != nil {
			floatsAxpy(s.Weights[j], cl.gram, h.gram)
			continue
		}
		// Φ_jᵀΦ_j/N = p_j·(Φ_jᵀΦ_j/|D_j|) from the client's features.
		t = slices.Grow(t[:0], cl.n*m)[:cl.n*m]
		transposeTo(t, cl.phi, cl.n, m)
		symRankTo(h.gram, t, m, cl.n, 1/float64(s.N), 1)
	}
	return h
}

// At returns the ridge problem with regularisation λ > 0: the Hessians
// factorised (one Cholesky factorisation each), KRR and DKRR solved. The
// statistics are copied, not consumed, so At may be called for many λ (and
// concurrently).
func (s *RidgeStats) At(lambda float64) (*Ridge, error) { return s.at(lambda, false) }

// at is At; consume factorises the statistics in place (NewRidge, which
// does not keep them).
func (s *RidgeStats) at(lambda float64, consume bool) (*Ridge, error) {
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return nil, fmt.Errorf("ridge: λ=%v must be a finite number > 0", lambda)
	}
	pooled := s.pooledStats()
	r := &Ridge{M: s.M, C: s.C, Classes: s.Classes, Lambda: lambda, N: s.N, Clients: make([]RidgeClient, len(s.clients)),
		Weights: s.Weights, B: pooled.b, TestPhi: s.TestPhi, TestY: s.TestY, NTest: s.NTest,
		prox: map[float64][]*RidgeOp{}, sets: s.sets, fm: s.fm}
	var err error
	if r.Pooled, err = pooled.op(s.M, lambda, consume); err != nil {
		return nil, fmt.Errorf("ridge: pooled: %w", err)
	}
	errs := make([]error, len(s.clients))
	parallel.For(len(s.clients), func(j int) {
		cl := &s.clients[j]
		r.Clients[j] = RidgeClient{N: cl.n, B: cl.b}
		if cl == pooled {
			r.Clients[j].Op = r.Pooled
			return
		}
		r.Clients[j].Op, errs[j] = cl.op(s.M, lambda, consume)
	})
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("ridge: %w", err)
	}
	ws := r.NewWork()
	r.KRR = make([]float64, s.M*s.C)
	r.Pooled.SolveTo(r.KRR, r.B, s.C, ws.Scratch)
	r.DKRR = make([]float64, s.M*s.C)
	for j := range r.Clients {
		r.Clients[j].Op.SolveTo(ws.V, r.Clients[j].B, s.C, ws.Scratch)
		floatsAxpy(r.Weights[j], ws.V, r.DKRR)
	}
	return r, nil
}

// Finish is At for the last λ: it factorises the statistics in place
// instead of copying them, so s must not be used afterwards.
func (s *RidgeStats) Finish(lambda float64) (*Ridge, error) { return s.at(lambda, true) }

// op factorises the Hessian ΦᵀΦ/n + λI of these statistics.
func (h *hessianStats) op(m int, lambda float64, consume bool) (*RidgeOp, error) {
	if h.gram != nil {
		g := h.gram
		if !consume {
			g = slices.Clone(g)
		}
		return newPrimal(g, h.n, m, lambda)
	}
	k := h.kern
	if !consume {
		k = slices.Clone(k)
	}
	return newDual(h.phi, k, h.n, m, lambda)
}

// NewRidge maps every client's rows and the test rows through fm and
// prepares the ridge problem with regularisation λ > 0 (NewRidgeStats, then
// At without keeping the statistics).
func NewRidge(clients []*datasets.Set, test *datasets.Set, fm FeatureMap, lambda float64) (*Ridge, error) {
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return nil, fmt.Errorf("ridge: λ=%v must be a finite number > 0", lambda)
	}
	s, err := NewRidgeStats(clients, test, fm)
	if err != nil {
		return nil, err
	}
	return s.at(lambda, true)
}
