package experiment

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Frame is a table as its CSV holds it: the header, and per row the racer
// (the algorithm column) and the numbers of the other columns (NaN for an
// empty cell). `fedscope reproduce` reads its claims and draws its figures
// from the frames of the CSV files it wrote, so that the report, the
// figures and the files cannot disagree.
type Frame struct {
	Columns []string    // the header: algorithm, then round or the swept knob, …
	Racers  []string    // the algorithm of each row
	Rows    [][]float64 // the other columns of each row
}

// ReadFrame reads a CSV table written by Table.Write or SweepTable.Write.
func ReadFrame(r io.Reader) (*Frame, error) {
	cr := csv.NewReader(r)
	records, err := cr.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(records) == 0 || len(records[0]) < 2 || records[0][0] != "algorithm" {
		return nil, fmt.Errorf("not a fedscope table: the header must start with algorithm")
	}
	f := &Frame{Columns: records[0]}
	for i, rec := range records[1:] {
		row := make([]float64, len(rec)-1)
		for k, cell := range rec[1:] {
			if cell == "" {
				row[k] = math.NaN()
				continue
			}
			if row[k], err = strconv.ParseFloat(cell, 64); err != nil {
				return nil, fmt.Errorf("row %d, column %s: %q is not a number", i+2, f.Columns[k+1], cell)
			}
		}
		f.Racers = append(f.Racers, rec[0])
		f.Rows = append(f.Rows, row)
	}
	return f, nil
}

// FrameOf writes a table as CSV and reads it back: the frame of exactly
// the rows a CSV file of it holds.
func FrameOf(write func(io.Writer, Format) error) (*Frame, error) {
	var b bytes.Buffer
	if err := write(&b, CSV); err != nil {
		return nil, err
	}
	return ReadFrame(&b)
}

// Column returns the position of a column among Rows' values, or −1 (the
// algorithm column has none).
func (f *Frame) Column(name string) int {
	for i, c := range f.Columns[1:] {
		if c == name {
			return i
		}
	}
	return -1
}

// Labels lists the racers in the order their rows first appear.
func (f *Frame) Labels() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range f.Racers {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// Series returns the racer's values of column y against column x in row
// order, leaving out rows whose x is empty.
func (f *Frame) Series(racer, x, y string) (xs, ys []float64, err error) {
	cx, cy := f.Column(x), f.Column(y)
	switch {
	case cx < 0:
		return nil, nil, fmt.Errorf("no column %q", x)
	case cy < 0:
		return nil, nil, fmt.Errorf("no column %q", y)
	}
	found := false
	for i, r := range f.Racers {
		if r != racer {
			continue
		}
		found = true
		if v := f.Rows[i][cx]; !math.IsNaN(v) {
			xs = append(xs, v)
			ys = append(ys, f.Rows[i][cy])
		}
	}
	if !found {
		return nil, nil, fmt.Errorf("no racer %q", racer)
	}
	return xs, ys, nil
}

// Num is a number that JSON writes as null when it is not finite.
type Num float64

// MarshalJSON writes the shortest exact form, or null.
func (n Num) MarshalJSON() ([]byte, error) {
	if !finite(float64(n)) {
		return []byte("null"), nil
	}
	return []byte(FormatFloat(float64(n))), nil
}

// UnmarshalJSON reads a number, or null as NaN.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = Num(v)
	return nil
}
