package experiment

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
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

// A shard file (format 2) is JSON lines, each one JSON object:
//
//   - line 1, the header (ShardHeader): what the evaluations were computed
//     from and by which build of fedscope;
//   - one line per evaluation (shardTrial): its grid value, its trial and
//     its raw numbers, one row per curve of the sweep;
//   - last, once every evaluation of the shard is in, the end line
//     (shardEnd) with their count.
//
// Every line ends with a "digest" field, the last of its object: the
// SHA-256, in hexadecimal, of the previous line's digest (nothing for the
// header) followed by the line as it would be without its digest field
// (the object closed right after the field before). The chain makes a
// change to any line, a removed, repeated or reordered line, and lines
// spliced from another shard show at the first line they affect. It
// guards against accidents (an edit, a script, a broken copy), not
// against forgery: whoever edits a shard on purpose can compute the
// digests again.

// ShardHeader is the first line of a shard file: what the evaluations
// were computed from, so that fedscope merge can check that shards belong
// together and rebuild the table. Args are the command-line inputs that
// built the scenario (replayed by merge); Fingerprint hashes the resolved
// scenario (family, preset, seed, rounds, trials, grid and every knob's
// value, racers written in one canonical form), so shards that agree on
// it computed the same sweep. Build fingerprints the fedscope binary that
// computed them (a hash of the executable): it changes with the code,
// whether or not the build recorded a version.
type ShardHeader struct {
	Record      string            `json:"record"` // "shard"
	Format      int               `json:"format"` // ShardFormat
	Version     string            `json:"version"`
	Build       string            `json:"build"`
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

// ShardFormat is the version of the shard file format: 2 added the build
// fingerprint and the digests (format 1 had neither).
const ShardFormat = 2

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

// Canonicalizer may be implemented by a family's Sweeps part when its
// sweeps can be written in several ways that compute the same numbers (a
// racer pinning an option to the value the scenario gives it anyway, a
// racer listed twice): Canonical returns one form of the configuration,
// which the shard header's parameters and fingerprint describe, so that
// shards of equivalent spellings merge. It must never make two
// configurations that compute different numbers equal.
type Canonicalizer[C any] interface {
	Canonical(sc Scenario, c C) C
}

// canonical returns sc in its family's canonical form (sc itself when the
// family has none).
func canonical(sc Scenario) Scenario {
	if c, ok := sc.Family.Sweeps().(interface{ canonical(Scenario) Scenario }); ok {
		return c.canonical(sc)
	}
	return sc
}

// NewShardHeader describes shard sh of sweep sc computed by the fedscope
// of the given version and build fingerprint from the command-line inputs
// args.
func NewShardHeader(sc Scenario, sh Shard, version, build string, args ShardArgs) (*ShardHeader, error) {
	fam, err := sc.sweeper()
	if err != nil {
		return nil, err
	}
	params := map[string]string{}
	canon := canonical(sc)
	for _, k := range canon.Knobs() {
		params[k.Name] = k.Get(canon)
	}
	return &ShardHeader{Record: "shard", Format: ShardFormat, Version: version, Build: build, Shard: sh.String(),
		Evaluations: sh.Evaluations(sc), Fingerprint: Fingerprint(sc), Family: sc.Family.Name(), Preset: sc.Preset,
		Seed: sc.Seed, Rounds: sc.Rounds, Trials: sc.Trials, Knob: sc.Sweep.Knob, Grid: sc.Sweep.Grid,
		Labels: fam.SweepLabels(sc), Params: params, Args: args}, nil
}

// Fingerprint hashes what decides a sweep's numbers: the family, preset,
// seed, rounds, trials, the swept knob and its grid, and every knob's value
// in the family's canonical form.
func Fingerprint(sc Scenario) string {
	sc = canonical(sc)
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

// digestField is how the digest of a line begins; digestLen is the length
// of the field with its value and the object's closing brace.
const (
	digestField = `,"digest":"`
	digestLen   = len(digestField) + 2*sha256.Size + len(`"}`)
)

// lineDigest is the digest of a line: SHA-256 of the previous line's
// digest followed by the line's body (the line without its digest field).
func lineDigest(prev string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(prev))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// splitDigest returns the body a line was signed as and its digest, or
// ok false when the line does not end with a digest field.
func splitDigest(line []byte) (body []byte, digest string, ok bool) {
	n := len(line) - digestLen
	if n < 2 || string(line[n:n+len(digestField)]) != digestField || string(line[len(line)-2:]) != `"}` {
		return nil, "", false
	}
	digest = string(line[n+len(digestField) : len(line)-2])
	if strings.Trim(digest, "0123456789abcdef") != "" {
		return nil, "", false
	}
	return append(slices.Clip(line[:n]), '}'), digest, true
}

// ShardWriter writes a shard file: the header, one line per evaluation,
// and an end line once every evaluation of the shard is in, each line with
// its digest.
type ShardWriter struct {
	w    *bufio.Writer
	prev string // the digest of the last line written
	want int
	done int
	err  error
}

// NewShardWriter writes h to w and returns the writer of the evaluations.
func NewShardWriter(w io.Writer, h *ShardHeader) *ShardWriter {
	sw := &ShardWriter{w: bufio.NewWriter(w), want: h.Evaluations}
	sw.line(h)
	return sw
}

// line writes one record with its digest.
func (sw *ShardWriter) line(rec any) {
	if sw.err != nil {
		return
	}
	body, err := json.Marshal(rec)
	if err != nil {
		sw.err = err
		return
	}
	sw.prev = lineDigest(sw.prev, body)
	sw.w.Write(body[:len(body)-1])
	sw.w.WriteString(digestField)
	sw.w.WriteString(sw.prev)
	_, sw.err = sw.w.WriteString("\"}\n")
}

// Add writes one evaluation.
func (sw *ShardWriter) Add(r TrialResult) {
	rec := shardTrial{Record: "trial", Point: r.Point, Trial: r.Trial, Values: make([][]exactNum, len(r.Values))}
	for i, row := range r.Values {
		rec.Values[i] = make([]exactNum, len(row))
		for j, v := range row {
			rec.Values[i][j] = exactNum(v)
		}
	}
	sw.line(rec)
	sw.done++
}

// Close writes the end line when the shard is complete and flushes; an
// incomplete shard (interrupted) has no end line, and merge refuses it.
func (sw *ShardWriter) Close() error {
	if sw.done == sw.want {
		sw.line(shardEnd{Record: "end", Evaluations: sw.done})
	}
	if err := sw.w.Flush(); sw.err == nil {
		sw.err = err
	}
	return sw.err
}

// Done returns the number of evaluations written.
func (sw *ShardWriter) Done() int { return sw.done }

// ShardFile is a shard read back: its header and evaluations, each line
// checked against its digest.
type ShardFile struct {
	Name    string
	Header  ShardHeader
	Shard   Shard
	Results []TrialResult
	Lines   []int // the line of each result
	// Complete reports the end line: every evaluation of the shard was written.
	Complete bool
	LastLine int // the number of the file's last line
}

// maxShardLine bounds a line of a shard file (an evaluation of a long
// federation-gain curve is a few megabytes).
const maxShardLine = 1 << 30

// ReadShard reads a shard file; name is used in errors. Every problem is
// an *InputError naming the file and line: a line that is not JSON, lacks
// its digest or does not match it, an evaluation outside the shard or the
// sweep, repeated, or without a row for every curve of the sweep.
func ReadShard(r io.Reader, name string) (*ShardFile, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	rd := &shardReader{f: &ShardFile{Name: name}, seen: map[[2]int]int{}}
	for {
		b, err := readLine(br)
		if err == io.EOF {
			break
		}
		rd.line++
		rd.f.LastLine = rd.line
		if errors.Is(err, errLongLine) || errors.Is(err, io.ErrUnexpectedEOF) || err == nil {
			err = rd.add(b, err)
		} else {
			return nil, Errorf("merge: %s: cannot read the file: %v", name, err)
		}
		if err != nil {
			return nil, Errorf("merge: %s:%d: %v", name, rd.line, err)
		}
	}
	if rd.line == 0 {
		return nil, Errorf("merge: %s: empty file, not a shard of fedscope sweep --shard", name)
	}
	return rd.f, nil
}

// shardReader is ReadShard's state between lines.
type shardReader struct {
	f    *ShardFile
	line int
	prev string         // the digest of the previous line
	seen map[[2]int]int // (point, trial) → line
}

// again is the advice after a damaged line.
func (rd *shardReader) again() string {
	if rd.f.Header.Shard == "" {
		return "compute it again"
	}
	return "run shard " + rd.f.Header.Shard + " again"
}

// add reads one line (readErr: how readLine ended it) into the file, and
// says what is wrong with it.
func (rd *shardReader) add(b []byte, readErr error) error {
	switch {
	case errors.Is(readErr, errLongLine):
		return fmt.Errorf("a line longer than %d bytes: not a shard file of fedscope sweep --shard", maxShardLine)
	case errors.Is(readErr, io.ErrUnexpectedEOF):
		return fmt.Errorf("the file ends in the middle of this line (no newline): it was cut short; %s", rd.again())
	case rd.line == 1:
		if err := checkFirstLine(b); err != nil {
			return err
		}
	}
	if rd.f.Complete {
		return fmt.Errorf("a line after the end line: concatenated files? give each shard to merge as its own file")
	}
	body, err := rd.verify(b)
	if err != nil {
		return err
	}
	var kind struct{ Record string }
	if err := json.Unmarshal(body, &kind); err != nil {
		return fmt.Errorf("not a JSON line (%v)", err)
	}
	switch kind.Record {
	case "shard":
		if rd.line > 1 {
			return fmt.Errorf("a second shard header: concatenated files? give each shard to merge as its own file")
		}
		return rd.f.readHeader(body)
	case "trial":
		return rd.addTrial(body)
	case "end":
		return rd.f.readEnd(body)
	}
	return fmt.Errorf("unknown record %q", kind.Record)
}

// checkFirstLine refuses a file that is not a shard of this format.
func checkFirstLine(b []byte) error {
	var head struct {
		Record string
		Format int
	}
	switch err := json.Unmarshal(b, &head); {
	case err != nil:
		return fmt.Errorf("not a shard file of fedscope sweep --shard (its first line is not JSON)")
	case head.Record != "shard":
		return fmt.Errorf("not a shard file of fedscope sweep --shard (its first line is not a shard header)")
	case head.Format != ShardFormat:
		return fmt.Errorf("shard format %d, this fedscope reads format %d: compute the shard again with this fedscope", head.Format, ShardFormat)
	}
	return nil
}

// verify checks a line against its digest, chained to the previous line's,
// and returns the line without its digest field.
func (rd *shardReader) verify(b []byte) ([]byte, error) {
	body, digest, ok := splitDigest(b)
	switch {
	case !ok:
		return nil, fmt.Errorf("the line has no digest at its end: it was changed after fedscope wrote it; %s", rd.again())
	case digest != lineDigest(rd.prev, body) && rd.line == 1:
		return nil, fmt.Errorf("the header does not match its digest: it was changed after fedscope wrote it; %s", rd.again())
	case digest != lineDigest(rd.prev, body):
		return nil, fmt.Errorf("the line does not match its digest: it was changed after fedscope wrote it, or a line before it was removed, repeated or moved; %s", rd.again())
	}
	rd.prev = digest
	return body, nil
}

// addTrial reads an evaluation line into the file, refusing a repeated one.
func (rd *shardReader) addTrial(body []byte) error {
	r, err := rd.f.readTrial(body)
	if err != nil {
		return err
	}
	k := [2]int{r.Point, r.Trial}
	if l, twice := rd.seen[k]; twice {
		return fmt.Errorf("evaluation (value %d, trial %d) appears twice (also on line %d)", r.Point, r.Trial, l)
	}
	rd.seen[k] = rd.line
	rd.f.Results = append(rd.f.Results, r)
	rd.f.Lines = append(rd.f.Lines, rd.line)
	return nil
}

// readEnd reads the end line, which must count the evaluations.
func (f *ShardFile) readEnd(body []byte) error {
	var e shardEnd
	if err := json.Unmarshal(body, &e); err != nil || e.Evaluations != len(f.Results) || e.Evaluations != f.Header.Evaluations {
		return fmt.Errorf("the end line counts %d evaluations; the file holds %d, the header announces %d",
			e.Evaluations, len(f.Results), f.Header.Evaluations)
	}
	f.Complete = true
	return nil
}

// readHeader reads and checks the header line.
func (f *ShardFile) readHeader(body []byte) error {
	h := &f.Header
	if err := json.Unmarshal(body, h); err != nil {
		return fmt.Errorf("malformed shard header (%v)", err)
	}
	sh, err := ParseShard(h.Shard)
	if err != nil {
		return fmt.Errorf("shard %q in the header: %v", h.Shard, err)
	}
	f.Shard = sh
	if h.Trials < 1 || h.Trials > MaxTrials || len(h.Grid) == 0 || len(h.Labels) == 0 {
		return fmt.Errorf("the header describes no sweep (%d values, %d trials, %d curves)", len(h.Grid), h.Trials, len(h.Labels))
	}
	n := 0
	for t := 0; t < h.Trials; t++ {
		for p := range h.Grid {
			if sh.Owns(p, t, len(h.Grid)) {
				n++
			}
		}
	}
	if h.Evaluations != n {
		return fmt.Errorf("the header announces %d evaluations, shard %s of %d values × %d trials has %d", h.Evaluations, sh, len(h.Grid), h.Trials, n)
	}
	return nil
}

// readTrial reads an evaluation line and checks that it belongs to the
// shard and has a row of numbers for every curve of the sweep.
func (f *ShardFile) readTrial(body []byte) (TrialResult, error) {
	h := &f.Header
	if h.Shard == "" {
		return TrialResult{}, fmt.Errorf("an evaluation before the shard header")
	}
	var t shardTrial
	if err := json.Unmarshal(body, &t); err != nil {
		return TrialResult{}, fmt.Errorf("malformed evaluation (%v)", err)
	}
	points := len(h.Grid)
	switch {
	case t.Point < 0 || t.Point >= points || t.Trial < 0 || t.Trial >= h.Trials:
		return TrialResult{}, fmt.Errorf("evaluation (value %d, trial %d) is outside the sweep's %d values × %d trials", t.Point, t.Trial, points, h.Trials)
	case !f.Shard.Owns(t.Point, t.Trial, points):
		return TrialResult{}, fmt.Errorf("evaluation (value %d, trial %d) does not belong to shard %s", t.Point, t.Trial, f.Shard)
	case len(t.Values) != len(h.Labels):
		return TrialResult{}, fmt.Errorf("evaluation (value %d, trial %d) has %d rows of numbers, the sweep has %d curves (%s): an incomplete evaluation",
			t.Point, t.Trial, len(t.Values), len(h.Labels), strings.Join(h.Labels, ", "))
	}
	vals := make([][]float64, len(t.Values))
	for i, row := range t.Values {
		if len(row) == 0 {
			return TrialResult{}, fmt.Errorf("evaluation (value %d, trial %d) has no numbers for %s: an incomplete evaluation", t.Point, t.Trial, h.Labels[i])
		}
		vals[i] = make([]float64, len(row))
		for j, v := range row {
			vals[i][j] = float64(v)
		}
	}
	return TrialResult{Point: t.Point, Trial: t.Trial, Values: vals}, nil
}

var errLongLine = errors.New("line too long")

// readLine returns the next line without its newline: io.EOF at the end,
// io.ErrUnexpectedEOF for a last line without a newline (a cut file),
// errLongLine beyond maxShardLine.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > maxShardLine {
			return nil, errLongLine
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) == 0:
			return nil, io.EOF
		case errors.Is(err, io.EOF):
			return line, io.ErrUnexpectedEOF
		}
		return nil, err
	}
}

