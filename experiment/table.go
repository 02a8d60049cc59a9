package experiment

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
)

// Format is an export format.
type Format int

// Export formats.
const (
	CSV Format = iota
	JSONL
)

// ParseFormat reads "csv" or "jsonl".
func ParseFormat(s string) (Format, error) {
	switch s {
	case "csv":
		return CSV, nil
	case "jsonl":
		return JSONL, nil
	}
	return 0, Errorf("--format %q: allowed formats are csv and jsonl", s)
}

// Table collects the rounds of a race per racer, in round order, whatever
// order they arrived in; its output is therefore the same on any number of
// CPUs.
type Table struct {
	Labels  []string
	Metrics []Metric // the columns after algorithm,round
	Rounds  [][]Round
	// Header, when set, is written as the first JSON line: what the rows
	// were computed from (see WriteHeader).
	Header *Header
}

// Header describes a run for the first JSON line: the preset, seed and
// rounds, the family's summary, and the facts of the prepared data.
type Header struct {
	Preset, Family, Summary string
	Seed                    uint64
	Rounds                  int
	Params                  []Param
	Notes, Warnings         []string
	Columns                 []Metric // what each metric column holds
}

// NewHeader describes a run of sc on data with facts f.
func NewHeader(sc Scenario, f Facts) *Header {
	return &Header{Preset: sc.Preset, Family: sc.Family.Name(), Summary: f.Summary, Seed: sc.Seed, Rounds: sc.Rounds,
		Params: f.Params, Notes: f.Notes, Warnings: f.Warnings, Columns: sc.Family.Metrics(sc)}
}

// MarshalJSON writes the header as {"record":"header",…} with the params as
// an object in their order, each {"value":…,"how":…}.
func (h *Header) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	str := func(s string) string { q, _ := json.Marshal(s); return string(q) }
	fmt.Fprintf(&b, `{"record":"header","preset":%s,"family":%s,"seed":%d,"rounds":%d,"summary":%s`,
		str(h.Preset), str(h.Family), h.Seed, h.Rounds, str(h.Summary))
	if len(h.Params) > 0 {
		b.WriteString(`,"params":{`)
		for i, p := range h.Params {
			if i > 0 {
				b.WriteByte(',')
			}
			v := Number(p.Value)
			if v == "" {
				v = "null"
			}
			fmt.Fprintf(&b, `%s:{"value":%s,"how":%s}`, str(p.Name), v, str(p.How))
		}
		b.WriteByte('}')
	}
	if len(h.Columns) > 0 {
		b.WriteString(`,"columns":{`)
		for i, m := range h.Columns {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `%s:%s`, str(m.Name), str(m.Caption))
		}
		b.WriteByte('}')
	}
	for _, list := range []struct {
		key  string
		vals []string
	}{{"notes", h.Notes}, {"warnings", h.Warnings}} {
		if len(list.vals) > 0 {
			q, _ := json.Marshal(list.vals)
			fmt.Fprintf(&b, `,%s:%s`, str(list.key), q)
		}
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// NewTable prepares a table for the racers and metrics of a scenario.
func NewTable(sc Scenario) *Table {
	labels := sc.Labels()
	return &Table{Labels: labels, Metrics: sc.Family.Metrics(sc), Rounds: make([][]Round, len(labels))}
}

// Add records one point. The model θ_t is dropped: the table keeps metrics
// only, so a long run costs a few dozen bytes per round rather than d
// numbers.
func (t *Table) Add(p Point) {
	p.Round.Theta = nil
	t.Rounds[p.Racer] = append(t.Rounds[p.Racer], p.Round)
}

// Len returns the number of rows.
func (t *Table) Len() int {
	n := 0
	for _, rs := range t.Rounds {
		n += len(rs)
	}
	return n
}

// Snapshot returns a copy of the table that stays valid while the original
// keeps growing (rounds are values and are never modified once added).
func (t *Table) Snapshot() *Table {
	s := &Table{Labels: t.Labels, Metrics: t.Metrics, Rounds: make([][]Round, len(t.Rounds)), Header: t.Header}
	for i, rs := range t.Rounds {
		s.Rounds[i] = rs[:len(rs):len(rs)]
	}
	return s
}

// Write prints one row per (racer, round), racers in order, rounds
// ascending. CSV has the header algorithm,round,<metrics>; JSON lines carry
// the same keys, without the metrics that were not measured, plus the
// clients' cluster assignment where there is one. Numbers use the shortest
// representation that reads back exactly; a value that is not measured is an
// empty cell.
func (t *Table) Write(w io.Writer, f Format) error {
	bw := bufio.NewWriter(w)
	if f == CSV {
		cw := csv.NewWriter(bw)
		header := []string{"algorithm", "round"}
		for _, m := range t.Metrics {
			header = append(header, m.Name)
		}
		cw.Write(header)
		row := make([]string, len(header))
		for i, rs := range t.Rounds {
			for k := range rs {
				r := &rs[k]
				row[0], row[1] = t.Labels[i], strconv.Itoa(r.Index)
				for m := range t.Metrics {
					row[2+m] = Number(r.Value(m))
				}
				cw.Write(row)
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		return bw.Flush()
	}
	if t.Header != nil {
		h, _ := t.Header.MarshalJSON()
		bw.Write(h)
		bw.WriteByte('\n')
	}
	keys := make([][]byte, len(t.Metrics))
	for m, metric := range t.Metrics {
		keys[m], _ = json.Marshal(metric.Name)
	}
	for i, rs := range t.Rounds {
		label, _ := json.Marshal(t.Labels[i])
		for k := range rs {
			r := &rs[k]
			fmt.Fprintf(bw, `{"algorithm":%s,"round":%d`, label, r.Index)
			for m := range t.Metrics {
				if v := r.Value(m); finite(v) {
					fmt.Fprintf(bw, `,%s:%s`, keys[m], Number(v))
				}
			}
			if r.Assign != nil {
				assign, _ := json.Marshal(r.Assign)
				fmt.Fprintf(bw, `,"assignment":%s`, assign)
			}
			if r.Warning != "" {
				warn, _ := json.Marshal(r.Warning)
				fmt.Fprintf(bw, `,"warning":%s`, warn)
			}
			bw.WriteString("}\n")
		}
	}
	return bw.Flush()
}

// Number writes v in the shortest form that reads back exactly, or "" when
// it is not finite.
func Number(v float64) string {
	if !finite(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// ExportNew writes a new file named base+ext in the working directory, or
// base-2+ext, base-3+ext, … if that exists: an export never overwrites.
func ExportNew(base, ext string, write func(io.Writer) error) (string, error) {
	for i := 1; i < 1000; i++ {
		path := base + ext
		if i > 1 {
			path = fmt.Sprintf("%s-%d%s", base, i, ext)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if err := write(f); err != nil {
			f.Close()
			os.Remove(path)
			return "", err
		}
		return path, f.Close()
	}
	return "", fmt.Errorf("%s%s: too many exports with this name", base, ext)
}
