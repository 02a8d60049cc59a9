// Package sysmem tells how much memory fedscope may still allocate, so that
// a scenario too large for the machine is refused with a sentence before any
// allocation rather than ending in an out-of-memory crash.
package sysmem

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Fallback is the figure Available reports where the operating system does
// not say (no /proc/meminfo): 4 GiB, what a modest laptop has free.
const Fallback uint64 = 4 << 30

// Available returns the bytes the process can still allocate: the
// smallest of the machine's MemAvailable (Linux /proc/meminfo), the room
// left under a cgroup v2 memory limit, and the Go memory limit (GOMEMLIMIT)
// less what the Go heap already holds. Where none is readable it returns
// Fallback, and the second result says so.
func Available() (bytes uint64, known bool) {
	avail, known := meminfo("/proc/meminfo")
	if limit, ok := cgroupRoom("/sys/fs/cgroup"); ok {
		if !known || limit < avail {
			avail = limit
		}
		known = true
	}
	if lim := debug.SetMemoryLimit(-1); lim > 0 && lim < 1<<62 {
		if !known || uint64(lim) < avail {
			avail = uint64(lim)
		}
		known = true
	}
	if !known {
		return Fallback, false
	}
	return avail, true
}

// meminfo reads MemAvailable (kB) from a /proc/meminfo file.
func meminfo(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}

// cgroupRoom returns memory.max − memory.current of the cgroup v2 the
// process runs in (mounted at root), when it has a limit.
func cgroupRoom(root string) (uint64, bool) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	// cgroup v2: a single line "0::/path".
	var dir string
	for _, line := range strings.Split(strings.TrimSpace(string(self)), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			dir = root + p
		}
	}
	if dir == "" {
		return 0, false
	}
	max, ok := readUint(dir + "/memory.max")
	if !ok {
		return 0, false
	}
	cur, ok := readUint(dir + "/memory.current")
	if !ok || cur > max {
		return 0, ok
	}
	return max - cur, true
}

// readUint reads a file holding one whole number ("max" is not one).
func readUint(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}

// Format writes a byte count for a message: "812 MB", "3.4 GB", "2.1 TB".
func Format(b uint64) string {
	const k = 1000
	switch {
	case b < k*k:
		return strconv.FormatUint((b+k-1)/k, 10) + " kB"
	case b < k*k*k:
		return strconv.FormatUint((b+k*k/2)/(k*k), 10) + " MB"
	}
	x := float64(b) / (k * k * k)
	unit := "GB"
	if x >= k {
		x, unit = x/k, "TB"
	}
	if x >= 100 {
		return strconv.FormatFloat(x, 'f', 0, 64) + " " + unit
	}
	return strconv.FormatFloat(x, 'f', 1, 64) + " " + unit
}
