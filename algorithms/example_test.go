package algorithms_test

import (
	"context"
	"fmt"

	"github.com/fedscope/fedscope/algorithms"
	"github.com/fedscope/fedscope/datasets"
	"github.com/fedscope/fedscope/model"
)

// ExampleFedAvg races FedAvg with one and with five local steps on a small
// homogeneous federation. With s = 1 FedAvg is gradient descent and its
// gradient norm goes to 0; with s = 5 it stalls at a non-stationary fixed
// point (docs/papers.md §1.6) whose estimation error is nevertheless as good.
func ExampleFedAvg() {
	fed, err := datasets.Linear{Clients: 4, Dim: 5, Samples: 40, Noise: 0.5}.Generate(7)
	if err != nil {
		fmt.Println(err)
		return
	}
	p := model.NewProblem(fed)
	for _, s := range []int{1, 5} {
		var last algorithms.LinearRound
		alg := algorithms.FedAvg{Eta: 0.1, LocalSteps: s}
		if err := alg.Run(context.Background(), p, 300, func(r algorithms.LinearRound) { last = r }); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("s=%d: round %d, ‖∇l‖ = %.4f, ‖θ − θ*‖ = %.4f\n", s, last.Index, last.GradNorm, last.EstError)
	}
	fmt.Printf("least squares:          ‖θ − θ*‖ = %.4f\n", p.LSError)
	// Output:
	// s=1: round 300, ‖∇l‖ = 0.0000, ‖θ − θ*‖ = 0.0612
	// s=5: round 300, ‖∇l‖ = 0.0208, ‖θ − θ*‖ = 0.0576
	// least squares:          ‖θ − θ*‖ = 0.0612
}
