package datasets_test

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/fedscope/fedscope/datasets"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"
)

// maxPairwise recomputes Γ = max_{i,j} ‖θ_i* − θ_j*‖ from the clients' truths
// (docs/papers.md §1.7, Cor. 1) with gonum's floats.Distance.
func maxPairwise(fed *datasets.Federation) float64 {
	var g float64
	for i := range fed.Clients {
		for j := i + 1; j < len(fed.Clients); j++ {
			g = math.Max(g, floats.Distance(fed.Clients[i].Truth, fed.Clients[j].Truth, 2))
		}
	}
	return g
}

func generate(t testing.TB, c datasets.Linear, seed uint64) *datasets.Federation {
	t.Helper()
	fed, err := c.Generate(seed)
	if err != nil {
		t.Fatalf("Generate(%+v): %v", c, err)
	}
	return fed
}

// TestRadiusScheme checks θ_i* = θ* + Γu_i with ‖u_i‖ = 1 (docs/papers.md §8): every
// client sits at distance exactly Γ from the centre, the reported realised Γ
// is the max pairwise distance, and in high dimension, where independent
// directions are nearly orthogonal, that distance is about √2·Γ.
func TestRadiusScheme(t *testing.T) {
	const tol = 1e-12
	for i, test := range []struct {
		cfg  datasets.Linear
		sqrt bool // also check RealisedGamma ≈ √2·Γ within 15 %
	}{
		{cfg: datasets.Linear{Clients: 5, Dim: 8, Samples: 10, Noise: 0.5, Gamma: 0.3}},
		{cfg: datasets.Linear{Clients: 5, Dim: 8, Samples: 10, Noise: 0.5, Gamma: 7, ScarceClients: 2, ScarceSamples: 3}},
		{cfg: datasets.Linear{Clients: 5, Dim: 12, Samples: 10, Noise: 0, Gamma: 1, SubspaceDim: 3}},
		{cfg: datasets.Linear{Clients: 20, Dim: 200, Samples: 2, Noise: 0.5, Gamma: 2.5}, sqrt: true},
	} {
		fed := generate(t, test.cfg, 11)
		for j, cl := range fed.Clients {
			got := floats.Distance(cl.Truth, fed.Truth, 2)
			if !scalar.EqualWithinAbsOrRel(got, test.cfg.Gamma, tol, tol) {
				t.Errorf("case %d client %d: ‖θ_i* − θ*‖ = %v, want Γ = %v", i, j, got, test.cfg.Gamma)
			}
		}
		want := maxPairwise(fed)
		if !scalar.EqualWithinAbsOrRel(fed.RealisedGamma, want, tol, tol) {
			t.Errorf("case %d: RealisedGamma = %v, want max pairwise distance %v", i, fed.RealisedGamma, want)
		}
		if !fed.Heterogeneous() {
			t.Errorf("case %d: Heterogeneous() = false with Γ = %v", i, test.cfg.Gamma)
		}
		if test.sqrt {
			ratio := fed.RealisedGamma / (math.Sqrt2 * test.cfg.Gamma)
			if math.Abs(ratio-1) > 0.15 {
				t.Errorf("case %d: RealisedGamma/(√2Γ) = %v, want within 15 %% of 1", i, ratio)
			}
		}
	}
}

// TestExactScheme checks that the exact scheme hits the prescribed diameter.
func TestExactScheme(t *testing.T) {
	const tol = 1e-12
	for i, test := range []datasets.Linear{
		{Clients: 2, Dim: 1, Samples: 3, Noise: 0.1, Gamma: 0.01, Scheme: datasets.GammaExact},
		{Clients: 5, Dim: 8, Samples: 10, Noise: 0.5, Gamma: 3, Scheme: datasets.GammaExact},
		{Clients: 20, Dim: 50, Samples: 4, Noise: 0.5, Gamma: 30, Scheme: datasets.GammaExact, ScarceClients: 10, ScarceSamples: 2},
	} {
		for _, seed := range []uint64{1, 2, 3} {
			fed := generate(t, test, seed)
			if !scalar.EqualWithinAbsOrRel(fed.RealisedGamma, test.Gamma, tol, tol) {
				t.Errorf("case %d seed %d: RealisedGamma = %v, want Γ = %v", i, seed, fed.RealisedGamma, test.Gamma)
			}
			if got := maxPairwise(fed); !scalar.EqualWithinAbsOrRel(got, test.Gamma, tol, tol) {
				t.Errorf("case %d seed %d: max pairwise distance = %v, want Γ = %v", i, seed, got, test.Gamma)
			}
		}
	}
}

