package hooks

import (
	"path"
	"strings"
)

// A shell command a host's shell tool is about to run is read for the
// files it plainly writes: apply_patch heredocs, redirections, tee, sed -i,
// mv, cp, rm, touch, dd of=, and the same inside sh -c / bash -c. What
// cannot be read for sure (a word with a variable, a glob, a command
// substitution, a relative path after a cd that cannot be followed, a
// program that writes on its own: python, make, git) is left out: the
// call goes ahead unchecked. docs/hooks.md lists these limits.

// shellWord is one word of a command line after quote removal. literal is
// false when the shell would still expand it ($, `, globs, ~, braces), so
// what it names is not known before it runs.
type shellWord struct {
	text    string
	literal bool
	op      bool // an operator: ; & && || | ( ) or newline
	redir   string
	heredoc *string // for << and <<-: the body
}

// maxShellDepth bounds sh -c nesting.
const maxShellDepth = 3

// ShellPaths lists the files a shell command writes, as written (relative
// paths are made relative to dir's changes by cd; the caller resolves them
// against the command's working directory). isDir, when set, says whether
// a path (after that resolution) is a directory, for mv and cp into one.
func ShellPaths(cmd string, isDir func(string) bool) []string {
	return shellPaths(cmd, isDir, 0)
}

func shellPaths(cmd string, isDir func(string) bool, depth int) []string {
	if depth > maxShellDepth {
		return nil
	}
	words := tokenize(cmd)
	var out []string
	cwd, cwdKnown := "", true // relative to the command's starting directory
	rel := func(p string) (string, bool) {
		if path.IsAbs(p) {
			return path.Clean(p), true
		}
		if !cwdKnown {
			return "", false
		}
		return path.Clean(path.Join(cwd, p)), true
	}
	add := func(w shellWord) {
		if !w.literal || w.text == "" || w.text == "-" || strings.HasPrefix(w.text, "/dev/") {
			return
		}
		if p, ok := rel(w.text); ok {
			out = append(out, p)
		}
	}
	dirOf := func(w shellWord) bool {
		if isDir == nil || !w.literal {
			return false
		}
		p, ok := rel(w.text)
		return ok && isDir(p)
	}
	type dirState struct {
		cwd   string
		known bool
	}
	var saved []dirState // a ( subshell's cd ends at its )
	var restore *dirState
	for start := 0; start < len(words); {
		if restore != nil {
			cwd, cwdKnown, restore = restore.cwd, restore.known, nil
		}
		end := start
		for end < len(words) && !words[end].op {
			end++
		}
		simple := words[start:end]
		start = end + 1
		if end < len(words) {
			switch words[end].text {
			case "(":
				saved = append(saved, dirState{cwd, cwdKnown})
			case ")":
				if n := len(saved); n > 0 {
					restore = &saved[n-1]
					saved = saved[:n-1]
				}
			}
		}
		var args []shellWord
		var heredoc *string
		for _, w := range simple {
			switch {
			case w.redir != "":
				if strings.HasPrefix(w.redir, "<") {
					if w.heredoc != nil {
						heredoc = w.heredoc
					}
					continue
				}
				if !strings.HasSuffix(w.redir, "&") { // >&2 duplicates a descriptor
					add(w)
				}
			default:
				args = append(args, w)
			}
		}
		args = skipPrefixes(args)
		if len(args) == 0 {
			continue
		}
		name := args[0]
		if !name.literal {
			continue
		}
		rest := args[1:]
		switch path.Base(name.text) {
		case "cd":
			if len(rest) == 1 && rest[0].literal && !strings.HasPrefix(rest[0].text, "-") {
				if p, ok := rel(rest[0].text); ok {
					cwd = p
					continue
				}
			}
			cwdKnown = false
		case "apply_patch", "applypatch":
			var body string
			switch {
			case heredoc != nil:
				body = *heredoc
			case len(rest) > 0 && rest[0].literal:
				body = rest[0].text
			}
			for _, p := range PatchPaths(body) {
				add(shellWord{text: p, literal: true})
			}
		case "tee", "rm", "touch", "truncate", "shred", "unlink":
			for _, w := range operands(rest, map[string]bool{"-s": true, "--size": true, "-r": false}) {
				add(w)
			}
		case "sed":
			for _, w := range sedFiles(rest) {
				add(w)
			}
		case "mv", "cp":
			ops, target := moveOperands(rest)
			if target == nil && len(ops) > 1 {
				target, ops = &ops[len(ops)-1], ops[:len(ops)-1]
			}
			if target == nil {
				continue
			}
			if path.Base(name.text) == "mv" {
				for _, w := range ops {
					add(w)
				}
			}
			if dirOf(*target) {
				for _, w := range ops {
					if w.literal {
						add(shellWord{text: path.Join(target.text, path.Base(w.text)), literal: true})
					}
				}
				continue
			}
			add(*target)
		case "dd":
			for _, w := range rest {
				if strings.HasPrefix(w.text, "of=") {
					add(shellWord{text: strings.TrimPrefix(w.text, "of="), literal: w.literal})
				}
			}
		case "sh", "bash", "zsh", "dash", "ksh":
			for i, w := range rest {
				if strings.HasPrefix(w.text, "-") && strings.Contains(w.text, "c") && !strings.HasPrefix(w.text, "--") && i+1 < len(rest) {
					if rest[i+1].literal {
						out = append(out, shellPaths(rest[i+1].text, relDir(isDir, cwd, cwdKnown), depth+1)...)
					}
					break
				}
			}
		}
	}
	return out
}

