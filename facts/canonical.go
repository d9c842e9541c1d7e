package facts

import (
	"path"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// MaxScope bounds a scope's length (kind, colon and value), at input and
// when read: 1 KiB, the limit of a subject.
const MaxScope = 1 << 10

// WholeRoom is the scope of the whole room: it overlaps every scope (SPEC §3).
const WholeRoom = "workspace:*"

// NonCanonical says why a scope read from the ledger is not one that
// ParseScope could have written (SPEC §3): "" when it is canonical. Such
// a scope never counts as a claim: the fact that carries it is corrupt.
// Canonical means: a known kind; a path that is repository-relative,
// clean (no "." or ".." element but the root "dir:.", no doubled or
// trailing "/"), outside .git and not empty; a valid glob pattern; a port
// 1-65535 written as ParseScope writes it; other values trimmed and
// printable; at most MaxScope bytes. "glob:**" and "dir:." are canonical:
// legitimate claims of everything.
func NonCanonical(s string) string {
	if len(s) > MaxScope {
		return "longer than 1 KiB"
	}
	if s == WholeRoom {
		return ""
	}
	kind, val, ok := strings.Cut(s, ":")
	if !ok || kind == "" {
		return "no kind"
	}
	if !validKind(kind) {
		return "unknown kind"
	}
	if val == "" {
		return "empty value"
	}
	if !Printable(val) {
		return "control or invisible character"
	}
	switch kind {
	case "file", "dir", "glob":
		if kind == "dir" && val == "." {
			return ""
		}
		if strings.HasPrefix(val, "/") {
			return "absolute path"
		}
		if val == "." || path.Clean(val) != val {
			return "path not clean (./, .., // or a trailing /)"
		}
		if val == ".." || strings.HasPrefix(val, "../") {
			return "path outside the repository"
		}
		if val == ".git" || strings.HasPrefix(val, ".git/") {
			return "path inside .git"
		}
		if kind == "glob" && !doublestar.ValidatePattern(val) {
			return "bad glob pattern"
		}
	case "port":
		n, err := strconv.Atoi(val)
		if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != val {
			return "port not a number 1-65535"
		}
	default:
		if strings.TrimSpace(val) != val {
			return "value not trimmed"
		}
		if len(val) > 256 {
			return "value longer than 256 bytes"
		}
	}
	return ""
}
