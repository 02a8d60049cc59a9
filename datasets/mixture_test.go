package datasets_test

import (
	"math"
	"reflect"
	"runtime"
	"testing"

	"github.com/fedscope/fedscope/datasets"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/stat"
)

// smallMixture is the §8 geometry (d = 10, k = 3, R = 2, Δ ≥ 1.5, σ = 0.5)
// with fewer clients.
func smallMixture() datasets.Mixture {
	return datasets.Mixture{Clients: 400, Dim: 10, K: 3, Radius: 2, MinSep: 1.5, Noise: 0.5, MaxSamples: 300,
		Anchors: 6, AnchorPoints: 50, PoolClients: 3000}
}

// separationOf recomputes Δ = min_{j≠j'} ‖θ*_j − θ*_j'‖ with gonum.
func separationOf(ts [][]float64) float64 {
	d := math.Inf(1)
	for j := range ts {
		for l := j + 1; l < len(ts); l++ {
			d = math.Min(d, floats.Distance(ts[j], ts[l], 2))
		}
	}
	return d
}

// TestMixtureTruths checks docs/papers.md §8: θ*_j = R·u_j with ‖u_j‖ = 1, Δ ≥ 1.5
// (the rejection rule), and the reported Δ is the realised separation; with
// Delta set, the truths are rescaled about their centroid to exactly Δ.
func TestMixtureTruths(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		cfg := smallMixture()
		cfg.MinSep = 2.5 // binding often in d = 10 (typical Δ ≈ 2.5)
		ts, delta, err := cfg.Truths(seed)
		if err != nil {
			t.Fatal(err)
		}
		for j, th := range ts {
			if n := floats.Norm(th, 2); !scalar.EqualWithinAbsOrRel(n, 2, 1e-12, 1e-12) {
				t.Errorf("seed %d: ‖θ*_%d‖ = %v, want R = 2", seed, j, n)
			}
		}
		if got := separationOf(ts); delta < 2.5 || !scalar.EqualWithinAbsOrRel(delta, got, 1e-12, 1e-12) {
			t.Errorf("seed %d: Δ = %v, recomputed %v, rejection threshold 2.5", seed, delta, got)
		}
		cfg.Delta = 0.7
		scaled, d2, err := cfg.Truths(seed)
		if err != nil {
			t.Fatal(err)
		}
		if got := separationOf(scaled); !scalar.EqualWithinAbsOrRel(got, 0.7, 1e-12, 1e-12) || !scalar.EqualWithinAbsOrRel(d2, 0.7, 1e-12, 1e-12) {
			t.Errorf("seed %d: rescaled Δ = %v (reported %v), want 0.7", seed, got, d2)
		}
		for a := 0; a < cfg.Dim; a++ {
			before := (ts[0][a] + ts[1][a] + ts[2][a]) / 3
			after := (scaled[0][a] + scaled[1][a] + scaled[2][a]) / 3
			if !scalar.EqualWithinAbsOrRel(before, after, 1e-12, 1e-12) {
				t.Fatalf("seed %d: centroid moved in coordinate %d: %v → %v", seed, a, before, after)
			}
		}
	}
	impossible := smallMixture()
	impossible.Dim, impossible.K, impossible.MinSep = 2, 12, 3.9 // 12 points 3.9 apart on a circle of radius 2
	if _, _, err := impossible.Truths(1); err == nil {
		t.Error("an impossible separation was accepted")
	}
}

