//go:build rallyprobe

package main

// With the build tag rallyprobe, git-rally carries two start-up probes
// (bench/probe) that bench/run.sh times against a static hello world:
// `git-rally __probe-first` and `git-rally __probe-hotdeps` exit from an
// init, before main and before the packages they do not import.
import (
	_ "github.com/git-rally/git-rally/bench/probe/first"
	_ "github.com/git-rally/git-rally/bench/probe/hotdeps"
)
