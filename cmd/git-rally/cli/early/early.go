// Package early answers `git-rally hook`, `check`, `claim`,
// `release`, `note`, `room`, `inbox`, `enter`, `leave`, `whoami` and
// `version` from an init, before main and before cobra
// initialises: a hook or a check runs before every write an agent makes, a
// claim and a release around each piece of work. Go initialises a package after the packages it
// imports and otherwise in import-path order; a command run from cobra
// waits for text/template, which sorts after nearly every package in the
// binary, so it starts only once the MCP SDK, the YAML parser and the rest
// have initialised too. This package imports neither cobra nor anything
// only the servers need, so its init runs as soon as the ledger's own
// packages are ready (bench/run.sh's probes show what that saves).
//
// It answers exactly as the cobra tree does, through the same functions
// (cmdutil.RunHook, CheckBeforeWrite, CheckBeforeComplete, Claim, Release, Simple, Room,
// Inbox, Enter, Leave, Whoami, Version, Finish;
// TestEarlyBehavesAsTheCobraTree). What it is not sure of (help, a flag
// it does not read) it leaves to the tree, and so a repository that signs
// or verifies facts: refs and facts reach the SSH code through refs.SSH,
// which package sshsig installs from an init that runs after this one.
package early

import (
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

func init() {
	if code, ok := Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); ok {
		os.Exit(code)
	}
}

// Run answers args when they are a hook call, a plain check,
// claim, release, note, room, inbox, enter, leave or whoami, or version,
// as cli.Run would: the same output,
// errors and exit code. It reports false, having done nothing, for
// anything else.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, bool) {
	if len(args) == 0 {
		return 0, false
	}
	var run func(f *cmdutil.Factory) error
	var tools []string // --tool, every one
	ledger := true     // the command reads the ledger
	switch args[0] {
	case "version":
		j := &cmdutil.JSONFlags{}
		switch {
		case len(args) == 2 && args[1] == "--json":
			j.JSON = true
		case len(args) != 1:
			return 0, false
		}
		run, ledger = func(f *cmdutil.Factory) error { return cmdutil.Version(f, j) }, false
	case "hook":
		for _, a := range args[1:] {
			if a == "help" || strings.HasPrefix(a, "-") || strings.HasPrefix(a, "__") {
				return 0, false // help, completion, a flag: the cobra tree's
			}
		}
		run = func(f *cmdutil.Factory) error { return cmdutil.RunHook(f, args[1:]) }
	case "claim":
		opts, t, scopes, ok := parseClaim(args[1:])
		if !ok {
			return 0, false
		}
		tools, run = t, func(f *cmdutil.Factory) error { return cmdutil.Claim(f, opts, scopes) }
	case "check":
		if len(args) < 2 || args[1] != "before-write" && args[1] != "before-complete" {
			return 0, false
		}
		set, _, _, t, paths, ok := parseFlags(args[2:], []string{"json", "strict"}, nil, nil)
		if !ok || (len(paths) == 0) == (args[1] == "before-write") {
			return 0, false // before-write needs paths, before-complete takes none
		}
		opts := &cmdutil.CheckOptions{Strict: set["strict"], J: cmdutil.JSONFlags{JSON: set["json"]}}
		tools, run = t, func(f *cmdutil.Factory) error { return cmdutil.CheckBeforeWrite(f, opts, paths) }
		if args[1] == "before-complete" {
			run = func(f *cmdutil.Factory) error { return cmdutil.CheckBeforeComplete(f, opts) }
		}
	case "note":
		set, vals, lists, t, pos, ok := parseFlags(args[1:], []string{"json"},
			[]string{"subject", "body", "severity", "ref", "status", "target"}, []string{"scope"})
		if !ok || len(pos) > 0 {
			return 0, false
		}
		opts := &cmdutil.SimpleOptions{Subject: vals["subject"], Body: vals["body"], Severity: vals["severity"], Ref: vals["ref"],
			Status: vals["status"], Target: vals["target"], Scopes: lists["scope"], J: cmdutil.JSONFlags{JSON: set["json"]}}
		tools, run = t, func(f *cmdutil.Factory) error { return cmdutil.Simple(f, facts.KindNote, opts) }
	case "room":
		set, vals, lists, t, pos, ok := parseFlags(args[1:], []string{"json", "compact"}, []string{"budget-bytes"}, []string{"path"})
		if !ok || len(pos) > 0 {
			return 0, false
		}
		opts := &cmdutil.RoomOptions{Compact: set["compact"], Budget: 6000, Paths: lists["path"], J: cmdutil.JSONFlags{JSON: set["json"]}}
		if b, has := vals["budget-bytes"]; has {
			n, err := strconv.ParseInt(b, 0, 0) // as pflag's IntVar
			if err != nil {
				return 0, false
			}
			opts.Budget = int(n)
		}
		tools, run = t, func(f *cmdutil.Factory) error { return cmdutil.Room(f, opts) }
	case "enter", "leave", "whoami":
		strs := []string{"subject"}
		if args[0] == "whoami" {
			strs = nil
		}
		set, vals, _, t, pos, ok := parseFlags(args[1:], []string{"json"}, strs, nil)
		if !ok || len(pos) > 0 {
			return 0, false
		}
		j := &cmdutil.JSONFlags{JSON: set["json"]}
		tools, run = t, map[string]func(f *cmdutil.Factory) error{
			"enter":  func(f *cmdutil.Factory) error { return cmdutil.Enter(f, vals["subject"], j) },
			"leave":  func(f *cmdutil.Factory) error { return cmdutil.Leave(f, vals["subject"], j) },
			"whoami": func(f *cmdutil.Factory) error { return cmdutil.Whoami(f, j) },
		}[args[0]]
	case "inbox":
		set, _, _, t, pos, ok := parseFlags(args[1:], []string{"json"}, nil, nil)
		if !ok || len(pos) > 0 {
			return 0, false
		}
		j := &cmdutil.JSONFlags{JSON: set["json"]}
		tools, run = t, func(f *cmdutil.Factory) error { return cmdutil.Inbox(f, j) }
	case "release":
		opts, t, targets, ok := parseRelease(args[1:])
		if !ok {
			return 0, false
		}
		tools, run = t, func(f *cmdutil.Factory) error { return cmdutil.Release(f, opts, targets) }
	default:
		return 0, false
	}
	f := cmdutil.New(stdin, stdout, stderr)
	// As the tree parses its flags before the command opens the ledger.
	f.ToolList = tools
	if len(tools) > 0 {
		f.ToolFlag = tools[len(tools)-1]
	}
	if ledger {
		if l, err := f.Ledger(); err == nil && l.Signing.Verifying() && refs.SSH == nil {
			// Signing or verification is configured, and package sshsig
			// initialises after this one: the tree answers.
			f.Close()
			return 0, false
		}
	}
	debug.SetGCPercent(cmdutil.HotGCPercent)
	return f.Finish(args, run(f)), true
}

