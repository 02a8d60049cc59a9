package algorithms_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
	"gonum.org/v1/gonum/mat"
)

func newMixture(t testing.TB, cfg datasets.Mixture, seed uint64) *model.Mixture {
	t.Helper()
	fed, err := cfg.Generate(seed)
	if err != nil {
		t.Fatal(err)
	}
	return model.NewMixture(fed)
}

func runMixture(alg algorithms.MixtureAlgorithm, p *model.Mixture, rounds int) ([]algorithms.ClusterRound, error) {
	var out []algorithms.ClusterRound
	err := alg.Run(context.Background(), p, rounds, func(r algorithms.ClusterRound) { out = append(out, r) })
	return out, err
}

// separated is a well-separated mixture: Δ ≥ 5 against σ ≤ 0.5.
func separated(noise float64) datasets.Mixture {
	return datasets.Mixture{Clients: 300, Dim: 5, K: 3, Radius: 4, MinSep: 5, Noise: noise, MaxSamples: 300}
}

// localMap returns the matrix by which one client's local update moves the
// error θ − θ* when its labels are noise-free (y_i = X_i θ*): (I − ηH_i)^s for
// s gradient steps, (I + ηH_i)⁻¹ for the proximal step, with H_i = X_iᵀX_i/n_i
// formed densely with gonum.
func localMap(c datasets.Client, d int, local algorithms.ClusterLocal) *mat.Dense {
	x := mat.NewDense(c.N, d, c.X)
	var h mat.Dense
	h.Mul(x.T(), x)
	h.Scale(1/float64(c.N), &h)
	id := mat.NewDiagDense(d, nil)
	for a := 0; a < d; a++ {
		id.SetDiag(a, 1)
	}
	var step mat.Dense
	if local.Prox {
		step.Scale(local.Eta, &h)
		step.Add(&step, id)
		var inv mat.Dense
		if err := inv.Inverse(&step); err != nil {
			panic(err)
		}
		return &inv
	}
	step.Scale(-local.Eta, &h)
	step.Add(&step, id)
	out := mat.DenseCopyOf(id)
	for range local.Steps {
		out.Mul(out, &step)
	}
	return out
}

// TestPhase2ExactRecurrence starts Phase 2 at the truths plus a known
// perturbation on noise-free, well-separated data. Every client then keeps
// its true label, and the server's average makes cluster j's error evolve by
// the linear map of Lemma 1 (docs/papers.md §5.4):
//
//	e_{j,t} = M_j e_{j,t−1},  M_j = I − Σ_{i: z_i = j} (n_i/N)(I − L_i),
//
// with L_i the client's local map. The test builds M_j densely and checks
// every round against it, that misclustering stays 0, and that the decay is
// geometric with the spectral radius of M_j.
func TestPhase2ExactRecurrence(t *testing.T) {
	for _, local := range []algorithms.ClusterLocal{{Eta: 0.05, Steps: 5}, {Prox: true, Eta: 0.3}} {
		p := newMixture(t, separated(0), 2)
		d, k := p.Dim, p.K
		ms := make([]*mat.Dense, k)
		for j := range ms {
			ms[j] = mat.NewDense(d, d, nil)
			for a := 0; a < d; a++ {
				ms[j].Set(a, a, 1)
			}
		}
		for i, c := range p.Fed.Clients {
			var diff mat.Dense
			diff.Sub(localMap(c, d, local), mat.NewDiagDense(d, ones(d)))
			diff.Scale(p.Weights[i], &diff)
			ms[p.Fed.Labels[i]].Add(ms[p.Fed.Labels[i]], &diff)
		}
		start := make([]float64, k*d)
		errs := make([]*mat.VecDense, k)
		for j := 0; j < k; j++ {
			e := make([]float64, d)
			for a := range e {
				e[a] = 0.1 * math.Sin(float64(7*j+a+1)) // ‖e‖ ≈ 0.15, far below Δ/2 ≥ 2.5
				start[j*d+a] = p.Fed.Truths[j][a] + e[a]
			}
			errs[j] = mat.NewVecDense(d, e)
		}
		rounds, err := runMixture(phase2{local, start}, p, 40)
		if err != nil || len(rounds) != 40 {
			t.Fatalf("%s: %d rounds, %v", local.Label(), len(rounds), err)
		}
		for t0, r := range rounds {
			if r.Phase != 2 || r.Misclustered != 0 {
				t.Fatalf("%s round %d: phase %d, misclustered %v", local.Label(), r.Index, r.Phase, r.Misclustered)
			}
			for j := 0; j < k; j++ {
				errs[j].MulVec(ms[j], errs[j])
				for a := 0; a < d; a++ {
					want := p.Fed.Truths[j][a] + errs[j].AtVec(a)
					if got := r.Centres[j*d+a]; math.Abs(got-want) > 1e-10 {
						t.Fatalf("%s round %d cluster %d coord %d: %v, recurrence %v", local.Label(), t0+1, j, a, got, want)
					}
				}
			}
		}
		// Geometric decay: the distance over the last 10 rounds shrinks by
		// at most the largest spectral radius (and not much less).
		rho := 0.0
		for _, m := range ms {
			var eig mat.Eigen
			eig.Factorize(m, mat.EigenNone)
			for _, v := range eig.Values(nil) {
				rho = math.Max(rho, math.Hypot(real(v), imag(v)))
			}
		}
		ratio := math.Pow(rounds[39].Distance/rounds[29].Distance, 0.1)
		if !(rho < 1) || ratio > rho+1e-9 || ratio < rho-0.05 {
			t.Errorf("%s: per-round contraction %.4f, spectral radius %.4f", local.Label(), ratio, rho)
		}
	}
}