// TestHomogeneous checks that Γ = 0 gives one common truth under both
// schemes, as does the exact scheme with a single client, whose realised Γ is
// 0 by definition whatever Γ was asked for.
func TestHomogeneous(t *testing.T) {
	for _, cfg := range []datasets.Linear{
		{Clients: 6, Dim: 9, Samples: 12, Noise: 0.5, Scheme: datasets.GammaRadius},
		{Clients: 6, Dim: 9, Samples: 12, Noise: 0.5, Scheme: datasets.GammaExact},
		{Clients: 1, Dim: 9, Samples: 12, Noise: 0.5, Scheme: datasets.GammaExact, Gamma: 0.01},
	} {
		scheme := cfg.Scheme
		fed := generate(t, cfg, 5)
		for j, cl := range fed.Clients {
			if !slices.Equal(cl.Truth, fed.Truth) {
				t.Errorf("%v: client %d truth differs from θ*", scheme, j)
			}
		}
		if fed.Heterogeneous() || fed.RealisedGamma != 0 {
			t.Errorf("%v: Heterogeneous() = %v, RealisedGamma = %v, want false and 0",
				scheme, fed.Heterogeneous(), fed.RealisedGamma)
		}
	}
}

// TestNoiseFree checks the response model y_i = X_i θ_i* exactly when σ = 0,
// and that with σ > 0 the residuals y_i − X_i θ_i* have standard deviation σ.
func TestNoiseFree(t *testing.T) {
	for i, test := range []struct {
		cfg     datasets.Linear
		relStd  float64 // relative tolerance on the residual standard deviation
		wantStd float64
	}{
		{cfg: datasets.Linear{Clients: 4, Dim: 7, Samples: 9, Gamma: 1.5}},
		{cfg: datasets.Linear{Clients: 3, Dim: 10, Samples: 5, Gamma: 0.2, Scheme: datasets.GammaExact, SubspaceDim: 4}},
		// 8000 residuals: the sample standard deviation is within 3 % of σ
		// with overwhelming probability (its relative s.d. is 1/√(2·8000) ≈ 0.8 %).
		{cfg: datasets.Linear{Clients: 4, Dim: 5, Samples: 2000, Noise: 0.7}, relStd: 0.03, wantStd: 0.7},
	} {
		fed := generate(t, test.cfg, 21)
		var ss float64
		var cnt int
		for j, cl := range fed.Clients {
			for k := 0; k < cl.N; k++ {
				res := cl.Y[k] - floats.Dot(cl.X[k*fed.Dim:(k+1)*fed.Dim], cl.Truth)
				ss += res * res
				cnt++
				if test.wantStd == 0 && !scalar.EqualWithinAbsOrRel(res, 0, 1e-12, 1e-12) {
					t.Fatalf("case %d client %d row %d: residual %v with σ = 0", i, j, k, res)
				}
			}
		}
		if test.wantStd > 0 {
			std := math.Sqrt(ss / float64(cnt))
			if !scalar.EqualWithinRel(std, test.wantStd, test.relStd) {
				t.Errorf("case %d: residual s.d. = %v, want σ = %v within %v", i, std, test.wantStd, test.relStd)
			}
		}
	}
}

