package datasets

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// checkExactCover fails unless the parts hold every index 0..n−1 exactly once.
func checkExactCover(t *testing.T, parts [][]int, n int) {
	t.Helper()
	seen := make([]int, n)
	for _, p := range parts {
		for _, i := range p {
			if i < 0 || i >= n {
				t.Fatalf("index %d outside 0..%d", i, n-1)
			}
			seen[i]++
		}
	}
	for i, c := range seen {
		if c != 1 {
			t.Fatalf("sample %d assigned %d times", i, c)
		}
	}
}

func skewedLabels(n, classes int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, 99))
	out := make([]int, n)
	for i := range out {
		out[i] = rng.IntN(classes)
	}
	return out
}

func TestDirichletLabels(t *testing.T) {
	for _, test := range []struct {
		n, classes, m int
		c             float64
		minSize       int
	}{
		{1000, 10, 10, 0.5, 10},
		{2000, 3, 10, 1, 10},
		{500, 5, 20, 1, 5},
		{300, 2, 3, 100, 50},
	} {
		labels := skewedLabels(test.n, test.classes, 1)
		parts, err := DirichletLabels(labels, test.classes, test.m, test.c, test.minSize, 7)
		if err != nil {
			t.Fatalf("%+v: %v", test, err)
		}
		if len(parts) != test.m {
			t.Fatalf("%+v: %d parts", test, len(parts))
		}
		checkExactCover(t, parts, test.n)
		for j, p := range parts {
			if len(p) < test.minSize {
				t.Errorf("%+v: client %d holds %d < min_size", test, j, len(p))
			}
		}
		again, _ := DirichletLabels(labels, test.classes, test.m, test.c, test.minSize, 7)
		if !reflect.DeepEqual(parts, again) {
			t.Errorf("%+v: same seed, different partition", test)
		}
		other, _ := DirichletLabels(labels, test.classes, test.m, test.c, test.minSize, 8)
		if reflect.DeepEqual(parts, other) {
			t.Errorf("%+v: seeds 7 and 8 give the same partition", test)
		}
	}
}

// TestDirichletSkew checks that c acts as the concentration: with small c a
// client's label histogram is far from the global one, with large c close
// (total-variation distance averaged over clients).
func TestDirichletSkew(t *testing.T) {
	labels := skewedLabels(5000, 10, 2)
	tv := func(c float64) float64 {
		parts, err := DirichletLabels(labels, 10, 10, c, 10, 3)
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for _, p := range parts {
			h := make([]float64, 10)
			for _, i := range p {
				h[labels[i]]++
			}
			var d float64
			for k := range h {
				d += math.Abs(h[k]/float64(len(p)) - 0.1)
			}
			sum += d / 2
		}
		return sum / 10
	}
	if lo, hi := tv(0.1), tv(1000); !(lo > 0.4 && hi < 0.05) {
		t.Errorf("mean TV distance: c=0.1 → %.3f (want > 0.4), c=1000 → %.3f (want < 0.05)", lo, hi)
	}
}

func TestDirichletLabelsErrors(t *testing.T) {
	labels := skewedLabels(100, 4, 1)
	for _, test := range []struct {
		m       int
		c       float64
		minSize int
	}{{0, 1, 1}, {5, 0, 1}, {5, math.Inf(1), 1}, {5, 1, 30}, {50, 0.01, 2}} {
		if _, err := DirichletLabels(labels, 4, test.m, test.c, test.minSize, 1); err == nil {
			t.Errorf("m=%d c=%v min=%d: no error", test.m, test.c, test.minSize)
		}
	}
	if _, err := DirichletLabels([]int{0, 5}, 2, 1, 1, 0, 1); err == nil {
		t.Error("label outside the classes: no error")
	}
}

func TestDirichletSizes(t *testing.T) {
	for _, c := range []float64{0.1, 1, 100} {
		sizes, err := DirichletSizes(1000, 20, c, 10, 4)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0
		for _, s := range sizes {
			if s < 10 {
				t.Errorf("c=%v: size %d below the floor 10", c, s)
			}
			sum += s
		}
		if sum != 1000 {
			t.Errorf("c=%v: sizes sum to %d, want 1000", c, sum)
		}
		checkExactCover(t, BySizes(1000, sizes, 4), 1000)
	}
	if _, err := DirichletSizes(100, 20, 1, 10, 1); err == nil {
		t.Error("20 clients × floor 10 > 100 samples: no error")
	}
}

func TestIID(t *testing.T) {
	parts, err := IID(103, 10, 5)
	if err != nil {
		t.Fatal(err)
	}
	checkExactCover(t, parts, 103)
	for j, p := range parts {
		if len(p) != 10 && len(p) != 11 {
			t.Errorf("client %d holds %d", j, len(p))
		}
	}
	if _, err := IID(5, 10, 1); err == nil {
		t.Error("5 samples to 10 clients: no error")
	}
}

// TestNewtonGenerator checks the FedNewton data against the distributions
// of §4.6/§8: with α = β = 0, the inputs are N(0, I) and the responses have
// mean −E|1ᵀx| = −√(2d/π) and variance (1 − 2/π)d + NoiseVar; with β > 0
// the model heterogeneity is positive, with β = 0 it is exactly 0.
func TestNewtonGenerator(t *testing.T) {
	c := Newton{Clients: 10, Samples: 2000, Dim: 10, NoiseVar: 0.2, Test: 2500}
	nd, err := c.Generate(3)
	if err != nil {
		t.Fatal(err)
	}
	if nd.Test.N != 2500 || len(nd.Clients) != 10 || nd.Clients[0].N != 2000 {
		t.Fatalf("sizes: test %d, clients %d × %d", nd.Test.N, len(nd.Clients), nd.Clients[0].N)
	}
	var ys []float64
	var xs float64
	for _, s := range nd.Clients {
		ys = append(ys, s.Y...)
		for _, v := range s.X {
			xs += v * v
		}
	}
	n := float64(len(ys))
	mean, vr := meanVar(ys)
	wantMean := -math.Sqrt(2 * 10 / math.Pi)
	wantVar := (1-2/math.Pi)*10 + 0.2
	if math.Abs(mean-wantMean) > 4*math.Sqrt(wantVar/n) || math.Abs(vr-wantVar) > 0.05*wantVar {
		t.Errorf("y mean %.4f var %.4f, want %.4f and %.4f", mean, vr, wantMean, wantVar)
	}
	if ex := xs / (n * 10); math.Abs(ex-1) > 0.02 {
		t.Errorf("E x_k² = %.4f, want 1", ex)
	}
	if avg, _ := nd.ModelHeterogeneity(); avg != 0 {
		t.Errorf("β = 0: Δ_f = %v, want exactly 0", avg)
	}
	c.Beta = 0.1
	nd, _ = c.Generate(3)
	if avg, _ := nd.ModelHeterogeneity(); !(avg > 0.01) {
		t.Errorf("β = 0.1: Δ_f = %v, want clearly positive", avg)
	}
	c.Alpha, c.Beta = 1, 0
	nd, _ = c.Generate(3)
	var shift float64
	for _, u := range nd.Shifts {
		for _, v := range u {
			shift += v * v
		}
	}
	if s := shift / 100; math.Abs(s-1) > 0.4 { // 100 draws of N(0, α=1)
		t.Errorf("α = 1: mean u_jk² = %.3f, want about 1", s)
	}
}

func meanVar(v []float64) (mean, vr float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		vr += (x - mean) * (x - mean)
	}
	return mean, vr / float64(len(v)-1)
}
