package algorithms_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
)

// rank3Loss has per-coordinate partial derivatives of exact rank 3 in
// (sample, parameter): f(x; θ) = Σ_i x₀θ_i²/2 + x₁θ_i⁴/4 − x_{2+i}θ_i, so
// g_i(x; θ) = x₀·θ_i + x₁·θ_i³ − x_{2+i}·1, a sum of three products of a
// function of x and a function of θ.
type rank3Loss struct{ p int }

func (l rank3Loss) Params() int         { return l.p }
func (l rank3Loss) Smoothness() float64 { return 10 }
func (l rank3Loss) Value(x, th []float64) float64 {
	var s float64
	for i, t := range th {
		s += x[0]*t*t/2 + x[1]*t*t*t*t/4 - x[2+i]*t
	}
	return s
}
func (l rank3Loss) GradTo(dst, x, th []float64) {
	for i, t := range th {
		dst[i] = x[0]*t + x[1]*t*t*t - x[2+i]
	}
}

func uniformRows(rng *rand.Rand, n, q int) []float64 {
	out := make([]float64, n*q)
	for k := range out {
		out[k] = rng.Float64()
	}
	return out
}

// TestFedLRGDExactRank: when r is at least the exact rank of the gradient
// matrices, F̂(θ) equals ∇F(θ) at any θ (docs/papers.md §2.4: the client rows lie
// in the span of the server rows); below it, it does not. The functions θ
// and θ³ are nearly collinear on [−1,1], so G⁽ⁱ⁾ has a condition number
// near 1e4: the SVD cut-off must be below that for exact interpolation
// (the default 1e-4 trades exactness for robustness on losses that are
// only approximately of low rank; see FedLRGD).
func TestFedLRGDExactRank(t *testing.T) {
	const p, q = 3, 5
	rng := rand.New(rand.NewPCG(1, 2))
	for _, r := range []int{2, 3, 5, 8} {
		var clients [][]float64
		for c := 0; c < 6; c++ {
			clients = append(clients, uniformRows(rng, 7, q))
		}
		fp := &model.Federated{Loss: rank3Loss{p}, Q: q, Server: uniformRows(rng, r, q), Clients: clients, N: r + 42}
		theta := []float64{0.3, -1.2, 2}
		got, _, err := algorithms.FedLRGD{Rank: r, Iters: 1, Seed: 3, Tol: 1e-12}.ApproxGrad(fp, theta)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, p)
		fp.GradTo(want, theta)
		exact := near(got, want, 1e-8)
		if r >= 3 && !exact {
			t.Errorf("r=%d ≥ rank 3: F̂ = %v, ∇F = %v", r, got, want)
		}
		if r < 3 && exact {
			t.Errorf("r=%d < rank 3: F̂ = ∇F = %v, want an approximation error", r, got)
		}
	}
}

func logisticProblem(t testing.TB, server int) *model.Federated {
	t.Helper()
	d, err := datasets.SoftLabels{Clients: 100, Samples: 50, Server: server, Dim: 5}.Generate(1)
	if err != nil {
		t.Fatal(err)
	}
	return model.NewFederated(model.Logistic{Dim: 5, Mu: 0.1}, 6, d.Server, d.Clients, 1)
}

// TestFedLRGDCosts checks the federated oracle complexity and communication
// against Γ(FedLRGD) = r² + rs + rS + φmr (docs/papers.md §2.5) and the message
// sizes of §2.4, and FedAvg's b + φm per epoch (§2.6).
func TestFedLRGDCosts(t *testing.T) {
	const r, s, S, m, phi, p = 10, 50, 200, 100, 100.0, 5
	fp := logisticProblem(t, r)
	var rounds []algorithms.EpochRound
	err := algorithms.FedLRGD{Rank: r, Iters: S, Phi: phi, Seed: 1}.Run(context.Background(), fp, 10000,
		func(rd algorithms.EpochRound) { rounds = append(rounds, rd) })
	if err != nil {
		t.Fatal(err)
	}
	if len(rounds) != r+1+S {
		t.Fatalf("%d epochs, want r + 1 + S = %d", len(rounds), r+1+S)
	}
	last := rounds[len(rounds)-1]
	if want := float64(r*r + r*s + r*S + phi*m*r); last.Oracle != want {
		t.Errorf("Γ = %v, want %v", last.Oracle, want)
	}
	if want := float64(m * r * p); last.CommUp != want {
		t.Errorf("uploaded %v numbers, want m·r·p = %v", last.CommUp, want)
	}
	if want := float64(m * (r*p + p*r*r)); last.CommDown != want {
		t.Errorf("downloaded %v numbers, want m(rp + pr²) = %v", last.CommDown, want)
	}
	if first := rounds[0]; first.Subopt <= last.Subopt || last.Subopt < 0 {
		t.Errorf("suboptimality %v → %v: want a decrease, ≥ 0", first.Subopt, last.Subopt)
	}
	var avg []algorithms.EpochRound
	if err := (algorithms.LocalSGD{Steps: 10, Phi: phi, Seed: 1}).Run(context.Background(), fp, 5,
		func(rd algorithms.EpochRound) { avg = append(avg, rd) }); err != nil {
		t.Fatal(err)
	}
	for k, rd := range avg {
		if want := float64(k+1) * (10 + phi*m); rd.Oracle != want || rd.CommUp != float64((k+1)*m*p) {
			t.Errorf("FedAvg epoch %d: Γ %v (want %v), up %v", k+1, rd.Oracle, want, rd.CommUp)
		}
	}
	if !(avg[4].Subopt < avg[0].Subopt) {
		t.Errorf("FedAvg suboptimality %v → %v: no progress", avg[0].Subopt, avg[4].Subopt)
	}
}