// TestSubspace checks the covariate-subspace design of E000-4 (docs/papers.md
// §1.9): rows of X_i are supported on the client's coordinate set E, |E| = r,
// and scaled by √(d/r) so that E‖x‖² = d for every r.
func TestSubspace(t *testing.T) {
	for i, test := range []struct {
		cfg    datasets.Linear
		relTol float64 // on the mean squared row norm
	}{
		// 10 000 rows: ‖x‖²·r/d ~ χ²_r, so the mean has relative s.d.
		// √(2/(r·rows)) = 1 % for r = 2; 4 % is four standard deviations.
		{cfg: datasets.Linear{Clients: 10, Dim: 10, Samples: 1000, Noise: 0.5, SubspaceDim: 2}, relTol: 0.04},
		{cfg: datasets.Linear{Clients: 10, Dim: 10, Samples: 1000, Noise: 0.5, SubspaceDim: 7}, relTol: 0.03},
		{cfg: datasets.Linear{Clients: 8, Dim: 30, Samples: 1000, Noise: 0, SubspaceDim: 1, ScarceClients: 3, ScarceSamples: 50}, relTol: 0.06},
	} {
		fed := generate(t, test.cfg, 3)
		d, r := test.cfg.Dim, test.cfg.SubspaceDim
		var sum float64
		var rows int
		for j, cl := range fed.Clients {
			if len(cl.Support) != r || !slices.IsSorted(cl.Support) || len(slices.Compact(slices.Clone(cl.Support))) != r ||
				cl.Support[0] < 0 || cl.Support[r-1] >= d {
				t.Fatalf("case %d client %d: support %v is not %d sorted distinct indices in [0,%d)", i, j, cl.Support, r, d)
			}
			in := make([]bool, d)
			for _, k := range cl.Support {
				in[k] = true
			}
			for row := 0; row < cl.N; row++ {
				x := cl.X[row*d : (row+1)*d]
				for k, v := range x {
					if !in[k] && v != 0 {
						t.Fatalf("case %d client %d row %d: x[%d] = %v outside support %v", i, j, row, k, v, cl.Support)
					}
				}
				sum += floats.Dot(x, x)
				rows++
			}
		}
		if mean := sum / float64(rows); !scalar.EqualWithinRel(mean, float64(d), test.relTol) {
			t.Errorf("case %d: mean ‖x‖² = %v, want d = %d within %v", i, mean, d, test.relTol)
		}
	}
	// r = d (explicitly or by the zero value) is the full design: no support.
	for _, r := range []int{0, 6} {
		fed := generate(t, datasets.Linear{Clients: 2, Dim: 6, Samples: 4, SubspaceDim: r}, 1)
		for j, cl := range fed.Clients {
			if cl.Support != nil {
				t.Errorf("SubspaceDim %d client %d: Support = %v, want nil", r, j, cl.Support)
			}
		}
	}
}

// TestSizes checks n_i, the shapes of X_i and y_i, and N = Σ n_i.
func TestSizes(t *testing.T) {
	for i, test := range []struct {
		cfg  datasets.Linear
		want []int
	}{
		{cfg: datasets.Linear{Clients: 3, Dim: 4, Samples: 7}, want: []int{7, 7, 7}},
		{cfg: datasets.Linear{Clients: 5, Dim: 4, Samples: 50, ScarceClients: 2, ScarceSamples: 3}, want: []int{3, 3, 50, 50, 50}},
		{cfg: datasets.Linear{Clients: 2, Dim: 4, Samples: 5, ScarceClients: 2, ScarceSamples: 1}, want: []int{1, 1}},
		{cfg: datasets.Linear{Clients: 2, Dim: 4, Samples: 5, ScarceClients: 0, ScarceSamples: 100}, want: []int{5, 5}},
	} {
		fed := generate(t, test.cfg, 9)
		var total int
		got := make([]int, len(fed.Clients))
		for j, cl := range fed.Clients {
			got[j] = cl.N
			total += test.want[j]
			if len(cl.X) != cl.N*test.cfg.Dim || len(cl.Y) != cl.N || len(cl.Truth) != test.cfg.Dim {
				t.Errorf("case %d client %d: len X, Y, Truth = %d, %d, %d for n = %d, d = %d",
					i, j, len(cl.X), len(cl.Y), len(cl.Truth), cl.N, test.cfg.Dim)
			}
			if s := test.cfg.SamplesOf(j); s != test.want[j] {
				t.Errorf("case %d: SamplesOf(%d) = %d, want %d", i, j, s, test.want[j])
			}
		}
		if !slices.Equal(got, test.want) {
			t.Errorf("case %d: sizes %v, want %v", i, got, test.want)
		}
		if fed.N() != total || test.cfg.TotalSamples() != total {
			t.Errorf("case %d: N() = %d, TotalSamples() = %d, want %d", i, fed.N(), test.cfg.TotalSamples(), total)
		}
		if fed.Dim != test.cfg.Dim || fed.Noise != test.cfg.Noise || len(fed.Truth) != test.cfg.Dim {
			t.Errorf("case %d: Dim, Noise, len(Truth) = %d, %v, %d", i, fed.Dim, fed.Noise, len(fed.Truth))
		}
	}
}

