package experiment

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Shard is one slice of a sweep's (grid value, trial) evaluations, for
// users who spread a sweep over several machines with a batch system
// (GNU parallel, a Slurm array, a Kubernetes Indexed Job). Evaluation k of
// the canonical order, k = trial·len(Grid) + point, belongs to shard
// k mod Count: consecutive grid values go to different shards, so each
// shard gets its share of the cheap and of the expensive values. Index is
// 0-based, as JOB_COMPLETION_INDEX and `--array=0-…` in Slurm.
type Shard struct{ Index, Count int }

// MaxShards bounds the number of shards of a sweep.
const MaxShards = 100_000

// ParseShard reads "i/n" with 0 ≤ i < n ≤ MaxShards.
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(s, "/")
	i, err1 := readWhole(strings.TrimSpace(is)) // number.go: as every number
	n, err2 := readWhole(strings.TrimSpace(ns))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return Shard{}, Errorf("--shard %q: must be i/n, shard i (from 0) of n, e.g. 0/4", s)
	case n < 1 || n > MaxShards:
		return Shard{}, Errorf("--shard %q: the number of shards n must lie in 1..%d", s, MaxShards)
	case i == n:
		return Shard{}, Errorf("--shard %q: shard indices run from 0 to %d (with a Slurm array numbered from 1, pass $((SLURM_ARRAY_TASK_ID-1))/$SLURM_ARRAY_TASK_COUNT)", s, n-1)
	case i < 0 || i > n:
		return Shard{}, Errorf("--shard %q: the shard index i must lie in 0..%d", s, n-1)
	}
	return Shard{Index: int(i), Count: int(n)}, nil
}

func (sh Shard) String() string { return fmt.Sprintf("%d/%d", sh.Index, sh.Count) }

// Owns reports whether evaluation (point, trial) of a grid with `points`
// values belongs to the shard.
func (sh Shard) Owns(point, trial, points int) bool {
	return (trial*points+point)%sh.Count == sh.Index
}

// Evaluations returns how many evaluations of sc the shard holds.
func (sh Shard) Evaluations(sc Scenario) int {
	n := 0
	for t := 0; t < sc.Trials; t++ {
		for p := range sc.Sweep.Grid {
			if sh.Owns(p, t, len(sc.Sweep.Grid)) {
				n++
			}
		}
	}
	return n
}

// RunSweepShard is RunSweep restricted to the evaluations of one shard, in
// the same coarse-to-fine order.
func RunSweepShard(ctx context.Context, sc Scenario, sh Shard, emit func(TrialResult)) error {
	if err := sc.Validate(); err != nil {
		return err
	}
	fam, err := sc.sweeper()
	if err != nil {
		return err
	}
	var order []sweepTask
	for _, t := range sweepOrder(len(sc.Sweep.Grid), sc.Trials) {
		if sh.Owns(t.point, t.trial, len(sc.Sweep.Grid)) {
			order = append(order, t)
		}
	}
	return runTasks(ctx, sc, fam, order, emit)
}

// ShardHeader is the first JSON line of a shard file: what the evaluations
// were computed from, so that fedscope merge can check that shards belong
// together and rebuild the table. Args are the command-line inputs that
// built the scenario (replayed by merge); Fingerprint hashes the resolved
// scenario (family, preset, seed, rounds, trials, grid and every knob's
// value), so shards that agree on it computed the same sweep.
type ShardHeader struct {
	Record      string            `json:"record"` // "shard"
	Format      int               `json:"format"` // ShardFormat
	Version     string            `json:"version"`
	Shard       string            `json:"shard"` // "i/n"
	Evaluations int               `json:"evaluations"`
	Fingerprint string            `json:"fingerprint"`
	Family      string            `json:"family"`
	Preset      string            `json:"preset"`
	Seed        uint64            `json:"seed"`
	Rounds      int               `json:"rounds"`
	Trials      int               `json:"trials"`
	Knob        string            `json:"knob"`
	Grid        []float64         `json:"grid"`
	Labels      []string          `json:"labels"`
	Params      map[string]string `json:"params"`
	Args        ShardArgs         `json:"args"`
}

