package model_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// localTerm returns the local map u ↦ u − D u + v of one client as the
// pair (D, v) on its coordinates, computed by the code under test.
func localTerm(l *model.Local, eta float64, steps int, prox bool) (dm, v []float64) {
	r := l.R
	dm, v = make([]float64, r*r), make([]float64, r)
	work := make([]float64, r*r+2*r*r+4*r)
	switch {
	case l.IsGram() && prox:
		l.ProxTerm(eta, dm, v, work)
	case l.IsGram():
		var c model.GDChain
		c.Extend(l, eta, model.Levels(steps))
		c.Combine(steps, r, dm, v, work)
	default:
		coef := func(lambda float64) (float64, float64) {
			_, comp, geo := model.GDCoefficients(lambda, eta, steps)
			return comp, geo
		}
		if prox {
			coef = func(lambda float64) (float64, float64) {
				_, comp, geo := model.ProxCoefficients(lambda, eta)
				return comp, geo
			}
		}
		l.Spec.TermTo(dm, v, work, coef)
	}
	return dm, v
}

// apply returns u − P D Pᵀ u + P v for a client on coordinates coords (nil:
// all of u).
func apply(dm, v []float64, coords []int, u []float64) []float64 {
	r := len(v)
	out := append([]float64(nil), u...)
	at := func(a int) int {
		if coords == nil {
			return a
		}
		return coords[a]
	}
	for a := 0; a < r; a++ {
		var s float64
		for b := 0; b < r; b++ {
			s += dm[a*r+b] * u[at(b)]
		}
		out[at(a)] += v[a] - s
	}
	return out
}

// TestLocalTerms checks every client's local map in the form of the round
// maps against the update run on the raw design: s explicit gradient steps
// u ← u − (η/n)Xᵀ(Xu − y) (docs/papers.md §1.3) and the proximal point by an LU
// solve of (I + ηXᵀX/n)u = θ + ηXᵀy/n (§1.4). The clients cover the Gram
// form (n ≥ r), the kernel form (n < r), a covariate subspace in both forms
// and in the compact layout, step counts that are and are not powers of
// two, a step size beyond the stable limit (ηλ > 1, where (1 − ηλ)^s
// alternates in sign) and a tiny one.
func TestLocalTerms(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for i, test := range []struct {
		cfg datasets.Linear
		eta float64
	}{
		{cfg: datasets.Linear{Clients: 1, Dim: 8, Samples: 40, Noise: 0.5}, eta: 0.1},
		{cfg: datasets.Linear{Clients: 1, Dim: 12, Samples: 5, Noise: 0.5}, eta: 0.05},
		{cfg: datasets.Linear{Clients: 1, Dim: 8, Samples: 40, Noise: 0.5}, eta: 1.4},
		{cfg: datasets.Linear{Clients: 1, Dim: 10, Samples: 30, Noise: 0.5, SubspaceDim: 4}, eta: 0.05},
		{cfg: datasets.Linear{Clients: 1, Dim: 10, Samples: 3, Noise: 0.5, SubspaceDim: 6}, eta: 0.02},
		{cfg: datasets.Linear{Clients: 1, Dim: 6, Samples: 9, Noise: 0.5}, eta: 1e-7},
	} {
		for _, compact := range []bool{false, true} {
			f := new(datasets.Federation)
			if err := test.cfg.GenerateInto(f, uint64(i+1), compact); err != nil {
				t.Fatal(err)
			}
			c := f.Clients[0]
			var l model.Local
			l.Set(c.X, c.Y, c.N, f.Dim, c.Support, compact, nil)
			dense, err := test.cfg.Generate(uint64(i + 1))
			if err != nil {
				t.Fatal(err)
			}
			x, y := design(dense.Clients[0], f.Dim)
			theta := randVec(rng, f.Dim, 1)
			for _, steps := range []int{1, 2, 3, 5, 8, 10, 13} {
				dm, v := localTerm(&l, test.eta, steps, false)
				got := apply(dm, v, c.Support, theta)
				want := append([]float64(nil), theta...)
				for s := 0; s < steps; s++ {
					floats.AddScaled(want, -test.eta, gradient(x, y, want))
				}
				if !floats.EqualApprox(got, want, 1e-10*(1+floats.Norm(want, 2))) {
					t.Errorf("case %d compact=%v s=%d: local GD map gives %v, want %v", i, compact, steps, got, want)
				}
			}
			dm, v := localTerm(&l, test.eta, 0, true)
			got := apply(dm, v, c.Support, theta)
			if want := proxSolve(x, y, theta, test.eta); !floats.EqualApprox(got, want, 1e-10*(1+floats.Norm(want, 2))) {
				t.Errorf("case %d compact=%v: local prox map gives %v, want %v", i, compact, got, want)
			}
		}
	}
}