// MergeShards checks that the shards are the n shards of one sweep, each
// complete, computed from the same scenario by this very build of
// fedscope, and returns the sweep table they make, identical to the
// unsharded sweep's. rebuild turns a header's command-line inputs back
// into the scenario (through the same path as `fedscope sweep`); version
// and build are the merging fedscope's. Every inconsistency is an
// *InputError naming the file (and the line where there is one).
func MergeShards(files []*ShardFile, version, build string, rebuild func(ShardArgs) (Scenario, error)) (*SweepTable, error) {
	if len(files) == 0 {
		return nil, Errorf("merge: no shard files given; usage: fedscope merge [--format csv|jsonl] [--out PATH] FILES…")
	}
	if err := sameBuild(files, version, build); err != nil {
		return nil, err
	}
	for _, f := range files[1:] {
		if err := sameSweep(files[0], f); err != nil {
			return nil, err
		}
	}
	byIndex, err := inShardOrder(files)
	if err != nil {
		return nil, err
	}
	for _, f := range byIndex {
		if err := f.complete(); err != nil {
			return nil, err
		}
	}
	// Shard 0 is replayed, whatever order the files came in: the table
	// is the unsharded sweep's for the spelling of its command line.
	table, err := rebuildTable(byIndex[0], rebuild)
	if err != nil {
		return nil, err
	}
	if err := sameShape(byIndex); err != nil {
		return nil, err
	}
	for _, f := range byIndex {
		for _, r := range f.Results {
			table.Add(r)
		}
	}
	return table, nil
}