func ones(d int) []float64 {
	o := make([]float64, d)
	for a := range o {
		o[a] = 1
	}
	return o
}

// phase2 adapts algorithms.Phase2 to MixtureAlgorithm.
type phase2 struct {
	local   algorithms.ClusterLocal
	centres []float64
}

func (a phase2) Run(ctx context.Context, p *model.Mixture, rounds int, emit func(algorithms.ClusterRound)) error {
	return algorithms.Phase2(ctx, p, a.local, a.centres, rounds, emit)
}

// phase2FromTruth runs 60 rounds of Phase 2 (FedAvg s=5, η=0.03) from
// the truths of well-separated clusters with label noise σ = 0.5.
func phase2FromTruth(t *testing.T) (p *model.Mixture, start []float64, rounds []algorithms.ClusterRound) {
	t.Helper()
	p = newMixture(t, separated(0.5), 3)
	start = make([]float64, 0, p.K*p.Dim)
	for _, th := range p.Fed.Truths {
		start = append(start, th...)
	}
	rounds, err := runMixture(phase2{algorithms.ClusterLocal{Eta: 0.03, Steps: 5}, start}, p, 60)
	if err != nil {
		t.Fatal(err)
	}
	return p, start, rounds
}

// TestPhase2FromTruthWithNoise checks that with label noise but well
// separated clusters, Phase 2 started at the truths keeps misclustering near
// 0 and the centres near the truths (the noise floor σ√(d/N_j) ≈ 0.03 here).
func TestPhase2FromTruthWithNoise(t *testing.T) {
	p, _, rounds := phase2FromTruth(t)
	for _, r := range rounds {
		if r.Misclustered > 0.01 || r.Distance > 0.15 {
			t.Fatalf("round %d: misclustered %.3f, distance %.3f", r.Index, r.Misclustered, r.Distance)
		}
		if len(r.Assign) != len(p.Clients) {
			t.Fatalf("round %d: %d assignments for %d clients", r.Index, len(r.Assign), len(p.Clients))
		}
	}
}

// smallTwoPhase is a reduced §8 scenario that runs in milliseconds.
func smallTwoPhase(seed uint64) (datasets.Mixture, algorithms.TwoPhase) {
	cfg := datasets.Mixture{Clients: 200, Dim: 6, K: 3, Radius: 2, MinSep: 1.5, Noise: 0.3, MaxSamples: 300,
		Anchors: 6, AnchorPoints: 40, PoolClients: 600}
	return cfg, algorithms.TwoPhase{
		Phase1: algorithms.FedMD{Rounds: 4, Pool: 600, Pairs: 20, OIIters: 8, PowerIters: 5, Epsilon: 0.1,
			Alpha: 1, Beta: 1, Delta: 1.5, Reuse: true, Seed: seed},
		Local: algorithms.ClusterLocal{Eta: 0.05, Steps: 3},
	}
}

