package hooks

import (
	"regexp"
	"strings"
	"sync"
)

// Codex's project configuration is TOML. Rally edits it as text, a table
// at a time, so everything else in the file keeps its bytes: a table runs
// from its header line to the next header line.

// The patterns are compiled on first use: every git-rally process links
// this package, few edit a config.toml.
var (
	tomlHeader   = lazyRegexp(`^\s*\[\[?\s*[A-Za-z0-9_\-."' ]+\s*\]\]?\s*(#.*)?$`)
	tomlRally    = lazyRegexp(`^\s*\[\s*mcp_servers\s*\.\s*("rally"|'rally'|rally)\s*(\]|\.)`)
	tomlRallyCmd = lazyRegexp(`(?m)^\s*(command\s*=\s*"git"\s*$|command\s*=\s*"git-rally"|args\s*=\s*\[\s*"rally")`)
)

func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// tomlSection finds rally's table (with its sub-tables) as line indexes
// [start, end), or start -1.
func tomlSection(lines []string) (int, int) {
	start := -1
	for i, l := range lines {
		switch {
		case start < 0 && tomlRally().MatchString(l):
			start = i
		case start >= 0 && tomlHeader().MatchString(l) && !tomlRally().MatchString(l):
			return start, i
		}
	}
	return start, len(lines)
}

func splitLines(b []byte) []string {
	s := string(b)
	if s == "" {
		return nil
	}
	return strings.SplitAfter(s, "\n")
}

func tomlState(content []byte, block string) string {
	lines := splitLines(content)
	start, end := tomlSection(lines)
	if start < 0 {
		return StateNotInstalled
	}
	sec := strings.Join(lines[start:end], "")
	if strings.TrimSpace(sec) == strings.TrimSpace(block) {
		return StateInstalled
	}
	if tomlRallyCmd().MatchString(sec) {
		return StateOutdated
	}
	return StateNotInstalled
}

// tomlInstall returns the file with rally's table, or nil when it is there.
func tomlInstall(sf settingsFile, mf mcpFile) ([]byte, error) {
	lines := splitLines(sf.content)
	start, end := tomlSection(lines)
	if start >= 0 {
		sec := strings.Join(lines[start:end], "")
		if strings.TrimSpace(sec) == strings.TrimSpace(mf.toml) {
			return nil, nil
		}
		if !tomlRallyCmd().MatchString(sec) {
			return nil, &otherServerError{sf.shown}
		}
		// An older entry of rally's: replace it in place.
		rest := strings.Join(lines[end:], "")
		sep := ""
		if rest != "" {
			sep = "\n"
		}
		return []byte(strings.Join(lines[:start], "") + mf.toml + sep + rest), nil
	}
	s := string(sf.content)
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	if strings.TrimSpace(s) != "" {
		s += "\n"
	}
	return []byte(s + mf.toml), nil
}

// tomlRemove returns the file without rally's table, or nil when it is
// not there (or is another program's).
func tomlRemove(content []byte) []byte {
	lines := splitLines(content)
	start, end := tomlSection(lines)
	if start < 0 || !tomlRallyCmd().MatchString(strings.Join(lines[start:end], "")) {
		return nil
	}
	// The blank line install put before the table goes with it.
	if end == len(lines) && start > 0 && strings.TrimSpace(lines[start-1]) == "" {
		start--
	}
	return []byte(strings.Join(lines[:start], "") + strings.Join(lines[end:], ""))
}

type otherServerError struct{ path string }

func (e *otherServerError) Error() string {
	return e.path + ": [mcp_servers." + MCPServer + "] is another program's server; rally leaves it alone"
}

// tomlRunsGit says whether a table's command is git (rally's entry before
// it ran git-rally directly).
func tomlRunsGit(sec string) bool {
	for _, l := range strings.Split(sec, "\n") {
		k, v, ok := strings.Cut(l, "=")
		if ok && strings.TrimSpace(k) == "command" && strings.TrimSpace(v) == `"git"` {
			return true
		}
	}
	return false
}