// relDir keeps isDir answering for a nested shell that starts in cwd.
func relDir(isDir func(string) bool, cwd string, known bool) func(string) bool {
	if isDir == nil || !known {
		return isDir
	}
	return func(p string) bool {
		if !path.IsAbs(p) {
			p = path.Join(cwd, p)
		}
		return isDir(p)
	}
}

// skipPrefixes drops assignments and the wrappers that run the rest of the
// line as a command (env, sudo, command, nohup, time, exec, nice).
func skipPrefixes(args []shellWord) []shellWord {
	for len(args) > 0 {
		w := args[0]
		switch {
		case isAssignment(w.text):
			args = args[1:]
		case w.literal && shellKeyword[w.text]:
			args = args[1:] // if/then/do...: a command follows
		case w.literal && (w.text == "env" || w.text == "sudo" || w.text == "command" || w.text == "nohup" ||
			w.text == "time" || w.text == "exec" || w.text == "nice" || w.text == "builtin"):
			args = args[1:]
			for len(args) > 0 && strings.HasPrefix(args[0].text, "-") {
				args = args[1:]
			}
		default:
			return args
		}
	}
	return args
}

var shellKeyword = map[string]bool{"if": true, "then": true, "else": true, "elif": true, "do": true, "while": true, "until": true}

func isAssignment(s string) bool {
	i := strings.IndexByte(s, '=')
	if i <= 0 {
		return false
	}
	for j, r := range s[:i] {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || j > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// operands are the arguments that are not options; withValue names options
// that take the next word as their value.
func operands(args []shellWord, withValue map[string]bool) []shellWord {
	var out []shellWord
	dashdash := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case dashdash:
			out = append(out, w)
		case w.text == "--":
			dashdash = true
		case strings.HasPrefix(w.text, "-") && w.text != "-":
			if withValue[w.text] {
				i++
			}
		default:
			out = append(out, w)
		}
	}
	return out
}

// moveOperands reads mv's and cp's arguments: -t DIR / --target-directory
// names the target; the rest are operands.
func moveOperands(args []shellWord) (ops []shellWord, target *shellWord) {
	dashdash := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case dashdash:
			ops = append(ops, w)
		case w.text == "--":
			dashdash = true
		case w.text == "-t" || w.text == "--target-directory":
			if i+1 < len(args) {
				t := args[i+1]
				target = &t
				i++
			}
		case strings.HasPrefix(w.text, "--target-directory="):
			t := shellWord{text: strings.TrimPrefix(w.text, "--target-directory="), literal: w.literal}
			target = &t
		case w.text == "-S" || w.text == "--suffix":
			i++
		case strings.HasPrefix(w.text, "-") && w.text != "-":
		default:
			ops = append(ops, w)
		}
	}
	return ops, target
}

// sedFiles returns the files sed edits in place: none without -i.
func sedFiles(args []shellWord) []shellWord {
	inPlace, script := false, false
	var files []shellWord
	dashdash := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		t := w.text
		switch {
		case dashdash || !strings.HasPrefix(t, "-") || t == "-":
			if !script { // the first operand is the script unless -e or -f gave one
				script = true
				continue
			}
			files = append(files, w)
		case t == "--":
			dashdash = true
		case t == "--in-place" || strings.HasPrefix(t, "--in-place="):
			inPlace = true
		case t == "--expression" || t == "--file":
			script = true
			i++
		case strings.HasPrefix(t, "--expression=") || strings.HasPrefix(t, "--file="):
			script = true
		case strings.HasPrefix(t, "--"):
		default:
			for j := 1; j < len(t); j++ {
				c := t[j]
				if c == 'i' {
					inPlace = true
					break // the rest is a backup suffix
				}
				if c == 'e' || c == 'f' {
					script = true
					if j == len(t)-1 {
						i++
					}
					break
				}
				if c == 'l' {
					if j == len(t)-1 {
						i++
					}
					break
				}
			}
		}
	}
	if !inPlace {
		return nil
	}
	return files
}