// TestLocalForms checks which form a client takes and that the compact
// layout gives the same statistics, bit for bit, as the dense one.
func TestLocalForms(t *testing.T) {
	cfg := datasets.Linear{Clients: 3, Dim: 12, Samples: 20, ScarceClients: 1, ScarceSamples: 3, SubspaceDim: 5, Noise: 0.5}
	dense, _ := cfg.Generate(4)
	compact, _ := cfg.GenerateCompact(4)
	var ws model.LocalWork
	for i := range dense.Clients {
		var a, b model.Local
		cd, cc := dense.Clients[i], compact.Clients[i]
		a.Set(cd.X, cd.Y, cd.N, 12, cd.Support, false, &ws)
		b.Set(cc.X, cc.Y, cc.N, 12, cc.Support, true, &ws)
		if want := cd.N >= 5; a.IsGram() != want {
			t.Errorf("client %d (n=%d, r=5): Gram form %v, want %v", i, cd.N, a.IsGram(), want)
		}
		if !slices.Equal(a.Gram, b.Gram) || !slices.Equal(a.B, b.B) || a.IsGram() != b.IsGram() {
			t.Errorf("client %d: compact statistics differ from the dense ones", i)
		}
		if !a.IsGram() && (!slices.Equal(a.Spec.Q, b.Spec.Q) || !slices.Equal(a.Spec.Lambda, b.Spec.Lambda)) {
			t.Errorf("client %d: compact spectrum differs from the dense one", i)
		}
	}
}

// TestGDChainReuse checks that a chain extended level by level, reset and
// reused for another client, or shared by several step counts gives the
// same bits as a fresh chain: the round maps must not depend on what a
// cache held before.
func TestGDChainReuse(t *testing.T) {
	cfg := datasets.Linear{Clients: 2, Dim: 9, Samples: 30, Noise: 0.5}
	fed, _ := cfg.Generate(5)
	var ls [2]model.Local
	for i := range ls {
		c := fed.Clients[i]
		ls[i].Set(c.X, c.Y, c.N, 9, nil, false, nil)
	}
	r := 9
	fresh := func(l *model.Local, s int) []float64 {
		var c model.GDChain
		c.Extend(l, 0.2, model.Levels(s))
		dm, v := make([]float64, r*r), make([]float64, r)
		c.Combine(s, r, dm, v, make([]float64, r*r))
		return append(dm, v...)
	}
	var shared model.GDChain
	for _, s := range []int{5, 12, 3, 100} {
		for i := range ls {
			shared.Reset()
			shared.Extend(&ls[i], 0.2, 2)
			shared.Extend(&ls[i], 0.2, model.Levels(s))
			dm, v := make([]float64, r*r), make([]float64, r)
			shared.Combine(s, r, dm, v, make([]float64, r*r))
			if got := append(dm, v...); !slices.Equal(got, fresh(&ls[i], s)) {
				t.Errorf("s=%d client %d: a reused chain differs from a fresh one", s, i)
			}
		}
	}
}

// TestMinNormSolveTo checks the buffered solve against MinNormSolve and,
// for a singular system, against the pseudo-inverse solution from gonum's
// SVD of A.
func TestMinNormSolveTo(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	var ws model.SolveWork
	for _, rank := range []int{6, 3} {
		d := 6
		b := mat.NewDense(d, rank, randVec(rng, d*rank, 1))
		var a mat.Dense
		a.Mul(b, b.T())
		rhs := make([]float64, d)
		var bv mat.VecDense
		bv.MulVec(b, mat.NewVecDense(rank, randVec(rng, rank, 1)))
		copy(rhs, bv.RawVector().Data) // in the range of A: consistent
		got := make([]float64, d)
		model.MinNormSolveTo(got, a.RawMatrix().Data, rhs, d, &ws)
		if want := model.MinNormSolve(a.RawMatrix().Data, rhs, d); !slices.Equal(got, want) {
			t.Errorf("rank %d: MinNormSolveTo %v, MinNormSolve %v", rank, got, want)
		}
		var pinv mat.Dense
		var svd mat.SVD
		svd.Factorize(&a, mat.SVDFull)
		svd.SolveTo(&pinv, mat.NewDense(d, 1, rhs), rank)
		if want := mat.Col(nil, 0, &pinv); !floats.EqualApprox(got, want, 1e-8) {
			t.Errorf("rank %d: %v, want the pseudo-inverse solution %v", rank, got, want)
		}
		if math.IsNaN(floats.Sum(got)) {
			t.Errorf("rank %d: NaN", rank)
		}
	}
}
