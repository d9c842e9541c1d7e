package cli

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Usage errors are typed where they arise: a flag pflag cannot read
// (newRoot's SetFlagErrorFunc), a wrong number of arguments (typedArgs) and
// a flag group broken (checkFlagGroups) are usageErrors in rally's voice,
// before cobra's own sentences could be printed.

// typedArgs wraps every command's argument check so that what it refuses
// is a usageError saying what the command needs, with an example.
func typedArgs(c *cobra.Command) {
	for _, sub := range c.Commands() {
		typedArgs(sub)
	}
	if c.Args == nil || !c.HasParent() {
		return
	}
	valid := c.Args
	c.Args = func(c *cobra.Command, args []string) error {
		err := valid(c, args)
		var ue *usageError
		if err == nil || errors.As(err, &ue) {
			return err
		}
		return argsError(c, args)
	}
}

// placeholder is a positional argument in a Use line: <scope>...,
// <plan>/<task>, [<remote>].
var placeholder = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\[)?<([^>]+)>(/<([^>]+)>)?(\.\.\.)?(\])?$`)
})

type argSpec struct {
	name     string // "scope", "plan/task"
	many     bool   // <scope>...
	optional bool   // [<remote>]
}

// argSpecs reads the positional arguments of c's Use line.
func argSpecs(c *cobra.Command) []argSpec {
	var out []argSpec
	fields := strings.Fields(c.Use)
	for i, w := range fields {
		if i == 0 {
			continue
		}
		if prev := fields[i-1]; strings.HasPrefix(strings.TrimLeft(prev, "[("), "-") && !strings.HasSuffix(prev, "]") {
			continue // a flag's value: --lease <dur>
		}
		m := placeholder().FindStringSubmatch(w)
		if m == nil || (m[1] == "") != (m[6] == "") {
			continue
		}
		name := m[2]
		if m[4] != "" {
			name += "/" + m[4]
		}
		out = append(out, argSpec{name: strings.ReplaceAll(name, "-", " "), many: m[5] != "", optional: m[1] != ""})
	}
	return out
}

// argsError is the usage error for args that c's check refused.
func argsError(c *cobra.Command, args []string) error {
	name := strings.TrimPrefix(cmdName(c), "git rally ")
	specs := argSpecs(c)
	var need []string
	for i, s := range specs {
		if s.optional || i < len(args) {
			continue
		}
		switch {
		case s.many:
			need = append(need, "at least one "+s.name)
		case strings.ContainsAny(s.name[:1], "aeiou"):
			need = append(need, "an "+s.name)
		default:
			need = append(need, "a "+s.name)
		}
	}
	if len(need) > 0 {
		return &usageError{Msg: fmt.Sprintf("%s needs %s", name, strings.Join(need, " and ")), Hint: exampleHint(c)}
	}
	if len(specs) == 0 && len(args) > 0 {
		return unknownErr(c, args[0]) // takes no arguments: a word it does not know
	}
	extra := ""
	if n := len(specs); n < len(args) {
		extra = args[n]
	}
	return &usageError{Msg: fmt.Sprintf("%s takes %s; %q is one too many", name, describe(specs), extra), Hint: exampleHint(c)}
}

func describe(specs []argSpec) string {
	var parts []string
	for _, s := range specs {
		p := "<" + s.name + ">"
		if s.optional {
			p = "an optional " + p
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " and ")
}

// exampleHint is the first example of c (examples.go), else where its help is.
func exampleHint(c *cobra.Command) string {
	ex := c.Example
	if ex == "" {
		ex = examples()[strings.TrimPrefix(cmdName(c), "git rally ")]
	}
	line, _, _ := strings.Cut(strings.TrimSpace(ex), "\n")
	if line, _, _ = strings.Cut(line, "  #"); line != "" {
		return strings.TrimSpace(line)
	}
	return helpHint(c)
}

// cobra's annotations of flag groups (MarkFlagsMutuallyExclusive,
// MarkFlagsOneRequired, MarkFlagsRequiredTogether, MarkFlagRequired).
const (
	groupExclusive = "cobra_annotation_mutually_exclusive"
	groupOne       = "cobra_annotation_one_required"
	groupTogether  = "cobra_annotation_required_if_others_set"
	flagRequired   = "cobra_annotation_bash_completion_one_required_flag"
)

// checkFlagGroups refuses a broken flag group in rally's voice, before
// cobra checks the same groups with sentences of its own.
func checkFlagGroups(c *cobra.Command) error {
	name := strings.TrimPrefix(cmdName(c), "git rally ")
	fl := c.Flags()
	set := func(n string) bool { f := fl.Lookup(n); return f != nil && f.Changed }
	dashed := func(ns []string) []string {
		out := make([]string, len(ns))
		for i, n := range ns {
			out[i] = "--" + n
		}
		return out
	}
	seen := map[string]bool{}
	var err error
	fl.VisitAll(func(f *pflag.Flag) {
		if err != nil {
			return
		}
		if req := f.Annotations[flagRequired]; len(req) > 0 && req[0] == "true" && !f.Changed {
			err = &usageError{Msg: fmt.Sprintf("%s needs --%s", name, f.Name), Hint: exampleHint(c)}
			return
		}
		for kind, groups := range map[string][]string{groupExclusive: f.Annotations[groupExclusive], groupOne: f.Annotations[groupOne], groupTogether: f.Annotations[groupTogether]} {
			for _, g := range groups {
				if seen[kind+g] {
					continue
				}
				seen[kind+g] = true
				members := strings.Split(g, " ")
				var on, off []string
				for _, m := range members {
					if set(m) {
						on = append(on, m)
					} else {
						off = append(off, m)
					}
				}
				switch {
				case kind == groupExclusive && len(on) > 1:
					err = &usageError{Msg: fmt.Sprintf("%s takes %s, not both", name, strings.Join(dashed(on), " or ")), Hint: exampleHint(c)}
				case kind == groupOne && len(on) == 0:
					err = &usageError{Msg: fmt.Sprintf("%s needs %s", name, strings.Join(dashed(members), " or ")), Hint: exampleHint(c)}
				case kind == groupTogether && len(on) > 0 && len(off) > 0:
					err = &usageError{Msg: fmt.Sprintf("%s with %s needs %s too", name, strings.Join(dashed(on), " and "), strings.Join(dashed(off), " and ")), Hint: exampleHint(c)}
				}
				if err != nil {
					return
				}
			}
		}
	})
	return err
}

// unknownCommand is the usage error for a first word that names no
// command (cobra would answer it with an untyped error of its own), nil
// when args name one.
func unknownCommand(root *cobra.Command, args []string) error {
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		return nil // completion: cobra adds that command as it executes
	}
	root.InitDefaultHelpCmd() // as Execute would, before it looks
	_, rest, err := root.Find(args)
	if err == nil {
		return nil
	}
	// The first word is what is unknown, whatever flags follow it
	// (`git rally nosuch --json`); a root flag that is wrong is the
	// flag's error.
	root.FParseErrWhitelist.UnknownFlags = true
	err = root.ParseFlags(rest)
	root.FParseErrWhitelist.UnknownFlags = false
	if err != nil {
		return root.FlagErrorFunc()(root, err)
	}
	if words := root.Flags().Args(); len(words) > 0 {
		err := unknownErr(root, words[0])
		err.Code = "unknown-command"
		return err
	}
	return nil
}
