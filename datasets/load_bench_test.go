package datasets_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/fedscope/fedscope/datasets"
)

// BenchmarkLoadMNISTSize writes a dense 60,000 × 784 CSV file (labels 0–9,
// pixel-like values) into b.TempDir(), then loads and Dirichlet-partitions it
// over 10 clients, as the data-file scenario of paper 003 (`--set data=`)
// does. Targets: under 5 s, under 1 GB. Reports the heap in use after
// loading as peak-MB (the data itself is 60,000 × 785 float64 ≈ 377 MB).
func BenchmarkLoadMNISTSize(b *testing.B) {
	const n, d = 60000, 784
	path := filepath.Join(b.TempDir(), "mnist.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 8*d)
	for i := 0; i < n; i++ {
		buf = strconv.AppendInt(buf[:0], int64(i%10), 10)
		for k := 0; k < d; k++ {
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, int64((i*31+k*17)%256), 10)
		}
		buf = append(buf, '\n')
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var peak uint64
	for i := 0; i < b.N; i++ {
		s, err := datasets.ReadFile(path, datasets.FormatAuto, false)
		if err != nil {
			b.Fatal(err)
		}
		datasets.Classify(s)
		parts, err := datasets.DirichletLabels(s.Labels(), s.Classes, 10, 0.5, 10, 1)
		if err != nil {
			b.Fatal(err)
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
		if len(parts) != 10 || s.N != n || s.Dim != d {
			b.Fatalf("got %d×%d, %d parts", s.N, s.Dim, len(parts))
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-MB")
}
