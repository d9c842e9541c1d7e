//go:build !linux

package session

import "syscall"

type proc struct{ pid int }

// processTree is, where /proc is not there to walk, the process group of
// each pane's program (it leads one).
func processTree(roots []int, marked func([]string) bool) []proc {
	out := make([]proc, len(roots))
	for i, r := range roots {
		out[i] = proc{pid: r}
	}
	return out
}

// endProcesses ends each pane's process group.
func endProcesses(ps []proc) {
	for _, p := range ps {
		syscall.Kill(-p.pid, syscall.SIGTERM)
	}
}