// sameBuild refuses shards computed by another build of fedscope than the
// merging one.
func sameBuild(files []*ShardFile, version, build string) error {
	for _, f := range files {
		if h := f.Header; h.Build != build {
			return Errorf("merge: %s:1: computed by another build of fedscope (version %s, build %s), not by this one (version %s, build %s): "+
				"merge with the fedscope that computed the shards, and compute every shard with the same binary",
				f.Name, h.Version, short(h.Build), version, short(build))
		}
	}
	return nil
}

// inShardOrder returns the files by shard index, refusing a shard given
// twice or missing.
func inShardOrder(files []*ShardFile) ([]*ShardFile, error) {
	n := files[0].Shard.Count
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
	return byIndex, nil
}

// complete refuses a shard without its end line, saying where it ends.
func (f *ShardFile) complete() error {
	if f.Complete {
		return nil
	}
	what := fmt.Sprintf("after %d of its %d evaluations", len(f.Results), f.Header.Evaluations)
	if len(f.Results) == f.Header.Evaluations {
		what = fmt.Sprintf("after all %d of its evaluations", len(f.Results))
	}
	return Errorf("merge: %s:%d: the file ends here, %s, without the end line fedscope writes last: "+
		"the run was interrupted or the file cut short; run shard %s again", f.Name, f.LastLine, what, f.Shard)
}

