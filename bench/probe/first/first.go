// Package first is a start-up probe: linked into git-rally with the build
// tag rallyprobe (cmd/git-rally/probe.go), it imports only os, so Go
// initialises it among the first packages, and its init exits when asked
// to. Against a static hello world it shows what the binary's size alone
// costs a process before any package rally needs has initialised.
package first

import "os"

func init() {
	if len(os.Args) == 2 && os.Args[1] == "__probe-first" {
		os.Stdout.WriteString("first\n")
		os.Exit(0)
	}
}