// TestFedLRGDRankThreshold: on the logistic preset, a larger rank gives a
// (much) lower final suboptimality plateau (§8: "a much lower plateau once r
// is large enough"); and the optimum F_* is a true minimum (∇F(θ*) ≈ 0).
func TestFedLRGDRankThreshold(t *testing.T) {
	fp := logisticProblem(t, 40)
	g := make([]float64, 5)
	fp.GradTo(g, fp.Optimum)
	if model.Norm(g) > 1e-10 {
		t.Fatalf("‖∇F(θ*)‖ = %v", model.Norm(g))
	}
	final := func(r int) float64 {
		var last algorithms.EpochRound
		if err := (algorithms.FedLRGD{Rank: r, Iters: 200, Phi: 100, Seed: 1}).Run(context.Background(), fp, 10000,
			func(rd algorithms.EpochRound) { last = rd }); err != nil {
			t.Fatal(err)
		}
		return last.Subopt
	}
	lo, hi := final(3), final(40)
	t.Logf("final suboptimality: r=3 %.3g, r=40 %.3g", lo, hi)
	if !(hi < lo/10) {
		t.Errorf("r=40 plateau %.3g not far below r=3 plateau %.3g", hi, lo)
	}
	if math.IsNaN(hi) {
		t.Error("NaN suboptimality")
	}
}

// TestFedLRGDStops: on the preset's data (seed 1) a rank of 3 is far below
// the loss's numerical rank, and the server's gradient estimate grows
// after the first step; the descent then stops, returns the iterate before
// (here θ⁰: the suboptimality ends where it started instead of 7× higher),
// charges the epoch that found out r gradients, and says why.
func TestFedLRGDStops(t *testing.T) {
	fp := logisticProblem(t, 40)
	const r = 3
	var rounds []algorithms.EpochRound
	if err := (algorithms.FedLRGD{Rank: r, Iters: 200, Phi: 100, Seed: 1}).Run(context.Background(), fp, 10000,
		func(rd algorithms.EpochRound) { rounds = append(rounds, rd) }); err != nil {
		t.Fatal(err)
	}
	n := len(rounds)
	last := rounds[n-1]
	if n >= r+1+200 || last.Warning == "" || !strings.Contains(last.Warning, "grew") {
		t.Fatalf("%d epochs, last warning %q: want an early stop that says why", n, last.Warning)
	}
	for _, rd := range rounds[:n-1] {
		if rd.Warning != "" {
			t.Errorf("epoch %d has a warning before the stop: %q", rd.Index, rd.Warning)
		}
	}
	if !near(last.Theta, rounds[n-3].Theta, 0) || last.Oracle-rounds[n-2].Oracle != r {
		t.Errorf("stop: θ %v (two epochs before %v), Γ %v after %v: want the previous iterate and r more gradients",
			last.Theta, rounds[n-3].Theta, last.Oracle, rounds[n-2].Oracle)
	}
	if last.Subopt > rounds[0].Subopt {
		t.Errorf("suboptimality %.4g at the end, %.4g at the start", last.Subopt, rounds[0].Subopt)
	}
}

// TestInterpolationCheck: on a loss whose gradient matrices have exact
// rank 3, the server's check on its spare samples finds the interpolated
// gradient exact (to rounding, no alarm) once r ≥ 3, whatever the spare
// samples, and off at r = 2; with r = R there is nothing to check.
func TestInterpolationCheck(t *testing.T) {
	const p, q, R = 3, 5, 12
	rng := rand.New(rand.NewPCG(5, 6))
	fp := &model.Federated{Loss: rank3Loss{p}, Q: q, Server: uniformRows(rng, R, q), Clients: [][]float64{uniformRows(rng, 4, q)}, N: R + 4}
	for _, test := range []struct {
		r     int
		exact bool
	}{{2, false}, {3, true}, {5, true}, {8, true}} {
		chk, err := algorithms.FedLRGD{Rank: test.r, Seed: 3, Tol: 1e-13}.InterpolationCheck(fp)
		if err != nil {
			t.Fatal(err)
		}
		if chk.Spare != R-test.r {
			t.Errorf("r=%d: %d spare samples, want %d", test.r, chk.Spare, R-test.r)
		}
		if test.exact && !(chk.RelErr < 1e-6) || !test.exact && !(chk.RelErr > 0.01) {
			t.Errorf("r=%d: relative error %v (exact rank 3)", test.r, chk.RelErr)
		}
		if test.exact && chk.Alarm() {
			t.Errorf("r=%d: alarm at relative error %v", test.r, chk.RelErr)
		}
	}
	chk, err := algorithms.FedLRGD{Rank: R, Seed: 3}.InterpolationCheck(fp)
	if err != nil || chk.Spare != 0 || !math.IsNaN(chk.RelErr) || chk.Alarm() {
		t.Errorf("r = R: %+v, %v; want no spare sample, NaN, no alarm", chk, err)
	}
}
