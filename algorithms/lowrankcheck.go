package algorithms

import (
	"fmt"
	"math"

	"github.com/fedscope/fedscope/model"
)

// InterpolationAlarm is the relative error of FedLRGD's interpolated
// gradient on the server's spare samples (InterpolationCheck) above which
// the run is warned that its rank r is too small for the loss. Measured
// on the lowrank preset (seeds 1–5, θ⁰ = 0): every r = 3 run (1.1–13.8)
// and the r = 5 runs that end at a wrong point (0.64–1.83) lie above; the
// runs that converge (r = 5 on seed 4: 0.053; r = 10: at most 0.035; r = 20:
// at most 0.005) below. 0.3 lies between, twice the largest good error
// away from the smallest bad one.
const InterpolationAlarm = 0.3

// Interpolation is the result of FedLRGD's interpolation check.
type Interpolation struct {
	// Spare is the number of server samples beyond the r interpolation
	// nodes (R − r); the check needs at least one.
	Spare int
	// RelErr is ‖F̂_spare(θ⁰) − ∇F_spare(θ⁰)‖ / ‖∇F_spare(θ⁰)‖: the
	// gradient of the spare samples, summed, as the interpolation weights
	// v (computed like a client's, docs/papers.md §2.4) reconstruct it from
	// the nodes, against the true one. NaN without spare samples.
	RelErr float64
}

// Alarm reports whether the check says the rank is too small.
func (c Interpolation) Alarm() bool { return c.RelErr > InterpolationAlarm }

// Sentence says what the check found.
func (c Interpolation) Sentence(r int) string {
	if c.Spare == 0 {
		return fmt.Sprintf("FedLRGD r=%d: no spare server sample to check the interpolation on (r = R)", r)
	}
	s := fmt.Sprintf("FedLRGD r=%d: interpolated gradient off by %.3g (relative) on the server's %d spare samples", r, c.RelErr, c.Spare)
	if c.Alarm() {
		s += fmt.Sprintf(", above %g: rank too small, the descent can settle at a wrong point", InterpolationAlarm)
	}
	return s
}

// InterpolationCheck is what FedLRGD's server can check before any client
// works (docs/papers.md §2.4; the server holds R ≥ r samples): the samples
// beyond its r nodes are weighted as a client's would be, and the
// interpolated gradient they give at the start θ⁰ = 0 is compared with
// their true gradient, which the server can compute. Gradients of the
// spare samples only: no client data, no extra communication; it costs
// (R − r)·r + R − r gradients beyond epoch 1's.
func (a FedLRGD) InterpolationCheck(p *model.Federated) (Interpolation, error) {
	pp, q, r := p.Loss.Params(), p.Q, a.Rank
	serverN := len(p.Server) / q
	if r < 1 || r > serverN {
		return Interpolation{}, fmt.Errorf("%w: rank r=%d must lie in 1..%d (server samples)", ErrBadParams, r, serverN)
	}
	out := Interpolation{Spare: serverN - r, RelErr: math.NaN()}
	if out.Spare == 0 {
		return out, nil
	}
	st := &lrgd{serverN: serverN, nodes: p.Server[:r*q]}
	anchors := a.anchors(pp)
	pinv, err := a.pseudoInverses(p, st, anchors)
	if err != nil {
		return out, err
	}
	v := make([][]float64, pp) // the spare samples' weights, as a client's
	for i := range v {
		v[i] = make([]float64, r)
	}
	newWeigher(p, anchors, pinv).addTo(v, p.Server[r*q:])
	theta := make([]float64, pp) // θ⁰ = 0
	g, interp, truth := make([]float64, pp), make([]float64, pp), make([]float64, pp)
	for k := 0; k < r; k++ {
		p.Loss.GradTo(g, st.nodes[k*q:(k+1)*q], theta)
		for i := range interp {
			interp[i] += g[i] * v[i][k]
		}
	}
	for j := r; j < serverN; j++ {
		p.Loss.GradTo(g, p.Server[j*q:(j+1)*q], theta)
		for i := range truth {
			truth[i] += g[i]
		}
	}
	var num, den float64
	for i := range truth {
		num += (interp[i] - truth[i]) * (interp[i] - truth[i])
		den += truth[i] * truth[i]
	}
	out.RelErr = math.Sqrt(num / den)
	return out, nil
}
