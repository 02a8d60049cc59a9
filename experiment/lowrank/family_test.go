package lowrank

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/fedscope/fedscope/experiment"
)

// TestLowRankShape: a short lowrank run with racers from `algorithms=`
// succeeds and its CSV starts with the suboptimality and the cost columns
// of the federated oracle complexity (docs/papers.md §2.3). (It was the last
// check of the old TestNewtonRoundsShape.)
func TestLowRankShape(t *testing.T) {
	cat := experiment.NewCatalog(Family)
	sc, err := cat.Scenario("lowrank", "rounds=3", "algorithms=fedlrgd:r=4,fedavg")
	if err != nil {
		t.Fatal(err)
	}
	table := experiment.NewTable(sc)
	res, err := experiment.NewEngine().Run(context.Background(), sc, experiment.Observer{Round: table.Add})
	if err != nil || len(res.Failed()) > 0 {
		t.Fatalf("lowrank: %v %v", err, res.Failed())
	}
	var b bytes.Buffer
	if err := table.Write(&b, experiment.CSV); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.HasPrefix(out, "algorithm,round,suboptimality,oracle,comm_up,comm_down") {
		t.Errorf("lowrank output:\n%s", out)
	}
}
