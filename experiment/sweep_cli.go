package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// sweepCommand is `fedscope sweep --preset NAME [--trials N] [--seed S]
// [--set key=value]... [--format csv|jsonl] [--out PATH]`: one row per
// (racer, swept value) with the mean and standard deviation of each metric
// over the trials. An interrupted sweep writes the rows of every swept
// value with at least one trial done (its trials column says how many).
func sweepCommand(ctx context.Context, args []string, stdout io.Writer) error {
	fs := NewFlagSet("sweep")
	var sf ScenarioFlags
	sf.Register(fs)
	trials := fs.Int("trials", 0, "trials per swept value (default: the preset's)")
	format := fs.String("format", "csv", "output format: csv or jsonl")
	out := fs.String("out", "", "write to `path` instead of standard output")
	if err := ParseFlags(fs, args); err != nil {
		return err
	}
	f, err := ParseFormat(*format)
	if err != nil {
		return err
	}
	if !sf.given("preset") {
		return &InputError{Msg: "sweep: --preset is required; sweep presets: " + strings.Join(SweepPresetNames(), ", ")}
	}
	sc, err := sf.Scenario()
	if err != nil {
		return err
	}
	if !sc.IsSweep() {
		_, err := sc.sweepFamily()
		return err
	}
	if *trials != 0 || sf.given("trials") {
		if *trials < 1 || *trials > maxTrials {
			return &InputError{Msg: fmt.Sprintf("--trials %d: must lie in 1..%d", *trials, maxTrials)}
		}
		sc.Trials = *trials
	}
	table, err := NewSweepTable(sc)
	if err != nil {
		return err
	}
	err = RunSweep(ctx, sc, table.Add)
	interrupted := errors.Is(err, context.Canceled)
	// Like run: whatever was computed is written, on interrupt or failure.
	if werr := writeOut(*out, stdout, func(w io.Writer) error { return table.Write(w, f) }); werr != nil {
		return werr
	}
	if interrupted {
		return errInterrupted{rows: table.Rows()}
	}
	return err
}
