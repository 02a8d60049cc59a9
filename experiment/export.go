package experiment

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/fedscope/fedscope/algorithms"
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
	return 0, &InputError{Msg: fmt.Sprintf("--format %q: allowed formats are csv and jsonl", s)}
}

// Table collects the rounds of a race per racer, in round order, whatever
// order they arrived in; its output is therefore the same on any number of
// CPUs.
type Table struct {
	Labels  []string
	Rounds  [][]algorithms.Round
	Columns []Column // the metric columns after algorithm,round
	LSError float64  // error of pooled least squares, the reference line
}

// NewTable prepares a table for the racers of a scenario, with the metric
// columns of its family; lsError is NaN until the data are prepared.
func NewTable(sc Scenario, lsError float64) *Table {
	racers := sc.Resolve()
	t := &Table{Labels: make([]string, len(racers)), Rounds: make([][]algorithms.Round, len(racers)),
		Columns: columnsFor(sc.Family), LSError: lsError}
	for i, r := range racers {
		t.Labels[i] = r.Label
	}
	return t
}

// Add records one point.
// The model θ_t is dropped: the table keeps metrics only, so a long run
// costs a few dozen bytes per round rather than d numbers.
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

// Column is one metric column of the run output, named in snake_case. A
// metric that does not apply (NaN) is left empty in CSV and omitted in JSON
// lines.
type Column struct {
	Name string
	Get  func(t *Table, r *algorithms.Round) float64
}

// linearColumns are the metrics of the linear-regression family (paper 000).
var linearColumns = []Column{
	{"grad_norm", func(_ *Table, r *algorithms.Round) float64 { return r.GradNorm }},
	{"est_error", func(_ *Table, r *algorithms.Round) float64 { return r.EstError }},
	{"client_error", func(_ *Table, r *algorithms.Round) float64 { return r.ClientError }},
	{"ls_error", func(t *Table, _ *algorithms.Round) float64 { return t.LSError }},
}

// columnsFor returns the metric columns of a family.
func columnsFor(f Family) []Column {
	switch f {
	case FamilyNewton:
		return newtonColumns
	case FamilyLowRank:
		return lowRankColumns
	case FamilyMixture:
		return mixtureColumns
	default:
		return linearColumns
	}
}

// Write prints one row per (racer, round), racers in order, rounds ascending.
// Numbers use the shortest representation that reads back exactly.
func (t *Table) Write(w io.Writer, f Format) error {
	bw := bufio.NewWriter(w)
	if f == CSV {
		bw.WriteString("algorithm,round")
		for _, c := range t.Columns {
			bw.WriteString("," + c.Name)
		}
		bw.WriteString("\n")
	}
	for i, rs := range t.Rounds {
		for k := range rs {
			r := &rs[k]
			if f == CSV {
				bw.WriteString(csvField(t.Labels[i]) + "," + strconv.Itoa(r.Index))
				for _, c := range t.Columns {
					bw.WriteString("," + number(c.Get(t, r)))
				}
			} else {
				label, _ := json.Marshal(t.Labels[i])
				fmt.Fprintf(bw, `{"algorithm":%s,"round":%d`, label, r.Index)
				for _, c := range t.Columns {
					if v := c.Get(t, r); !math.IsNaN(v) && !math.IsInf(v, 0) {
						fmt.Fprintf(bw, `,%q:%s`, c.Name, number(v))
					}
				}
				if r.Assign != nil {
					writeAssignment(bw, r.Assign)
				}
				bw.WriteString("}")
			}
			bw.WriteString("\n")
		}
	}
	return bw.Flush()
}

func number(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// Snapshot returns a copy of the table that stays valid while the original
// keeps growing (rounds are values and are never modified once added).
func (t *Table) Snapshot() *Table {
	s := &Table{Labels: append([]string(nil), t.Labels...), Rounds: make([][]algorithms.Round, len(t.Rounds)),
		Columns: t.Columns, LSError: t.LSError}
	for i, rs := range t.Rounds {
		s.Rounds[i] = rs[:len(rs):len(rs)]
	}
	return s
}

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

// writeAssignment adds the assignment vector of a clustered round to a JSON
// line: "assignment":[z_1,…,z_M], each the true cluster the client's pick is
// matched with (PAPERS.md §5.4).
func writeAssignment(bw *bufio.Writer, assign []int) {
	bw.WriteString(`,"assignment":[`)
	for i, z := range assign {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString(strconv.Itoa(z))
	}
	bw.WriteByte(']')
}
