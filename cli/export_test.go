package cli

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCSVShape checks the CSV contract of docs/design.md ("Command line") on the
// paradox preset: header, racer labels, rounds 1..T per racer, finite
// numbers, and the client_error column only under model heterogeneity.
func TestCSVShape(t *testing.T) {
	const rounds = 20
	paradoxLabels := []string{"FedAvg s=1", "FedAvg s=5", "FedAvg s=10", "FedProx"}
	for _, test := range []struct {
		name        string
		extra       []string
		labels      []string
		clientError bool // client_error filled (Γ > 0) or empty
	}{
		{"paradox", nil, paradoxLabels, false},
		{"local_steps relabels the unpinned racer", []string{"--set", "local_steps=20"},
			[]string{"FedAvg s=1", "FedAvg s=5", "FedAvg s=20", "FedProx"}, false},
		{"racers from --set algorithms", []string{"--set", "algorithms=fedavg:s=2,fedprox:b=50"},
			[]string{"FedAvg s=2", "FedProx B=50"}, false},
		{"gamma fills client_error", []string{"--set", "gamma=1"}, paradoxLabels, true},
		{"exact gamma scheme", []string{"--set", "gamma=0.5", "--set", "gamma_scheme=exact"}, paradoxLabels, true},
		{"minibatch", []string{"--set", "batch=16"}, paradoxLabels, false},
	} {
		t.Run(test.name, func(t *testing.T) {
			header, rows := readCSV(t, runSmall(t, test.extra...))
			if want := []string{"algorithm", "round", "grad_norm", "est_error"}; !slices.Equal(header[:4], want) {
				t.Fatalf("header %q does not start %q", header, want)
			}
			col := map[string]int{}
			for i, h := range header {
				if h != strings.ToLower(h) || strings.ContainsAny(h, " -") {
					t.Errorf("column %q is not snake_case", h)
				}
				col[h] = i
			}
			ce, ok := col["client_error"]
			if !ok {
				t.Fatalf("no client_error column in %q", header)
			}
			if got := labelsOf(rows); !slices.Equal(got, test.labels) {
				t.Errorf("labels %q, want %q", got, test.labels)
			}
			// Rows run from round 0 (θ_0 = 0) to round T (issue 11).
			if len(rows) != len(test.labels)*(rounds+1) {
				t.Errorf("%d rows, want %d racers × rounds 0..%d", len(rows), len(test.labels), rounds)
			}
			next := map[string]int{}
			for _, row := range rows {
				if len(row) != len(header) {
					t.Fatalf("row %q has %d fields, header %d", row, len(row), len(header))
				}
				if row[1] != strconv.Itoa(next[row[0]]) {
					t.Errorf("%s: round %s, want %d", row[0], row[1], next[row[0]])
				}
				next[row[0]]++
				for i, f := range row[2:] {
					name := header[i+2]
					if f == "" {
						if name != "client_error" {
							t.Errorf("%s round %s: %s is empty", row[0], row[1], name)
						}
						continue
					}
					v, err := strconv.ParseFloat(f, 64)
					if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
						t.Errorf("%s round %s: %s=%q is not a finite non-negative number", row[0], row[1], name, f)
					}
				}
				if filled := row[ce] != ""; filled != test.clientError {
					t.Errorf("%s round %s: client_error %q, want filled=%v", row[0], row[1], row[ce], test.clientError)
				}
			}
			for label, n := range next {
				if n != rounds+1 {
					t.Errorf("%s: %d rows, want rounds 0..%d", label, n, rounds)
				}
			}
		})
	}
}