// TestTwoPhaseRounds checks the shape of the stream: Phase-1 rounds first,
// counted as rounds and without assignments, then Phase 2 with one label per
// client; and fewer rounds than T stops inside Phase 1.
func TestTwoPhaseRounds(t *testing.T) {
	cfg, alg := smallTwoPhase(1)
	p := newMixture(t, cfg, 1)
	rounds, err := runMixture(alg, p, 10)
	if err != nil || len(rounds) != 10 {
		t.Fatalf("%d rounds, %v", len(rounds), err)
	}
	for i, r := range rounds {
		wantPhase := 1
		if i >= 4 {
			wantPhase = 2
		}
		if r.Index != i+1 || r.Phase != wantPhase || len(r.Centres) != p.K*p.Dim || math.IsNaN(r.Distance) {
			t.Fatalf("round %d: index %d phase %d, %d numbers, distance %v", i+1, r.Index, r.Phase, len(r.Centres), r.Distance)
		}
		if (wantPhase == 1) != (r.Assign == nil) || (wantPhase == 1) != math.IsNaN(r.Misclustered) {
			t.Fatalf("round %d: phase %d with %d assignments, misclustered %v", i+1, r.Phase, len(r.Assign), r.Misclustered)
		}
	}
	short, err := runMixture(alg, p, 3)
	if err != nil || len(short) != 3 || short[2].Phase != 1 {
		t.Fatalf("3 rounds: %d rounds, %v", len(short), err)
	}
}

// TestMixtureCancel checks that both racers return within one round of
// cancellation, in Phase 1 and in Phase 2.
func TestMixtureCancel(t *testing.T) {
	cfg, two := smallTwoPhase(2)
	p := newMixture(t, cfg, 2)
	for _, test := range []struct {
		alg   algorithms.MixtureAlgorithm
		after int
	}{
		{two, 2}, {two, 6}, {algorithms.RandomInit{Local: two.Local, Seed: 2}, 3},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		err := test.alg.Run(ctx, p, 50, func(r algorithms.ClusterRound) {
			n++
			if n == test.after {
				cancel()
			}
		})
		cancel()
		if n != test.after || !errors.Is(err, context.Canceled) {
			t.Errorf("%T cancelled after round %d: %d rounds, %v", test.alg, test.after, n, err)
		}
	}
}

// TestMixtureDeterministic checks that the racers give bit-identical rounds
// under GOMAXPROCS 1 and 2.
func TestMixtureDeterministic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	cfg, two := smallTwoPhase(3)
	var runs [2][2][]algorithms.ClusterRound
	for pi, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		p := newMixture(t, cfg, 3)
		for ai, alg := range []algorithms.MixtureAlgorithm{two, algorithms.RandomInit{Local: algorithms.ClusterLocal{Prox: true, Eta: 0.2}, Seed: 3}} {
			rs, err := runMixture(alg, p, 12)
			if err != nil {
				t.Fatal(err)
			}
			runs[pi][ai] = rs
		}
	}
	for ai := range runs[0] {
		a, b := runs[0][ai], runs[1][ai]
		for i := range a {
			if !reflect.DeepEqual(a[i].Centres, b[i].Centres) || !reflect.DeepEqual(a[i].Assign, b[i].Assign) ||
				math.Float64bits(a[i].Distance) != math.Float64bits(b[i].Distance) {
				t.Fatalf("racer %d round %d differs between GOMAXPROCS 1 and 2", ai, i+1)
			}
		}
	}
}

// TestPhase2Diverges checks that an unstable step is reported as a
// divergence with the stable limit 2/λ_max of the local Hessians.
func TestPhase2Diverges(t *testing.T) {
	p := newMixture(t, separated(0.5), 4)
	_, err := runMixture(algorithms.RandomInit{Local: algorithms.ClusterLocal{Eta: 3, Steps: 5}, Seed: 4}, p, 200)
	var de *algorithms.DivergedError
	if !errors.As(err, &de) || math.Abs(de.Limit-2/p.Curvature()) > 1e-12 {
		t.Fatalf("η = 3: %v", err)
	}
	if _, err := runMixture(algorithms.RandomInit{Local: algorithms.ClusterLocal{Eta: 0.1}}, p, 2); !errors.Is(err, algorithms.ErrBadParams) {
		t.Fatalf("s = 0 accepted: %v", err)
	}
}

// warnings returns the rounds that carry a warning, by index.
func warnings(rounds []algorithms.ClusterRound) map[int]string {
	out := map[int]string{}
	for _, r := range rounds {
		if r.Warning != "" {
			out[r.Index] = r.Warning
		}
	}
	return out
}

