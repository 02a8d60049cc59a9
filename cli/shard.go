package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/fedscope/fedscope/cli/output"
	"github.com/fedscope/fedscope/experiment"
)

// shardArgs records the command-line inputs that built the scenario, so
// that merge can rebuild it the same way.
func (f *scenarioFlags) shardArgs(trials int) experiment.ShardArgs {
	args := experiment.ShardArgs{Preset: f.preset, Set: append([]string(nil), f.sets...)}
	if f.given("seed") {
		seed := f.seedN
		args.Seed = &seed
	}
	if f.given("rounds") {
		rounds := f.roundsN
		args.Rounds = &rounds
	}
	if trials != 0 {
		args.Trials = &trials
	}
	return args
}

// merge is `fedscope merge [--format csv|jsonl] [--out PATH] FILES…`: it
// checks that the files are the n shards of one sweep, each complete and
// computed from the same scenario by this fedscope, and writes the sweep's
// table, byte for byte what the unsharded `fedscope sweep` writes.
func (a *app) merge(ctx context.Context, args []string) error {
	fs := newFlagSet("merge")
	format := fs.String("format", "", "output format (default: from the --out extension, else csv)")
	out := fs.String("out", "", "write to a file instead of standard output (- is standard output)")
	if err := parseWithArgs(fs, args); err != nil {
		return err
	}
	f, err := output.FormatFor(*format, *out)
	if err != nil {
		return err
	}
	names := fs.Args()
	if len(names) == 0 {
		return experiment.Errorf("merge: no shard files given; usage: fedscope merge [--format csv|jsonl] [--out PATH] SHARD-FILES...")
	}
	for _, n := range names {
		if strings.HasPrefix(n, "-") {
			return experiment.Errorf("merge: %q: flags go before the shard files", n)
		}
	}
	files, err := readShards(names)
	if err != nil {
		return err
	}
	build, err := buildFingerprint()
	if err != nil {
		return err
	}
	table, err := experiment.MergeShards(files, buildVersion(), build, a.rebuildSweep)
	if err != nil {
		return err
	}
	target, err := output.Open(ctx, *out, output.Options{Stdout: a.stdout, Inputs: names})
	if err != nil || ctx.Err() != nil { // interrupted while waiting for a FIFO's reader
		if ctx.Err() != nil {
			target.Abort()
			return errInterrupted{what: " before the table was written"}
		}
		return err
	}
	a.out.Store(target)
	err = target.Write(func(w io.Writer) error { return table.Write(w, f) })
	switch {
	case errors.Is(err, output.ErrStopped): // Main's deadline after a signal
		return errInterrupted{what: stoppedWhat(target, target.Lines())}
	case err != nil:
		return err
	case ctx.Err() != nil:
		return errInterrupted{what: " while writing the table; wrote all of it to " + target.Describe()}
	}
	return nil
}

// readShards reads the shard files, each checked line by line.
func readShards(names []string) ([]*experiment.ShardFile, error) {
	var files []*experiment.ShardFile
	for _, n := range names {
		file, err := os.Open(n)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, experiment.Errorf("merge: %s: cannot read the file: %v", n, err)
		}
		sf, err := experiment.ReadShard(file, n)
		file.Close()
		if err != nil {
			return nil, err
		}
		files = append(files, sf)
	}
	return files, nil
}

// rebuildSweep turns a shard's recorded command-line inputs back into its
// scenario through the flags of `fedscope sweep`.
func (a *app) rebuildSweep(args experiment.ShardArgs) (experiment.Scenario, error) {
	fs := newFlagSet("sweep")
	var sf scenarioFlags
	sf.register(fs)
	argv := []string{"--preset", args.Preset}
	for _, s := range args.Set {
		argv = append(argv, "--set", s)
	}
	if args.Seed != nil {
		argv = append(argv, "--seed", fmt.Sprint(*args.Seed))
	}
	if args.Rounds != nil {
		argv = append(argv, "--rounds", fmt.Sprint(*args.Rounds))
	}
	if err := parseFlags(fs, argv); err != nil {
		return experiment.Scenario{}, err
	}
	sc, err := sf.scenario(a.catalog)
	if err != nil {
		return experiment.Scenario{}, err
	}
	if !sc.IsSweep() {
		return experiment.Scenario{}, experiment.Errorf("preset %q is not a sweep", sc.Preset)
	}
	if args.Trials != nil {
		if *args.Trials < 1 || *args.Trials > experiment.MaxTrials {
			return experiment.Scenario{}, experiment.Errorf("--trials %d: must lie in 1..%d", *args.Trials, experiment.MaxTrials)
		}
		sc.Trials = *args.Trials
	}
	return sc, nil
}

// buildFingerprint identifies the running fedscope binary in shard files
// (experiment.ShardHeader.Build): the SHA-256 of its executable, read once.
// It changes whenever the code does, with or without the version and VCS
// stamps of the build (a build with -buildvcs=false, or from a source
// tarball, says "(devel)" whatever was changed). Shards computed by
// different binaries may differ in their last digits, so merge refuses to
// mix them. Tests replace it.
var buildFingerprint = sync.OnceValues(func() (string, error) {
	h, err := hashExecutable()
	if err != nil {
		return "", fmt.Errorf("cannot fingerprint this fedscope binary for its shards: %v", err)
	}
	return "sha256:" + h, nil
})

// hashExecutable returns the SHA-256 of the running executable: the file
// the process runs (/proc/self/exe on Linux, even when the path now names
// a newer binary or nothing), else the file os.Executable names.
func hashExecutable() (string, error) {
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		path, perr := os.Executable()
		if perr != nil {
			return "", perr
		}
		if f, err = os.Open(path); err != nil {
			return "", err
		}
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// buildVersion names the fedscope binary for people in shard files: the
// module version and, when the build recorded it, the VCS revision. Merge
// compares buildFingerprint, which changes with the code even where this
// does not.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision":
			v += " " + s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			v += "+dirty"
		}
	}
	return v
}
