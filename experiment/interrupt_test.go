package experiment

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestInterruptedRunKeepsRows: a headless run cancelled midway (Ctrl-C)
// still writes every round computed so far and exits with status 130.
func TestInterruptedRunKeepsRows(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(time.Second, cancel) // what signal.NotifyContext does on Ctrl-C (1 s: under -race on a loaded 2-core box 200 ms may not reach round 1)
	var out, errb bytes.Buffer
	code := Command(ctx, []string{"run", "--set", "rounds=100000", "--set", "clients=5", "--set", "dim=100",
		"--set", "samples=200", "--set", "algorithms=fedavg:s=3"}, &out, &errb)
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d; stderr %q", code, ExitInterrupted, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "algorithm,round,") {
		t.Fatalf("no rows written: %q", out.String())
	}
	// Rows are consecutive rounds 1..k of the single racer.
	for i, l := range lines[1:] {
		if f := strings.Split(l, ","); f[1] != strconv.Itoa(i+1) {
			t.Fatalf("row %d has round %s", i+1, f[1])
		}
	}
	if !strings.Contains(errb.String(), "interrupted") || strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("stderr %q, want one line saying interrupted", errb.String())
	}
}