// TestHeavyTailedSize checks n = ⌊2/(1 − cU)^0.8⌋, c = 1 − (2/(cap+1))^1.25,
// at known points: U = 0 gives 2, U → 1 reaches the cap (300 or 1000: the
// cap binds and raising it raises the sizes), and cap = 79 is nearly §8's
// c = 0.99.
func TestHeavyTailedSize(t *testing.T) {
	c := func(capN int) float64 { return 1 - math.Pow(2/float64(capN+1), 1.25) }
	for _, test := range []struct {
		u    float64
		cap  int
		want int
	}{
		{0, 300, 2},
		{0.5, 300, int(math.Floor(2 / math.Pow(1-0.5*c(300), 0.8)))},
		{math.Nextafter(1, 0), 300, 300},
		{math.Nextafter(1, 0), 1000, 1000},
		{math.Nextafter(1, 0), 20, 20},
		{0.999, 1000, int(math.Floor(2 / math.Pow(1-0.999*c(1000), 0.8)))},
		{0.9, 300, int(math.Floor(2 / math.Pow(1-0.9*c(300), 0.8)))},
		{0.7, 2, 2},
	} {
		if got := datasets.HeavyTailedSize(test.u, test.cap); got != test.want {
			t.Errorf("HeavyTailedSize(%v, %d) = %d, want %d", test.u, test.cap, got, test.want)
		}
	}
	if got := c(79); math.Abs(got-0.99) > 2e-3 {
		t.Errorf("c at cap 79 = %v, want ≈ 0.99 (docs/papers.md §8)", got)
	}
}

// TestHeavyTailedSizeLaw checks the size law on a grid of U values (the
// quantile function, so no sampling error beyond the grid's 1e-5): the
// fraction with n ≥ x matches the truncated Pareto tail
// ((2/x)^1.25 − (2/(cap+1))^1.25)/(1 − (2/(cap+1))^1.25), and
// max_samples = 1000 gives larger clients than 300 (it used to change
// nothing).
func TestHeavyTailedSizeLaw(t *testing.T) {
	const grid = 100_000
	for _, capN := range []int{300, 1000} {
		sizes := make([]int, grid)
		for g := range sizes {
			sizes[g] = datasets.HeavyTailedSize((float64(g)+0.5)/grid, capN)
		}
		for _, x := range []int{2, 3, 5, 10, 30, 79, 100, 200, 300} {
			n := 0
			for _, s := range sizes {
				if s >= x {
					n++
				}
			}
			tail := math.Pow(2/float64(capN+1), 1.25)
			want := (math.Pow(2/float64(x), 1.25) - tail) / (1 - tail)
			if got := float64(n) / grid; math.Abs(got-want) > 2.0/grid {
				t.Errorf("cap %d: P(n ≥ %d) = %v, want %v", capN, x, got, want)
			}
		}
	}
	var big300, big1000 int
	for g := 0; g < grid; g++ {
		u := (float64(g) + 0.5) / grid
		if datasets.HeavyTailedSize(u, 300) > 79 {
			big300++
		}
		if datasets.HeavyTailedSize(u, 1000) > 300 {
			big1000++
		}
	}
	if big300 == 0 || big1000 == 0 {
		t.Errorf("sizes above 79 at cap 300: %d; above 300 at cap 1000: %d; want both > 0", big300, big1000)
	}
}