// TestPhase1Warning checks that the end of Phase 1 says when it left the
// regime of Thm 1 (docs/papers.md §5.2): after one round every anchor is still
// near θ_0 = 0, within Δ/2 of the others, so the anchors form fewer than k
// groups, k-means splits them, and the result is far above εΔ with anchors
// still moving. The warning is on round T and no other round. With the
// separated mixture, enough rounds and anchors, Phase 1 ends within εΔ in k
// groups and says nothing.
func TestPhase1Warning(t *testing.T) {
	cfg, alg := smallTwoPhase(5)
	alg.Phase1.Rounds = 1
	p := newMixture(t, cfg, 5)
	rounds, err := runMixture(alg, p, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := warnings(rounds)
	if len(w) != 1 || w[1] == "" {
		t.Fatalf("warnings %q, want one on round 1", w)
	}
	// Rounds before T say nothing.
	alg.Phase1.Rounds = 3
	if rounds, err := runMixture(alg, p, 2); err != nil || len(warnings(rounds)) != 0 {
		t.Errorf("rounds 1–2 of a 3-round Phase 1: warnings %q (%v), want none", warnings(rounds), err)
	}
	for _, want := range []string{"above its target εΔ", "still moving", "k-means split them", "not k = 3"} {
		if !strings.Contains(w[1], want) {
			t.Errorf("round 1 warning %q does not say %q", w[1], want)
		}
	}

	good := datasets.Mixture{Clients: 50, Dim: 4, K: 2, Radius: 3, MinSep: 5, Noise: 0, MaxSamples: 20,
		Anchors: 6, AnchorPoints: 600, PoolClients: 3000}
	q := newMixture(t, good, 6)
	two := algorithms.TwoPhase{
		Phase1: algorithms.FedMD{Rounds: 20, Pool: 3000, Pairs: 300, OIIters: 10, PowerIters: 10, Epsilon: 0.2,
			Alpha: 1, Beta: 1, Delta: q.Fed.Delta, Reuse: true, Seed: 6},
		Local: algorithms.ClusterLocal{Eta: 0.05, Steps: 3},
	}
	rounds, err = runMixture(two, q, 20)
	if err != nil {
		t.Fatal(err)
	}
	if last := rounds[len(rounds)-1]; last.Distance > 0.2*q.Fed.Delta || len(warnings(rounds)) != 0 {
		t.Errorf("noise-free, separated: Phase 1 ends at %v (εΔ = %v) with warnings %q; want within εΔ and none",
			last.Distance, 0.2*q.Fed.Delta, warnings(rounds))
	}
}

// TestConvergenceWarning checks the last round of Phase 2: started at the
// truths, 60 rounds of FedAvg s=5 settle at the fixed point and say nothing;
// started half a separation away with a small proximal step, 5 rounds are
// far from it, and the last round — only the last — says so, naming the
// rounds it would need; started with no model near one truth, it settles in
// a wrong clustering and says that.
func TestConvergenceWarning(t *testing.T) {
	p, start, rounds := phase2FromTruth(t)
	if w := warnings(rounds); len(w) != 0 {
		t.Errorf("from the truths: warnings %q, want none", w)
	}
	shifted := append([]float64(nil), start...)
	for a := range shifted {
		shifted[a] += 1.0 / math.Sqrt(float64(p.Dim))
	}
	rounds, err := runMixture(phase2{algorithms.ClusterLocal{Prox: true, Eta: 0.01}, shifted}, p, 5)
	if err != nil {
		t.Fatal(err)
	}
	w := warnings(rounds)
	if len(w) != 1 || !strings.Contains(w[5], "has not converged after 5 rounds") || !strings.Contains(w[5], "more rounds would settle them") {
		t.Errorf("5 slow rounds from a shifted start: warnings %q, want one on round 5 saying it has not converged", w)
	}
	// Two models start on θ*_1 and none near θ*_2: ties go to the lower index,
	// so the second model never gets a client and the run settles with
	// cluster 2's clients in the wrong clusters, far above the fixed point
	// at the true labels.
	stuck := append([]float64(nil), start...)
	copy(stuck[p.Dim:2*p.Dim], start[:p.Dim])
	rounds, err = runMixture(phase2{algorithms.ClusterLocal{Eta: 0.03, Steps: 5}, stuck}, p, 150)
	if err != nil {
		t.Fatal(err)
	}
	w = warnings(rounds)
	if len(w) != 1 || !strings.Contains(w[150], "stuck in a wrong local optimum") {
		t.Errorf("from a start without a model near θ*_2: warnings %q, want one on round 150 saying it is stuck", w)
	}
}