// TestRunHeaderAndJSONL pins the exact CSV header of `fedscope run --preset
// paradox --rounds 3` (the metrics of paper 000, docs/papers.md §6) and checks
// that every JSON line of the same run parses with encoding/json.
func TestRunHeaderAndJSONL(t *testing.T) {
	out, errs, code := command(t, "run", "--preset", "paradox", "--rounds", "3")
	if code != ExitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	header, rows := readCSV(t, out)
	if got := strings.Join(header, ","); got != "algorithm,round,grad_norm,est_error,client_error,ls_error" {
		t.Errorf("header %s", got)
	}
	if len(rows) != 4*(1+3) {
		t.Errorf("%d rows, want 4 racers × rounds 0..3", len(rows))
	}
	out, errs, code = command(t, "run", "--preset", "paradox", "--rounds", "3", "--format", "jsonl")
	if code != ExitOK || errs != "" {
		t.Fatalf("jsonl: exit %d, stderr %q", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 1+4*4+4 {
		t.Errorf("%d JSON lines, want a header record, 16 rows and 4 summaries", len(lines))
	}
	for i, l := range lines {
		var obj map[string]any
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Errorf("line %d %q: %v", i+1, l, err)
		}
		want := map[bool]any{true: "header"}[i == 0]
		if i >= len(lines)-4 {
			want = "summary"
		}
		if obj["record"] != want {
			t.Errorf("line %d: record %v, want %v (the header first, the racers' summaries last)", i+1, obj["record"], want)
		}
	}
	var head map[string]any
	json.Unmarshal([]byte(lines[0]), &head)
	if head["preset"] != "paradox" || head["seed"] != float64(1) || head["rounds"] != float64(3) || head["family"] != "linear" {
		t.Errorf("header %v", head)
	}
}

// TestJSONLMatchesCSV checks that every JSON line parses and carries the same
// numbers as the CSV row in the same position; metrics that do not apply are
// omitted rather than written as null or NaN.
func TestJSONLMatchesCSV(t *testing.T) {
	for _, extra := range [][]string{nil, {"--set", "gamma=1"}} {
		header, rows := readCSV(t, runSmall(t, extra...))
		jsonl := runSmall(t, append(extra, "--format", "jsonl")...)
		sc := bufio.NewScanner(strings.NewReader(jsonl))
		if !sc.Scan() || !strings.HasPrefix(sc.Text(), `{"record":"header"`) {
			t.Fatalf("the first JSON line is not the header record: %q", sc.Text())
		}
		i := 0
		for ; sc.Scan(); i++ {
			var obj map[string]any
			if err := json.Unmarshal(sc.Bytes(), &obj); err != nil {
				t.Fatalf("line %d %q: %v", i+1, sc.Text(), err)
			}
			if obj["record"] == "summary" {
				i--
				continue
			}
			if i >= len(rows) {
				t.Fatalf("more JSON lines than CSV rows (%d)", len(rows))
			}
			row := rows[i]
			if obj["algorithm"] != row[0] {
				t.Errorf("line %d: algorithm %v, CSV %q", i+1, obj["algorithm"], row[0])
			}
			if r, _ := strconv.Atoi(row[1]); obj["round"] != float64(r) {
				t.Errorf("line %d: round %v, CSV %q", i+1, obj["round"], row[1])
			}
			for c, name := range header[2:] {
				field := row[c+2]
				got, present := obj[name]
				if field == "" {
					if present {
						t.Errorf("line %d: %s=%v, empty in CSV", i+1, name, got)
					}
					continue
				}
				want, _ := strconv.ParseFloat(field, 64)
				if got != want {
					t.Errorf("line %d: %s=%v, CSV %v", i+1, name, got, want)
				}
			}
			if len(obj) > len(header) {
				t.Errorf("line %d has keys beyond the CSV columns: %v", i+1, obj)
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		if i != len(rows) {
			t.Errorf("%d JSON lines, %d CSV rows", i, len(rows))
		}
	}
}

// TestOut checks that --out writes exactly what stdout would get, replaces
// an existing file, and on failure reports an error and leaves nothing
// behind.
func TestOut(t *testing.T) {
	for _, format := range []string{"csv", "jsonl"} {
		t.Run(format, func(t *testing.T) {
			want := runSmall(t, "--format", format)
			dir := t.TempDir()
			path := filepath.Join(dir, "run."+format)
			if err := os.WriteFile(path, []byte("old contents"), 0o644); err != nil {
				t.Fatal(err)
			}
			if stdout := runSmall(t, "--format", format, "--out", path); stdout != "" {
				t.Errorf("--out also wrote %d bytes to stdout", len(stdout))
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Errorf("--out file differs from stdout output:\n%s\nvs\n%s", got, want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("directory holds %d entries after --out, want 1 (no temporary files)", len(entries))
			}
		})
	}

	t.Run("missing directory", func(t *testing.T) {
		dir := t.TempDir()
		missing := filepath.Join(dir, "nosuchdir")
		args := append(append([]string{"run", "--preset", "paradox"}, small...), "--out", filepath.Join(missing, "x.csv"))
		stdout, stderr, code := command(t, args...)
		// A bad --out is refused before any work (exit 2, as bad input).
		checkUsageError(t, stdout, stderr, code)
		if !strings.Contains(stderr, "nosuchdir") {
			t.Errorf("stderr %q does not name the missing directory", stderr)
		}
		if _, err := os.Stat(missing); !os.IsNotExist(err) {
			t.Errorf("%s exists after a failed --out: %v", missing, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("failed --out left %d entries behind", len(entries))
		}
	})

	t.Run("path is a directory", func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(dir, "sub")
		if err := os.Mkdir(target, 0o755); err != nil {
			t.Fatal(err)
		}
		args := append(append([]string{"run", "--preset", "paradox"}, small...), "--out", target)
		stdout, stderr, code := command(t, args...)
		checkUsageError(t, stdout, stderr, code)
		if !strings.Contains(stderr, "is a directory") {
			t.Errorf("stderr %q does not say the path is a directory", stderr)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("failed --out left temporary files: %d entries, want just sub/", len(entries))
		}
		if entries, _ := os.ReadDir(target); len(entries) != 0 {
			t.Errorf("failed --out wrote into the directory: %d entries", len(entries))
		}
	})
}

// TestDivergence checks that a step size beyond the stable limit exits 1,
// keeps every row computed before the divergence, and explains it in one
// line that names the round and the stable limit.
func TestDivergence(t *testing.T) {
	for _, format := range []string{"csv", "jsonl"} {
		t.Run(format, func(t *testing.T) {
			args := append(append([]string{"run", "--preset", "paradox"}, small...), "--set", "eta=5", "--format", format)
			stdout, stderr, code := command(t, args...)
			if code != ExitFailure {
				t.Errorf("exit status %d, want %d", code, ExitFailure)
			}
			for _, want := range []string{"diverged at round", "stable limit", "FedAvg s=1"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q does not mention %q", stderr, want)
				}
			}
			if strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr is not one line: %q", stderr)
			}
			if format == "jsonl" {
				if strings.Count(stdout, "\n") < 20 { // FedProx never diverges: its 20 rounds at least
					t.Errorf("only %d JSON lines", strings.Count(stdout, "\n"))
				}
				return
			}
			_, rows := readCSV(t, stdout)
			count := map[string]int{}
			for _, row := range rows {
				count[row[0]]++
			}
			if count["FedProx"] != 21 {
				t.Errorf("FedProx (a contraction for every η) has %d rows, want rounds 0..20", count["FedProx"])
			}
			if n := count["FedAvg s=1"]; n == 0 || n >= 21 {
				t.Errorf("FedAvg s=1 has %d rows, want the rounds before its divergence (0..19)", n)
			}
		})
	}
}