// ShardArgs are the command-line inputs of a sharded sweep; nil pointers
// were not given.
type ShardArgs struct {
	Preset string   `json:"preset"`
	Set    []string `json:"set,omitempty"`
	Seed   *uint64  `json:"seed,omitempty"`
	Rounds *int     `json:"rounds,omitempty"`
	Trials *int     `json:"trials,omitempty"`
}

// ShardFormat is the version of the shard file format.
const ShardFormat = 1

// shardTrial is one evaluation in a shard file. Values are written so that
// they read back bit for bit: finite numbers in the shortest form that
// round-trips, NaN and ±Inf as the strings "NaN", "+Inf", "-Inf".
type shardTrial struct {
	Record string       `json:"record"` // "trial"
	Point  int          `json:"point"`
	Trial  int          `json:"trial"`
	Values [][]exactNum `json:"values"`
}

type shardEnd struct {
	Record      string `json:"record"` // "end"
	Evaluations int    `json:"evaluations"`
}

// exactNum is a float64 that survives JSON exactly.
type exactNum float64

func (x exactNum) MarshalJSON() ([]byte, error) {
	v := float64(x)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

func (x *exactNum) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`:
		*x = exactNum(math.NaN())
		return nil
	case `"+Inf"`:
		*x = exactNum(math.Inf(1))
		return nil
	case `"-Inf"`:
		*x = exactNum(math.Inf(-1))
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("not a number: %s", b)
	}
	*x = exactNum(v)
	return nil
}

// NewShardHeader describes shard sh of sweep sc computed by `version` from
// the command-line inputs args.
func NewShardHeader(sc Scenario, sh Shard, version string, args ShardArgs) (*ShardHeader, error) {
	fam, err := sc.sweeper()
	if err != nil {
		return nil, err
	}
	params := map[string]string{}
	for _, k := range sc.Knobs() {
		params[k.Name] = k.Get(sc)
	}
	return &ShardHeader{Record: "shard", Format: ShardFormat, Version: version, Shard: sh.String(),
		Evaluations: sh.Evaluations(sc), Fingerprint: Fingerprint(sc), Family: sc.Family.Name(), Preset: sc.Preset,
		Seed: sc.Seed, Rounds: sc.Rounds, Trials: sc.Trials, Knob: sc.Sweep.Knob, Grid: sc.Sweep.Grid,
		Labels: fam.SweepLabels(sc), Params: params, Args: args}, nil
}

// Fingerprint hashes what decides a sweep's numbers: the family, preset,
// seed, rounds, trials, the swept knob and its grid, and every knob's value.
func Fingerprint(sc Scenario) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%d\x00%d\x00%s\x00", sc.Family.Name(), sc.Preset, sc.Seed, sc.Rounds, sc.Trials, sc.Sweep.Knob)
	for _, v := range sc.Sweep.Grid {
		fmt.Fprintf(h, "%s,", FormatFloat(v))
	}
	for _, k := range sc.Knobs() {
		fmt.Fprintf(h, "\x00%s=%s", k.Name, k.Get(sc))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// ShardWriter writes a shard file: the header, one line per evaluation as
// it finishes, and an end line once every evaluation of the shard is in.
type ShardWriter struct {
	w    *bufio.Writer
	enc  *json.Encoder
	want int
	done int
	err  error
}

// NewShardWriter writes h to w and returns the writer of the evaluations.
func NewShardWriter(w io.Writer, h *ShardHeader) *ShardWriter {
	bw := bufio.NewWriter(w)
	sw := &ShardWriter{w: bw, enc: json.NewEncoder(bw), want: h.Evaluations}
	sw.err = sw.enc.Encode(h)
	return sw
}

// Add writes one evaluation.
func (sw *ShardWriter) Add(r TrialResult) {
	if sw.err != nil {
		return
	}
	rec := shardTrial{Record: "trial", Point: r.Point, Trial: r.Trial, Values: make([][]exactNum, len(r.Values))}
	for i, row := range r.Values {
		rec.Values[i] = make([]exactNum, len(row))
		for j, v := range row {
			rec.Values[i][j] = exactNum(v)
		}
	}
	sw.err = sw.enc.Encode(rec)
	sw.done++
}

// Close writes the end line when the shard is complete and flushes; an
// incomplete shard (interrupted) has no end line, and merge refuses it.
func (sw *ShardWriter) Close() error {
	if sw.err == nil && sw.done == sw.want {
		sw.err = sw.enc.Encode(shardEnd{Record: "end", Evaluations: sw.done})
	}
	if err := sw.w.Flush(); sw.err == nil {
		sw.err = err
	}
	return sw.err
}

// Done returns the number of evaluations written.
func (sw *ShardWriter) Done() int { return sw.done }

// ShardFile is a shard read back: its header and evaluations.
type ShardFile struct {
	Name    string
	Header  ShardHeader
	Shard   Shard
	Results []TrialResult
	// Complete reports the end line: every evaluation of the shard was written.
	Complete bool
}

// ReadShard reads a shard file; name is used in errors. Any malformed line
// is an *InputError naming the file and line.
func ReadShard(r io.Reader, name string) (*ShardFile, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	f := &ShardFile{Name: name}
	line := 0
	bad := func(format string, args ...any) error {
		return Errorf("merge: %s:%d: %s", name, line, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		line++
		b := sc.Bytes()
		var kind struct{ Record string }
		if err := json.Unmarshal(b, &kind); err != nil {
			return nil, bad("not a JSON line (%v)", err)
		}
		switch {
		case line == 1 && kind.Record != "shard":
			return nil, bad("not a shard file of fedscope sweep --shard (its first line is not a shard record)")
		case kind.Record == "shard" && line > 1:
			return nil, bad("a second shard header: concatenated files? give them to merge separately")
		case kind.Record == "shard":
			if err := json.Unmarshal(b, &f.Header); err != nil {
				return nil, bad("malformed shard header (%v)", err)
			}
			if f.Header.Format != ShardFormat {
				return nil, bad("shard format %d, this fedscope reads format %d", f.Header.Format, ShardFormat)
			}
			sh, err := ParseShard(f.Header.Shard)
			if err != nil {
				return nil, bad("shard %q in the header: %v", f.Header.Shard, err)
			}
			f.Shard = sh
		case kind.Record == "trial":
			if f.Complete {
				return nil, bad("an evaluation after the end line")
			}
			var t shardTrial
			if err := json.Unmarshal(b, &t); err != nil {
				return nil, bad("malformed evaluation (%v)", err)
			}
			vals := make([][]float64, len(t.Values))
			for i, row := range t.Values {
				vals[i] = make([]float64, len(row))
				for j, v := range row {
					vals[i][j] = float64(v)
				}
			}
			f.Results = append(f.Results, TrialResult{Point: t.Point, Trial: t.Trial, Values: vals})
		case kind.Record == "end":
			var e shardEnd
			if err := json.Unmarshal(b, &e); err != nil || e.Evaluations != len(f.Results) {
				return nil, bad("the end line counts %d evaluations, the file holds %d", e.Evaluations, len(f.Results))
			}
			f.Complete = true
		default:
			return nil, bad("unknown record %q", kind.Record)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, Errorf("merge: %s: %v", name, err)
	}
	if line == 0 {
		return nil, Errorf("merge: %s: empty file, not a shard of fedscope sweep --shard", name)
	}
	return f, nil
}

// MergeShards checks that the shards are the n shards of one sweep, each
// complete, computed from the same scenario by the same fedscope, and
// returns the sweep table they make, identical to the unsharded sweep's.
// rebuild turns a header's command-line inputs back into the scenario
// (through the same path as `fedscope sweep`); version is the merging
// fedscope's. Every inconsistency is an *InputError.
func MergeShards(files []*ShardFile, version string, rebuild func(ShardArgs) (Scenario, error)) (*SweepTable, error) {
	if len(files) == 0 {
		return nil, Errorf("merge: no shard files given; usage: fedscope merge [--format csv|jsonl] [--out PATH] FILES…")
	}
	first := files[0]
	for _, f := range files[1:] {
		if err := sameSweep(first, f); err != nil {
			return nil, err
		}
	}
	h := first.Header
	if h.Version != version {
		return nil, Errorf("merge: %s was computed by fedscope %s, this is fedscope %s: merge with the version that computed the shards",
			first.Name, h.Version, version)
	}
	n := first.Shard.Count
	byIndex := make([]*ShardFile, n)
	for _, f := range files {
		if g := byIndex[f.Shard.Index]; g != nil {
			return nil, Errorf("merge: shard %s given twice (%s and %s)", f.Shard, g.Name, f.Name)
		}
		byIndex[f.Shard.Index] = f
	}
	var missing []string
	for i, f := range byIndex {
		if f == nil {
			missing = append(missing, Shard{Index: i, Count: n}.String())
		}
	}
	if len(missing) > 0 {
		return nil, Errorf("merge: shard %s missing (%d of %d given)", strings.Join(missing, ", "), len(files), n)
	}
	sc, err := rebuild(h.Args)
	if err != nil {
		return nil, Errorf("merge: %s: the sweep of its header cannot be rebuilt: %v", first.Name, err)
	}
	if fp := Fingerprint(sc); fp != h.Fingerprint {
		return nil, Errorf("merge: %s: its scenario does not rebuild to the same sweep here (fingerprint %s, rebuilt %s)",
			first.Name, h.Fingerprint, fp)
	}
	table, err := NewSweepTable(sc)
	if err != nil {
		return nil, err
	}
	points := len(sc.Sweep.Grid)
	seen := make([]bool, points*sc.Trials)
	for _, f := range byIndex {
		if !f.Complete || len(f.Results) != f.Header.Evaluations {
			return nil, Errorf("merge: %s (shard %s) is incomplete: %d of %d evaluations; run that shard again",
				f.Name, f.Shard, len(f.Results), f.Header.Evaluations)
		}
		for _, r := range f.Results {
			switch k := r.Trial*points + r.Point; {
			case r.Point < 0 || r.Point >= points || r.Trial < 0 || r.Trial >= sc.Trials:
				return nil, Errorf("merge: %s: evaluation (value %d, trial %d) is outside the sweep's %d values × %d trials",
					f.Name, r.Point, r.Trial, points, sc.Trials)
			case !f.Shard.Owns(r.Point, r.Trial, points):
				return nil, Errorf("merge: %s: evaluation (value %d, trial %d) does not belong to shard %s", f.Name, r.Point, r.Trial, f.Shard)
			case seen[k]:
				return nil, Errorf("merge: %s: evaluation (value %d, trial %d) appears twice", f.Name, r.Point, r.Trial)
			default:
				seen[k] = true
			}
			table.Add(r)
		}
	}
	return table, nil
}

// sameSweep explains how two shard headers differ, naming the first field
// that does, or returns nil when they belong to one sweep.
func sameSweep(a, b *ShardFile) error {
	ha, hb := a.Header, b.Header
	diff := func(what, x, y string) error {
		return Errorf("merge: %s and %s are shards of different sweeps: %s %s vs %s", a.Name, b.Name, what, x, y)
	}
	switch {
	case ha.Version != hb.Version:
		return diff("fedscope version", ha.Version, hb.Version)
	case ha.Family != hb.Family || ha.Preset != hb.Preset:
		return diff("preset", ha.Preset, hb.Preset)
	case ha.Seed != hb.Seed:
		return diff("seed", strconv.FormatUint(ha.Seed, 10), strconv.FormatUint(hb.Seed, 10))
	case ha.Trials != hb.Trials:
		return diff("trials", strconv.Itoa(ha.Trials), strconv.Itoa(hb.Trials))
	case ha.Rounds != hb.Rounds:
		return diff("rounds", strconv.Itoa(ha.Rounds), strconv.Itoa(hb.Rounds))
	case a.Shard.Count != b.Shard.Count:
		return diff("number of shards", strconv.Itoa(a.Shard.Count), strconv.Itoa(b.Shard.Count))
	}
	names := make([]string, 0, len(ha.Params))
	for k := range ha.Params {
		names = append(names, k)
	}
	for k := range hb.Params {
		if _, ok := ha.Params[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		if ha.Params[k] != hb.Params[k] {
			return diff(k, ha.Params[k], hb.Params[k])
		}
	}
	if ha.Fingerprint != hb.Fingerprint {
		return diff("scenario fingerprint", ha.Fingerprint, hb.Fingerprint)
	}
	return nil
}
