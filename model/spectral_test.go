package model_test

import (
	"math/rand/v2"
	"testing"

	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/floats"
)

// TestSpectralMaps checks the eigenbasis forms of the local updates against
// independent computations on the raw design: s explicit gradient steps
// (PAPERS.md §1.3) and an LU solve of the proximal system (§1.4). The cases
// cover a step size beyond the stable limit (ηλ > 1, where (1 − ηλ)^s
// alternates in sign) and a singular Hessian (covariate subspace, λ = 0).
func TestSpectralMaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for i, test := range []struct {
		cfg   datasets.Linear
		eta   float64
		steps int
	}{
		{cfg: datasets.Linear{Clients: 1, Dim: 8, Samples: 40, Noise: 0.5}, eta: 0.1, steps: 5},
		{cfg: datasets.Linear{Clients: 1, Dim: 12, Samples: 30, Noise: 0.5}, eta: 0.3, steps: 10},
		{cfg: datasets.Linear{Clients: 1, Dim: 8, Samples: 40, Noise: 0.5}, eta: 1.5, steps: 3},
		{cfg: datasets.Linear{Clients: 1, Dim: 10, Samples: 50, Noise: 0.5, SubspaceDim: 3}, eta: 0.05, steps: 20},
		{cfg: datasets.Linear{Clients: 1, Dim: 6, Samples: 6, Noise: 0}, eta: 1e-9, steps: 2},
	} {
		p := newProblem(t, test.cfg, uint64(i+1))
		sp := p.Spectra()[0]
		if sp == nil {
			t.Fatalf("case %d: no spectrum for a Gram client", i)
		}
		x, y := design(p.Fed.Clients[0], test.cfg.Dim)
		theta := randVec(rng, test.cfg.Dim, 1)
		ws := model.NewWorkspace(p, 0)

		want := append([]float64(nil), theta...)
		for s := 0; s < test.steps; s++ {
			floats.AddScaled(want, -test.eta, gradient(x, y, want))
		}
		got := append([]float64(nil), theta...)
		sp.Apply(got, sp.GDMap(test.eta, test.steps), ws)
		if !floats.EqualApprox(got, want, 1e-11*(1+floats.Norm(want, 2))) {
			t.Errorf("case %d: GDMap gives %v, want %v", i, got, want)
		}

		want = proxSolve(x, y, theta, test.eta)
		got = append([]float64(nil), theta...)
		sp.Apply(got, sp.ProxMap(test.eta), ws)
		if !floats.EqualApprox(got, want, 1e-12) {
			t.Errorf("case %d: ProxMap gives %v, want %v", i, got, want)
		}
		// (u − θ)/η amplifies the rounding of u by 1/η.
		if r := proxResidual(x, y, got, theta, test.eta); !zeroWithin(r, 1e-9+1e-14/test.eta) {
			t.Errorf("case %d: prox optimality residual %v", i, r)
		}
	}
}

// TestSpectralApplyAllocs: the per-round eigenbasis update allocates nothing.
func TestSpectralApplyAllocs(t *testing.T) {
	p := newProblem(t, datasets.Linear{Clients: 1, Dim: 20, Samples: 60, Noise: 0.5}, 1)
	sp := p.Spectra()[0]
	m := sp.GDMap(0.1, 5)
	u := make([]float64, 20)
	ws := model.NewWorkspace(p, 0)
	if a := testing.AllocsPerRun(20, func() { sp.Apply(u, m, ws) }); a != 0 {
		t.Errorf("Spectrum.Apply: %v allocations per call, want 0", a)
	}
}
