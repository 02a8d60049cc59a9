package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// openPTY opens a pseudo-terminal pair with a 100×30 window.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	ioctl := func(f *os.File, req uintptr, arg unsafe.Pointer) error {
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); e != 0 {
			return e
		}
		return nil
	}
	var unlock int32
	var n uint32
	if err := ioctl(m, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		t.Fatal(err)
	}
	if err := ioctl(m, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	ws := [4]uint16{30, 100, 0, 0} // rows, columns
	if err := ioctl(s, syscall.TIOCSWINSZ, unsafe.Pointer(&ws)); err != nil {
		t.Fatal(err)
	}
	return m, s
}

// TestExplorerEndsWhenTerminalGoesAway opens the explorer on a
// pseudo-terminal that is not its controlling terminal, so that no SIGHUP
// reaches it, as under a parent that ignores SIGHUP (issue 22: such
// explorers computed on for minutes). Once the explorer has drawn, the
// terminal is hung up (its master closed): the explorer must end, with
// status 129 and the reason on standard error. The test waits for the
// child's output and exit, not the clock.
func TestExplorerEndsWhenTerminalGoesAway(t *testing.T) {
	master, slave := openPTY(t)
	cmd := exec.Command(os.Args[0], "--preset", "paradox", "--rounds", "100000", "--pace", "max")
	cmd.Env = append(os.Environ(), "FEDSCOPE_CLI_CHILD=1", "TERM=xterm-256color")
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its own group, no controlling terminal
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	// Read what the explorer draws until it has entered the alternate
	// screen and drawn a frame, then hang up.
	var seen bytes.Buffer
	buf := make([]byte, 4096)
	for !strings.Contains(seen.String(), "\x1b[?1049h") || !strings.Contains(seen.String(), "FedAvg") {
		n, err := master.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			t.Fatalf("the explorer stopped drawing: %v; stderr %q", err, stderr.String())
		}
		if seen.Len() > 1<<20 {
			seen.Reset()
			seen.Write(buf[:n])
		}
	}
	master.Close()
	if status := wait(t, cmd); status != 129 {
		t.Errorf("status %d after the terminal went away, want 129; stderr %q", status, stderr.String())
	}
	if !strings.Contains(stderr.String(), "the terminal went away") {
		t.Errorf("stderr %q does not say why the explorer ended", stderr.String())
	}
}