// TestMixtureClients checks the generated population against its model:
// label frequencies follow p (within 4 standard errors), the residuals
// y − Xθ*_z have standard deviation σ, rows of cluster j have variance c_j,
// sizes are ≥ 2, and LabelsAndSizes agrees with Generate.
func TestMixtureClients(t *testing.T) {
	cfg := smallMixture()
	cfg.Clients, cfg.Weights, cfg.CovRatio = 3000, []float64{1, 2, 5}, 4
	fed, err := cfg.Generate(3)
	if err != nil {
		t.Fatal(err)
	}
	p := []float64{1.0 / 8, 2.0 / 8, 5.0 / 8}
	count := make([]float64, 3)
	var resid []float64
	sq := make([]float64, 3)
	rows := make([]float64, 3)
	for i, cl := range fed.Clients {
		z := fed.Labels[i]
		count[z]++
		if cl.N < 2 || cl.N > cfg.MaxSamples {
			t.Fatalf("client %d has %d points", i, cl.N)
		}
		if &cl.Truth[0] != &fed.Truths[z][0] {
			t.Fatalf("client %d: Truth is not θ*_%d", i, z)
		}
		for j := 0; j < cl.N; j++ {
			x := cl.X[j*cfg.Dim : (j+1)*cfg.Dim]
			resid = append(resid, cl.Y[j]-floats.Dot(x, fed.Truths[z]))
			sq[z] += floats.Dot(x, x)
			rows[z] += float64(cfg.Dim)
		}
	}
	for j := range p {
		se := math.Sqrt(p[j] * (1 - p[j]) / 3000)
		if got := count[j] / 3000; math.Abs(got-p[j]) > 4*se {
			t.Errorf("cluster %d: frequency %.3f, want p = %.3f ± %.3f", j, got, p[j], 4*se)
		}
		want := math.Pow(4, float64(j)/2) // c_j = ratio^{j/(k−1)}
		if got := sq[j] / rows[j]; math.Abs(got-want) > 0.05*want {
			t.Errorf("cluster %d: feature variance %.3f, want c_j = %.3f", j, got, want)
		}
	}
	if sd := stat.StdDev(resid, nil); math.Abs(sd-0.5) > 0.02 {
		t.Errorf("residual standard deviation %.4f, want σ = 0.5", sd)
	}
	labels, sizes := cfg.LabelsAndSizes(3)
	for i := range labels {
		if labels[i] != fed.Labels[i] || sizes[i] != fed.Clients[i].N {
			t.Fatalf("client %d: LabelsAndSizes gives (%d, %d), Generate (%d, %d)", i, labels[i], sizes[i], fed.Labels[i], fed.Clients[i].N)
		}
	}
	if len(fed.Anchors) != 6 || fed.Anchors[0].N != 50 || fed.Pool.Count != 3000 {
		t.Errorf("anchors %d × %d points, pool %d", len(fed.Anchors), fed.Anchors[0].N, fed.Pool.Count)
	}
	// Pool pairs come from one cluster each: both points fit θ*_z.
	for c := 0; c < 100; c++ {
		z := fed.Pool.Labels[c]
		for _, pt := range []struct {
			x []float64
			y float64
		}{
			{fed.Pool.X1[c*10 : (c+1)*10], fed.Pool.Y1[c]}, {fed.Pool.X2[c*10 : (c+1)*10], fed.Pool.Y2[c]},
		} {
			if r := pt.y - floats.Dot(pt.x, fed.Truths[z]); math.Abs(r) > 6*0.5 {
				t.Fatalf("pool client %d: residual %v against its own truth", c, r)
			}
		}
	}
}

// TestMixtureDeterministic checks that the population does not depend on the
// number of CPUs and that the seed reaches the data.
func TestMixtureDeterministic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	cfg := smallMixture()
	runtime.GOMAXPROCS(1)
	a, _ := cfg.Generate(5)
	runtime.GOMAXPROCS(2)
	b, _ := cfg.Generate(5)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different populations under GOMAXPROCS 1 and 2")
	}
	c, _ := cfg.Generate(6)
	if reflect.DeepEqual(a.Labels, c.Labels) && reflect.DeepEqual(a.Truths, c.Truths) {
		t.Fatal("seeds 5 and 6 give the same population")
	}
}

// TestMixtureValidate checks that bad configurations are refused.
func TestMixtureValidate(t *testing.T) {
	for i, mutate := range []func(*datasets.Mixture){
		func(c *datasets.Mixture) { c.K = 1 },
		func(c *datasets.Mixture) { c.K = datasets.MaxClusters + 1 },
		func(c *datasets.Mixture) { c.Weights = []float64{1, 2} },
		func(c *datasets.Mixture) { c.Weights = []float64{1, 0, 1} },
		func(c *datasets.Mixture) { c.Noise = math.NaN() },
		func(c *datasets.Mixture) { c.CovRatio = 0.5 },
		func(c *datasets.Mixture) { c.MaxSamples = 1 },
		func(c *datasets.Mixture) { c.Delta = -1 },
		func(c *datasets.Mixture) { c.MinSep = 5 }, // > 2R
		func(c *datasets.Mixture) { c.PoolClients = datasets.MaxEntries },
	} {
		cfg := smallMixture()
		mutate(&cfg)
		if err := cfg.Validate(); err == nil {
			t.Errorf("case %d: %+v accepted", i, cfg)
		}
	}
	if err := smallMixture().Validate(); err != nil {
		t.Errorf("valid configuration refused: %v", err)
	}
}