// rebuildTable rebuilds the sweep of a shard's header and returns its
// empty table, refusing a header that does not rebuild to the sweep it
// describes.
func rebuildTable(head *ShardFile, rebuild func(ShardArgs) (Scenario, error)) (*SweepTable, error) {
	sc, err := rebuild(head.Header.Args)
	if err != nil {
		return nil, Errorf("merge: %s:1: the sweep of its header cannot be rebuilt: %v", head.Name, err)
	}
	if fp := Fingerprint(sc); fp != head.Header.Fingerprint {
		return nil, Errorf("merge: %s:1: its scenario does not rebuild to the same sweep here (fingerprint %s, rebuilt %s)",
			head.Name, head.Header.Fingerprint, fp)
	}
	table, err := NewSweepTable(sc)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(table.Labels, head.Header.Labels) {
		return nil, Errorf("merge: %s:1: the header names the curves %s, the rebuilt sweep %s",
			head.Name, strings.Join(head.Header.Labels, ", "), strings.Join(table.Labels, ", "))
	}
	return table, nil
}

// short abbreviates a build fingerprint for a message.
func short(build string) string {
	if len(build) > 19 {
		return build[:19] + "…"
	}
	if build == "" {
		return "unknown"
	}
	return build
}

// sameShape checks that every evaluation has as many numbers per curve as
// the others: a family's evaluations of one sweep have one shape (the
// same rows, each as long at every value and trial), so a row shorter or
// longer than the rest is an evaluation that was not written whole. The
// length most evaluations have is taken as the sweep's.
func sameShape(files []*ShardFile) error {
	curves := len(files[0].Header.Labels)
	counts := make([]map[int]int, curves)
	for i := range counts {
		counts[i] = map[int]int{}
	}
	for _, f := range files {
		for _, r := range f.Results {
			for i, row := range r.Values {
				counts[i][len(row)]++
			}
		}
	}
	want := make([]int, curves)
	for i, c := range counts {
		for n, k := range c {
			if k > c[want[i]] || (k == c[want[i]] && n > want[i]) {
				want[i] = n
			}
		}
	}
	for _, f := range files {
		for k, r := range f.Results {
			for i, row := range r.Values {
				if len(row) != want[i] {
					return Errorf("merge: %s:%d: evaluation (value %d, trial %d) has %d numbers for %s, the other evaluations %d: an incomplete evaluation",
						f.Name, f.Lines[k], r.Point, r.Trial, len(row), f.Header.Labels[i], want[i])
				}
			}
		}
	}
	return nil
}

// sameSweep explains how two shard headers differ, naming the first field
// that does, or returns nil when they belong to one sweep.
func sameSweep(a, b *ShardFile) error {
	ha, hb := a.Header, b.Header
	diff := func(what, x, y string) error {
		return Errorf("merge: %s and %s are shards of different sweeps: %s %s vs %s", a.Name, b.Name, what, x, y)
	}
	switch {
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
