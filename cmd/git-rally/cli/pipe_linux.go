//go:build linux

package cli

import (
	"io"
	"os"
	"syscall"
)

// growPipe lets a pipe that w writes into hold n bytes (up to 1 MiB, the
// unprivileged limit), so a large output (room --json with many claims:
// 400 bytes a claim) goes out without waiting, 64 KiB at a time, for the
// reader to make room; the process can finish while it reads. Anything
// but a pipe, and any error, leaves things as they are.
func growPipe(w io.Writer, n int) {
	const setPipeSize = 1031 // F_SETPIPE_SZ
	f, ok := w.(*os.File)
	if !ok || n <= 64<<10 {
		return
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		syscall.Syscall(syscall.SYS_FCNTL, fd, setPipeSize, uintptr(min(n, 1<<20)))
	})
}
