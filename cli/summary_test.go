package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestRunSummary checks the end of `fedscope run` on the linear family: the
// rows start at round 0, every racer gets one {"record":"summary",…} line
// after the rows in JSON lines with its rounds to come within 5 % of its
// final error, and the same sentences go to stderr; CSV stays rows only.
func TestRunSummary(t *testing.T) {
	args := []string{"run", "--preset", "paradox", "--rounds", "6", "--set", "clients=3", "--set", "dim=4", "--set", "samples=12"}
	var out, errs bytes.Buffer
	if code := Main(context.Background(), append(args, "--format", "jsonl"), "test", &out, &errs); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var summaries, firstRound = 0, -1
	for _, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		switch rec["record"] {
		case "summary":
			summaries++
			if _, ok := rec["rounds_to_5pct"]; !ok {
				t.Errorf("summary without rounds_to_5pct: %s", l)
			}
		case nil:
			if summaries > 0 {
				t.Errorf("row after a summary: %s", l)
			}
			if firstRound < 0 {
				firstRound = int(rec["round"].(float64))
			}
		}
	}
	if summaries != 4 || firstRound != 0 {
		t.Errorf("%d summaries (want 4), first row at round %d (want 0)", summaries, firstRound)
	}
	if n := strings.Count(errs.String(), "fedscope: summary: "); n != 4 {
		t.Errorf("%d summary lines on stderr, want 4:\n%s", n, errs.String())
	}
	out.Reset()
	errs.Reset()
	if code := Main(context.Background(), append(args, "--format", "csv"), "test", &out, &errs); code != ExitOK {
		t.Fatalf("csv: exit %d", code)
	}
	if strings.Contains(out.String(), "summary") || !strings.Contains(out.String(), "FedAvg s=1,0,") {
		t.Errorf("csv output:\n%s", out.String())
	}
}
