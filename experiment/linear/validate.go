package linear

import (
	"strings"

	"github.com/fedscope/fedscope/experiment"
)

// validateBatches refuses a minibatch larger than every client's data set
// (issue 22): such a batch takes a client's n_i rows in one step, which
// is full batch under another name, and its B×B kernel costs memory that
// the result does not need. The same rule holds at every size, so that
// batch=1000 and batch=100000 on 500 samples per client get the same
// answer naming batch (not a memory refusal naming samples). A batch
// between the data-scarce and the data-rich clients' sizes is kept: the
// smaller clients take all their rows in one batch.
func validateBatches(c Config) error {
	most := c.Data.Samples
	if c.Data.ScarceClients > 0 {
		most = max(most, c.Data.ScarceSamples)
	}
	if c.Batch > most {
		return experiment.Errorf("batch=%d: larger than every client's data (at most %d samples each); allowed: 0 (full batch) or a whole number in 1..%d",
			c.Batch, most, most)
	}
	for _, r := range c.Racers {
		if b, pinned := r.Opt("b"); pinned && int(b) > most {
			return experiment.Errorf("algorithms=%q: racer %s pins b=%d, larger than every client's data (at most %d samples each); allowed: b=0 (full batch) or b in 1..%d",
				racersText(c.Racers), r, int(b), most, most)
		}
	}
	return nil
}

// validateScarce refuses scarce_samples without data-scarce clients: with
// scarce_clients=0 the value would change nothing, and a user who set it
// would read results that ignore it (issue 22).
func validateScarce(c Config) error {
	if d := c.Data; d.ScarceClients == 0 && d.ScarceSamples != 0 {
		return experiment.Errorf("scarce_samples=%d has no effect while scarce_clients=0 (no client is data-scarce); allowed: set scarce_clients ≥ 1 as well, or scarce_samples=0",
			d.ScarceSamples)
	}
	return nil
}

// racersText is the algorithms value of a racer list.
func racersText(rs []experiment.RacerSpec) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}
