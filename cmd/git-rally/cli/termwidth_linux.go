//go:build linux

package cli

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// termWidth is the width of the terminal w writes to, 0 when w is not a
// terminal or the kernel does not say.
func termWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	var ws struct{ Row, Col, X, Y uint16 }
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	var errno syscall.Errno
	rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws)))
	})
	if errno != 0 {
		return 0
	}
	return int(ws.Col)
}