// TestSeed checks reproducibility: the same seed gives the same federation,
// another seed a different one, and client i's data come from its own
// stream, so they do not depend on how many clients follow it (doc.go).
func TestSeed(t *testing.T) {
	for i, cfg := range []datasets.Linear{
		{Clients: 4, Dim: 6, Samples: 8, Noise: 0.5},
		{Clients: 4, Dim: 6, Samples: 8, Noise: 0.5, Gamma: 1, ScarceClients: 1, ScarceSamples: 2},
		{Clients: 4, Dim: 6, Samples: 8, Noise: 0.5, Gamma: 1, Scheme: datasets.GammaExact, SubspaceDim: 2},
	} {
		a, b, c := generate(t, cfg, 42), generate(t, cfg, 42), generate(t, cfg, 43)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("case %d: same seed gave different federations", i)
		}
		if slices.Equal(a.Truth, c.Truth) || slices.Equal(a.Clients[0].X, c.Clients[0].X) ||
			slices.Equal(a.Clients[3].Y, c.Clients[3].Y) {
			t.Errorf("case %d: seeds 42 and 43 share data", i)
		}
		more := cfg
		more.Clients = 7
		m := generate(t, more, 42)
		for j := range a.Clients {
			if !slices.Equal(a.Clients[j].X, m.Clients[j].X) || !slices.Equal(a.Clients[j].Support, m.Clients[j].Support) {
				t.Errorf("case %d client %d: design depends on the number of clients", i, j)
			}
		}
	}
}

// TestValidate checks that bad configurations are rejected, by Generate too
// (wrapping ErrInvalid), and that boundary values are accepted.
func TestValidate(t *testing.T) {
	ok := datasets.Linear{Clients: 3, Dim: 4, Samples: 5, Noise: 0.5}
	with := func(f func(*datasets.Linear)) datasets.Linear {
		c := ok
		f(&c)
		return c
	}
	for i, test := range []struct {
		cfg   datasets.Linear
		valid bool
	}{
		{cfg: ok, valid: true},
		{cfg: with(func(c *datasets.Linear) { c.Noise = 0; c.Gamma = 0 }), valid: true},
		{cfg: with(func(c *datasets.Linear) { c.ScarceClients = 3; c.ScarceSamples = 1 }), valid: true},
		{cfg: with(func(c *datasets.Linear) { c.SubspaceDim = 4 }), valid: true},
		{cfg: with(func(c *datasets.Linear) { c.SubspaceDim = 1 }), valid: true},
		{cfg: with(func(c *datasets.Linear) { c.Clients = 1; c.Dim = 1; c.Samples = 1 }), valid: true},
		{cfg: with(func(c *datasets.Linear) { c.Clients = 0 })},
		{cfg: with(func(c *datasets.Linear) { c.Clients = -1 })},
		{cfg: with(func(c *datasets.Linear) { c.Dim = 0 })},
		{cfg: with(func(c *datasets.Linear) { c.Samples = 0 })},
		{cfg: with(func(c *datasets.Linear) { c.ScarceClients = -1 })},
		{cfg: with(func(c *datasets.Linear) { c.ScarceClients = 4; c.ScarceSamples = 1 })},
		{cfg: with(func(c *datasets.Linear) { c.ScarceClients = 1 })},
		{cfg: with(func(c *datasets.Linear) { c.ScarceClients = 1; c.ScarceSamples = -2 })},
		{cfg: with(func(c *datasets.Linear) { c.Noise = -0.1 })},
		{cfg: with(func(c *datasets.Linear) { c.Noise = math.NaN() })},
		{cfg: with(func(c *datasets.Linear) { c.Noise = math.Inf(1) })},
		{cfg: with(func(c *datasets.Linear) { c.Gamma = -1 })},
		{cfg: with(func(c *datasets.Linear) { c.Gamma = math.NaN() })},
		{cfg: with(func(c *datasets.Linear) { c.Gamma = math.Inf(1) })},
		{cfg: with(func(c *datasets.Linear) { c.SubspaceDim = -1 })},
		{cfg: with(func(c *datasets.Linear) { c.SubspaceDim = 5 })},
		{cfg: with(func(c *datasets.Linear) { c.Clients = 1000; c.Samples = 1000; c.Dim = 50 }), valid: true},
		{cfg: with(func(c *datasets.Linear) { c.Clients = 1000; c.Samples = 1000; c.Dim = 51 })},
	} {
		err := test.cfg.Validate()
		if (err == nil) != test.valid {
			t.Errorf("case %d %+v: Validate() = %v, want valid = %v", i, test.cfg, err, test.valid)
		}
		if test.valid {
			continue
		}
		fed, gerr := test.cfg.Generate(1)
		if fed != nil || !errors.Is(gerr, datasets.ErrInvalid) {
			t.Errorf("case %d: Generate = %v, %v; want nil and an error wrapping ErrInvalid", i, fed, gerr)
		}
	}
}

