package sysmem

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMeminfo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meminfo")
	os.WriteFile(path, []byte("MemTotal:       24000000 kB\nMemFree:        100 kB\nMemAvailable:   1234 kB\n"), 0o644)
	if got, ok := meminfo(path); !ok || got != 1234*1024 {
		t.Errorf("meminfo = %d, %v; want %d, true", got, ok, 1234*1024)
	}
	os.WriteFile(path, []byte("MemTotal: 1 kB\n"), 0o644)
	if _, ok := meminfo(path); ok {
		t.Error("meminfo without MemAvailable reported a figure")
	}
	if _, ok := meminfo(filepath.Join(t.TempDir(), "absent")); ok {
		t.Error("meminfo of a missing file reported a figure")
	}
}

func TestAvailableIsPositive(t *testing.T) {
	if b, _ := Available(); b == 0 {
		t.Error("Available() = 0")
	}
}

func TestFormat(t *testing.T) {
	for _, test := range []struct {
		b    uint64
		want string
	}{
		{0, "0 kB"}, {999, "1 kB"}, {1_500_000, "2 MB"}, {812_000_000, "812 MB"},
		{3_400_000_000, "3.4 GB"}, {800_000_000_000, "800 GB"}, {2_100_000_000_000, "2.1 TB"},
	} {
		if got := Format(test.b); got != test.want {
			t.Errorf("Format(%d) = %q, want %q", test.b, got, test.want)
		}
	}
}