// parseArgs reads a command's arguments as the cobra tree does (pflag:
// flags anywhere, --name value or --name=value, the last value wins), only
// the forms it is sure of: positionals, the boolean flags bools names and
// the string flags strs names, and --tool (every one, in tools). Anything
// else (a short flag, --query, --, a value that looks like a flag, help
// or a completion request, no positional) it leaves to the tree (ok false).
func parseArgs(args []string, bools, strs []string) (set map[string]bool, vals map[string]string, tools, pos []string, ok bool) {
	set, vals, _, tools, pos, ok = parseFlags(args, bools, strs, nil)
	if len(pos) == 0 {
		return nil, nil, nil, nil, false
	}
	return set, vals, tools, pos, ok
}

// parseFlags is parseArgs without its positional minimum, and with the
// repeatable string flags arrays names (pflag's StringArray: every value,
// in order, in lists).
func parseFlags(args []string, bools, strs, arrays []string) (set map[string]bool, vals map[string]string, lists map[string][]string, tools, pos []string, ok bool) {
	set, vals, lists = map[string]bool{}, map[string]string{}, map[string][]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "help" || strings.HasPrefix(a, "__") {
			return nil, nil, nil, nil, nil, false // what the tree reads as help or completion
		}
		if !strings.HasPrefix(a, "-") {
			pos = append(pos, a)
			continue
		}
		if !strings.HasPrefix(a, "--") {
			return nil, nil, nil, nil, nil, false
		}
		name, val, hasVal := strings.Cut(a[2:], "=")
		switch {
		case slices.Contains(bools, name):
			if hasVal {
				return nil, nil, nil, nil, nil, false
			}
			set[name] = true
		case name == "tool" || slices.Contains(strs, name) || slices.Contains(arrays, name):
			if !hasVal {
				if i+1 == len(args) || strings.HasPrefix(args[i+1], "-") {
					return nil, nil, nil, nil, nil, false
				}
				i++
				val = args[i]
			}
			switch {
			case name == "tool":
				tools = append(tools, val)
			case slices.Contains(arrays, name):
				lists[name] = append(lists[name], val)
			default:
				vals[name] = val
			}
		default:
			return nil, nil, nil, nil, nil, false
		}
	}
	return set, vals, lists, tools, pos, true
}

// parseClaim reads claim's arguments (parseArgs); --shared with
// --advisory is the tree's (a usage error cobra words).
func parseClaim(args []string) (opts *cmdutil.ClaimOptions, tools, scopes []string, ok bool) {
	set, vals, tools, scopes, ok := parseArgs(args, []string{"json", "shared", "advisory", "takeover"}, []string{"lease", "subject"})
	if !ok || set["shared"] && set["advisory"] {
		return nil, nil, nil, false
	}
	return &cmdutil.ClaimOptions{Shared: set["shared"], Advisory: set["advisory"], Takeover: set["takeover"],
		Lease: vals["lease"], Subject: vals["subject"], J: cmdutil.JSONFlags{JSON: set["json"]}}, tools, scopes, true
}

// parseRelease reads release's arguments (parseArgs).
func parseRelease(args []string) (opts *cmdutil.ReleaseOptions, tools, targets []string, ok bool) {
	set, vals, tools, targets, ok := parseArgs(args, []string{"json"}, []string{"reason"})
	if !ok {
		return nil, nil, nil, false
	}
	return &cmdutil.ReleaseOptions{Reason: vals["reason"], J: cmdutil.JSONFlags{JSON: set["json"]}}, tools, targets, true
}
