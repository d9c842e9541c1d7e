//go:build linux

package session

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// proc is one process to end: its id and its start time, so a process
// that ended and whose id was reused is left alone.
type proc struct {
	pid   int
	start string
}

type procStat struct {
	ppid, sid int
	start     string
	zombie    bool
}

// readStat reads /proc/<pid>/stat: the parent, the session and the
// start time (the command name in parentheses may hold spaces).
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[i+1:]) // state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime
	if len(f) < 20 {
		return procStat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	sid, _ := strconv.Atoi(f[3])
	return procStat{ppid: ppid, sid: sid, start: f[19], zombie: f[0] == "Z" || f[0] == "X"}, true
}

// processTree is every process the terminals rooted at pids started: the
// members of their Unix sessions (a pane's program leads one) and every
// descendant, also one that made a session of its own, and every process
// whose environment marked accepts (the pane's TMUX and TMUX_PANE: a
// daemon that left the tree keeps them). The calling
// process and its ancestors are never in it (stop run from inside the
// session).
func processTree(roots []int, marked func(environ []string) bool) []proc {
	if len(roots) == 0 && marked == nil {
		return nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	stats := map[int]procStat{}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			stats[pid] = st
			children[st.ppid] = append(children[st.ppid], pid)
		}
	}
	mine := map[int]bool{}
	for p := os.Getpid(); p > 1 && !mine[p]; {
		mine[p] = true
		st, ok := stats[p]
		if !ok {
			break
		}
		p = st.ppid
	}
	isRoot := map[int]bool{}
	for _, r := range roots {
		isRoot[r] = true
	}
	take := map[int]bool{}
	var walk func(int)
	walk = func(p int) {
		if take[p] || mine[p] {
			return
		}
		if _, ok := stats[p]; !ok {
			return
		}
		take[p] = true
		for _, c := range children[p] {
			walk(c)
		}
	}
	for pid, st := range stats {
		if isRoot[st.sid] {
			walk(pid)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	if marked != nil {
		for pid := range stats {
			if take[pid] || mine[pid] {
				continue
			}
			b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
			if err == nil && marked(strings.Split(string(b), "\x00")) {
				walk(pid)
			}
		}
	}
	var out []proc
	for p := range take {
		out = append(out, proc{pid: p, start: stats[p].start})
	}
	return out
}

func (p proc) alive() bool {
	st, ok := readStat(p.pid)
	return ok && st.start == p.start && !st.zombie
}

// endProcesses asks each process to end (SIGTERM), waits up to two
// seconds, then kills what is left (SIGKILL).
func endProcesses(ps []proc) {
	signal := func(sig syscall.Signal) int {
		n := 0
		for _, p := range ps {
			if p.alive() {
				syscall.Kill(p.pid, sig)
				n++
			}
		}
		return n
	}
	if signal(syscall.SIGTERM) == 0 {
		return
	}
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		left := 0
		for _, p := range ps {
			if p.alive() {
				left++
			}
		}
		if left == 0 {
			return
		}
	}
	signal(syscall.SIGKILL)
}
