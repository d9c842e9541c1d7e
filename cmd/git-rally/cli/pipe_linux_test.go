//go:build linux

package cli

import (
	"os"
	"syscall"
	"testing"
)

// A large output grows the pipe it goes into; a small one leaves it.
func TestGrowPipe(t *testing.T) {
	size := func(f *os.File) int {
		n, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), 1032, 0) // F_GETPIPE_SZ
		if errno != 0 {
			t.Skipf("F_GETPIPE_SZ: %v", errno)
		}
		return int(n)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	before := size(w)
	growPipe(w, 32<<10)
	if got := size(w); got != before {
		t.Errorf("a 32 KiB output changed the pipe from %d to %d bytes", before, got)
	}
	growPipe(w, 700<<10)
	if got := size(w); got < 700<<10 {
		t.Errorf("a 700 KiB output left the pipe at %d bytes", got)
	}
}
