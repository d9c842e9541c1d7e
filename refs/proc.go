package refs

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procID identifies a process across pid reuse: its start time (in clock
// ticks since boot, /proc/<pid>/stat field 22) and the boot it runs in.
type procID struct {
	start, boot string
	// ended: the process has exited and waits to be reaped (a zombie,
	// state Z or X): it holds no file open and writes nothing more.
	ended bool
}

func processID(pid int) procID {
	id := procID{start: "-", boot: "-"}
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		id.boot = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		// The command name (field 2) may hold spaces and parentheses:
		// fields are counted after its closing parenthesis.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 {
			f := strings.Fields(string(b[i+1:]))
			if len(f) > 19 {
				id.start = f[19]
			}
			if len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
				id.ended = true
			}
		}
	}
	return id
}

// processAlive reports whether the process that wrote a lock note (pid,
// start time, boot) may still be running. Only a certain "no" is false.
func processAlive(pid int, start, boot string) bool {
	if pid <= 0 {
		return true
	}
	cur := processID(pid)
	if boot != "-" && cur.boot != "-" && boot != cur.boot {
		return false // the machine restarted since
	}
	err := syscall.Kill(pid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return false
	}
	if start != "-" && cur.start != "-" && start != cur.start {
		return false // the pid was reused
	}
	// A zombie answers kill(0) until its parent reaps it, which may take
	// long when the parent is itself ending or the reaper is slow (stop
	// ends a session's hooks mid-append): it is gone all the same.
	return !cur.ended
}

// fileID returns a file's device and inode numbers.
func fileID(fi fs.FileInfo) (uint64, uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino
	}
	return 0, 0
}