// BenchmarkGenerate draws the paradox preset (E000-1, docs/papers.md §1.9):
// M = 25, d = 100, n_i = 500.
func BenchmarkGenerate(b *testing.B) {
	cfg := datasets.Linear{Clients: 25, Dim: 100, Samples: 500, Noise: 0.5}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := cfg.Generate(uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGenerateCompact checks that the compact form holds exactly the
// support columns of the dense design, the same responses and truths, and
// that clients without a covariate subspace are untouched.
func TestGenerateCompact(t *testing.T) {
	for i, cfg := range []datasets.Linear{
		{Clients: 4, Dim: 12, Samples: 30, ScarceClients: 2, ScarceSamples: 3, SubspaceDim: 5, Noise: 0.5, Gamma: 1},
		{Clients: 3, Dim: 6, Samples: 8, Noise: 0.5},
	} {
		dense := generate(t, cfg, 7)
		compact, err := cfg.GenerateCompact(7)
		if err != nil {
			t.Fatal(err)
		}
		if !compact.Compact || dense.Compact {
			t.Errorf("case %d: Compact = %v (compact) and %v (dense)", i, compact.Compact, dense.Compact)
		}
		d := cfg.Dim
		for j := range dense.Clients {
			cd, cc := dense.Clients[j], compact.Clients[j]
			if !slices.Equal(cd.Y, cc.Y) || !slices.Equal(cd.Truth, cc.Truth) || !slices.Equal(cd.Support, cc.Support) {
				t.Errorf("case %d client %d: responses, truth or support differ", i, j)
			}
			r := cc.Cols(compact)
			if len(cc.X) != cd.N*r {
				t.Fatalf("case %d client %d: compact X has %d numbers, want %d×%d", i, j, len(cc.X), cd.N, r)
			}
			for row := 0; row < cd.N; row++ {
				for a := 0; a < r; a++ {
					k := a
					if cd.Support != nil {
						k = cd.Support[a]
					}
					if cc.X[row*r+a] != cd.X[row*d+k] {
						t.Fatalf("case %d client %d: x[%d][%d] = %v compact, %v dense", i, j, row, k, cc.X[row*r+a], cd.X[row*d+k])
					}
				}
			}
		}
	}
}

// TestGenerateInto checks that drawing into a federation that held other
// data (bigger, smaller, dense, compact, with and without a subspace and Γ)
// gives the same federation as a fresh draw.
func TestGenerateInto(t *testing.T) {
	var fed datasets.Federation
	for i, step := range []struct {
		cfg     datasets.Linear
		compact bool
	}{
		{datasets.Linear{Clients: 5, Dim: 10, Samples: 40, SubspaceDim: 3, Gamma: 2, Noise: 0.5}, true},
		{datasets.Linear{Clients: 3, Dim: 10, Samples: 20, ScarceClients: 1, ScarceSamples: 4, Noise: 0.5}, false},
		{datasets.Linear{Clients: 6, Dim: 8, Samples: 10, SubspaceDim: 5, Noise: 0.1, Gamma: 1, Scheme: datasets.GammaExact}, false},
		{datasets.Linear{Clients: 2, Dim: 8, Samples: 50, SubspaceDim: 7, Noise: 0.1}, true},
	} {
		if err := step.cfg.GenerateInto(&fed, uint64(i+3), step.compact); err != nil {
			t.Fatal(err)
		}
		want, err := step.cfg.GenerateCompact(uint64(i + 3))
		if !step.compact {
			want, err = step.cfg.Generate(uint64(i + 3))
		}
		if err != nil {
			t.Fatal(err)
		}
		if fed.Dim != want.Dim || fed.RealisedGamma != want.RealisedGamma || !slices.Equal(fed.Truth, want.Truth) ||
			len(fed.Clients) != len(want.Clients) || fed.Compact != want.Compact {
			t.Fatalf("step %d: federation %+v, want %+v", i, fed, want)
		}
		for j := range want.Clients {
			g, w := fed.Clients[j], want.Clients[j]
			if g.N != w.N || !slices.Equal(g.X, w.X) || !slices.Equal(g.Y, w.Y) || !slices.Equal(g.Truth, w.Truth) ||
				!slices.Equal(g.Support, w.Support) {
				t.Errorf("step %d client %d: differs from a fresh draw", i, j)
			}
		}
	}
}
