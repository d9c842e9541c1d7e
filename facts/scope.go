package facts

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Scope kinds.
var ScopeKinds = []string{"file", "dir", "glob", "branch", "service", "port", "task"}

// Scope is one claimable thing, canonically "kind:value".
type Scope struct {
	Kind  string
	Value string
}

func (s Scope) String() string { return s.Kind + ":" + s.Value }

// IsPath reports whether the scope names paths in the worktree.
func (s Scope) IsPath() bool { return s.Kind == "file" || s.Kind == "dir" || s.Kind == "glob" }

// PathContext resolves path arguments: Root is the worktree's top level
// (empty in a bare repository), Cwd the directory the command runs in.
type PathContext struct {
	Root string
	Cwd  string
	// RootIsReal says Root is free of symlinks (filepath.EvalSymlinks'
	// answer): the symlink check does not resolve it again.
	RootIsReal bool
}

// ParseScope turns a command-line argument into a canonical scope. A bare
// path is a file scope, or a dir scope when it ends in / or names an
// existing directory; bare paths are relative to the current directory,
// typed path scopes to the repository root.
func ParseScope(arg string, pc PathContext) (Scope, error) {
	if len(arg) > MaxScope {
		return Scope{}, &UsageError{Msg: fmt.Sprintf("scope is %d bytes; the limit is %d", len(arg), MaxScope),
			Hint: "claim the directory that holds it (dir:<path>) or a glob"}
	}
	sc, err := parseScope(arg, pc)
	if err != nil {
		return sc, err
	}
	if why := NonCanonical(sc.String()); why != "" {
		return Scope{}, usagef("scope %q: %s", Sanitize(arg, 200), why)
	}
	return sc, nil
}

func parseScope(arg string, pc PathContext) (Scope, error) {
	if strings.TrimSpace(arg) == "" {
		return Scope{}, usagef("empty scope")
	}
	if i := strings.IndexByte(arg, ':'); i > 0 && !strings.ContainsAny(arg[:i], "/.\\") {
		kind, val := arg[:i], arg[i+1:]
		if !validKind(kind) {
			return Scope{}, &UsageError{Msg: fmt.Sprintf("unknown scope kind %q in %q", kind, arg),
				Hint: "use one of file:, dir:, glob:, branch:, service:, port:, task: or a plain path"}
		}
		return parseTyped(kind, val, pc)
	}
	p, err := RepoPath(arg, pc, true)
	if err != nil {
		return Scope{}, err
	}
	if strings.HasSuffix(arg, "/") || p == "." {
		return Scope{"dir", p}, nil
	}
	if pc.Root != "" {
		if fi, err := os.Stat(filepath.Join(pc.Root, filepath.FromSlash(p))); err == nil && fi.IsDir() {
			return Scope{"dir", p}, nil
		}
	}
	return Scope{"file", p}, nil
}

func validKind(k string) bool {
	for _, s := range ScopeKinds {
		if s == k {
			return true
		}
	}
	return false
}

func parseTyped(kind, val string, pc PathContext) (Scope, error) {
	if val == "" || (!(kind == "file" || kind == "dir" || kind == "glob") && strings.TrimSpace(val) == "") {
		return Scope{}, usagef("empty value in scope %s:", kind)
	}
	switch kind {
	case "file", "dir":
		p, err := RepoPath(val, pc, false)
		if err != nil {
			return Scope{}, err
		}
		if kind == "file" && p == "." {
			return Scope{}, usagef("file:%s names the repository root; use dir:.", val)
		}
		return Scope{kind, p}, nil
	case "glob":
		p, err := RepoPath(val, pc, false)
		if err != nil {
			return Scope{}, err
		}
		if !doublestar.ValidatePattern(p) {
			return Scope{}, usagef("bad glob pattern %q", val)
		}
		return Scope{kind, p}, nil
	case "port":
		n, err := strconv.Atoi(strings.TrimSpace(val))
		if err != nil || n < 1 || n > 65535 {
			return Scope{}, usagef("bad port %q: want a number from 1 to 65535", val)
		}
		return Scope{kind, strconv.Itoa(n)}, nil
	default:
		v := strings.TrimSpace(val)
		if !Printable(v) {
			return Scope{}, usagef("control or invisible character in scope %s:%q", kind, Sanitize(v, 200))
		}
		if len(v) > 256 {
			return Scope{}, usagef("scope %s: value is longer than 256 bytes", kind)
		}
		return Scope{kind, v}, nil
	}
}

// RepoPath makes a path repository-relative and slash-separated, resolving
// ./ and ..; an absolute path must lie inside the repository. relCwd says
// whether a relative path is taken from the current directory.
func RepoPath(p string, pc PathContext, relCwd bool) (string, error) {
	orig := p
	if !Printable(p) {
		return "", &UsageError{Msg: fmt.Sprintf("path %q holds a control or invisible character", Sanitize(p, 200)),
			Hint: "name the file without control characters, bidi marks or NUL"}
	}
	p = filepath.FromSlash(p)
	var rel string
	switch {
	case filepath.IsAbs(p):
		if pc.Root == "" {
			return "", usagef("absolute path %q in a bare repository", orig)
		}
		r, err := filepath.Rel(pc.Root, filepath.Clean(p))
		if err != nil {
			return "", usagef("path %q is outside the repository", orig)
		}
		if r2, ok := relViaSymlinks(pc.Root, p); ok {
			r = r2
		}
		rel = r
	case relCwd && pc.Root != "" && pc.Cwd != "":
		r, err := filepath.Rel(pc.Root, filepath.Join(pc.Cwd, p))
		if err != nil {
			return "", usagef("path %q is outside the repository", orig)
		}
		rel = r
	default:
		rel = p
	}
	rel = path.Clean(filepath.ToSlash(rel))
	if rel == ".." || strings.HasPrefix(rel, "../") || strings.HasPrefix(rel, "/") {
		return "", &UsageError{Msg: fmt.Sprintf("path %q is outside the repository", orig),
			Hint: "claim paths inside the repository, relative to its top level"}
	}
	if rel == ".git" || strings.HasPrefix(rel, ".git/") {
		return "", usagef("path %q is inside .git", orig)
	}
	if pc.Root != "" && rel != "." {
		if err := insideViaSymlinks(pc, rel, orig); err != nil {
			return "", err
		}
	}
	return rel, nil
}

// insideViaSymlinks refuses a repository path whose existing part leads
// out of the repository through a symlink (claim etclink/passwd with
// etclink -> /etc). Only the literal part of a pattern is followed.
func insideViaSymlinks(pc PathContext, rel, orig string) error {
	root := pc.Root
	lit := rel
	if i := strings.IndexAny(lit, "*?[{"); i >= 0 {
		lit = path.Dir(lit[:i] + "x")
	}
	p := filepath.Join(root, filepath.FromSlash(lit))
	realRoot, rootErr := root, error(nil)
	if !pc.RootIsReal {
		realRoot, rootErr = filepath.EvalSymlinks(root)
	}
	// Where a write to the path would land: symlinks followed, a dangling
	// one too (a write through it creates its target).
	var real string
	var err error
	if rootErr == nil {
		real, err = resolveUnder(realRoot, lit)
	} else {
		real, err = resolveLenient(p, 0)
	}
	if err != nil {
		return &UsageError{Msg: fmt.Sprintf("path %q: %v", orig, err)}
	}
	if rootErr != nil {
		return nil
	}
	r, err := filepath.Rel(realRoot, real)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return &UsageError{Msg: fmt.Sprintf("path %q leaves the repository through a symlink (to %s)", orig, Sanitize(real, 200)),
			Hint: "claim the path inside the repository that you will change"}
	}
	return nil
}

// resolveUnder is resolveLenient(filepath.Join(realRoot, rel)) for a
// realRoot that filepath.EvalSymlinks returned and a clean relative
// slash path rel: it looks at rel's components one by one from realRoot,
// and the first that is missing ends the walk (the rest is kept as
// written). resolveLenient's EvalSymlinks walked the whole path from / again
// for each missing component: a claim of a new file in a new directory
// made 21 lstat calls, 5 now. A symlink on the way goes to resolveLenient.
func resolveUnder(realRoot, rel string) (string, error) {
	cur, rest := realRoot, rel
	for rest != "" {
		c := rest
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			c, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if c == "" || c == "." {
			continue
		}
		q := filepath.Join(cur, c)
		fi, err := os.Lstat(q)
		if err != nil {
			return filepath.Join(q, filepath.FromSlash(rest)), nil
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return resolveLenient(filepath.Join(q, filepath.FromSlash(rest)), 0)
		}
		cur = q
	}
	return cur, nil
}

// resolveLenient is filepath.EvalSymlinks for a path whose tail may not
// exist: the missing part is kept as written, and a dangling symlink is
// followed to the target it names.
func resolveLenient(p string, hops int) (string, error) {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real, nil
	}
	if hops > 40 {
		return "", fmt.Errorf("too many levels of symbolic links")
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p, nil
	}
	fi, err := os.Lstat(p)
	if err == nil && fi.Mode()&os.ModeSymlink != 0 {
		t, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(parent, t)
		}
		return resolveLenient(t, hops+1)
	}
	rp, err := resolveLenient(parent, hops)
	if err != nil {
		return "", err
	}
	return filepath.Join(rp, filepath.Base(p)), nil
}

// relViaSymlinks handles an absolute path given through a symlinked prefix
// of the repository (for example /tmp on macOS).
func relViaSymlinks(root, p string) (string, bool) {
	dir := filepath.Dir(p)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", false
	}
	r, err := filepath.Rel(root, filepath.Join(real, filepath.Base(p)))
	if err != nil || strings.HasPrefix(r, "..") {
		return "", false
	}
	return r, true
}

// MustParseCanonical reads a stored canonical scope string; stored scopes
// from other versions that do not parse are kept as opaque kinds.
func ParseCanonical(s string) Scope {
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return Scope{"opaque", s}
	}
	return Scope{s[:i], s[i+1:]}
}

// contains reports whether dir d contains path p (or is p).
func contains(d, p string) bool {
	return d == "." || d == p || strings.HasPrefix(p, d+"/")
}

func nests(a, b string) bool { return contains(a, b) || contains(b, a) }

// literalPrefix is the leading run of a glob's segments that hold no
// pattern characters, "." when there is none.
func literalPrefix(g string) string {
	segs := strings.Split(g, "/")
	n := 0
	for n < len(segs) && !strings.ContainsAny(segs[n], "*?[{\\") {
		n++
	}
	if n == 0 {
		return "."
	}
	return strings.Join(segs[:n], "/")
}

// Overlap reports whether two scopes can name the same thing. It is
// symmetric. Globs overlap conservatively with dirs and other globs: when
// their literal prefixes nest.
func Overlap(a, b Scope) bool {
	if !a.IsPath() || !b.IsPath() {
		return a.Kind == b.Kind && a.Value == b.Value
	}
	if a.Kind > b.Kind { // order the pair: dir < file < glob
		a, b = b, a
	}
	switch a.Kind + "/" + b.Kind {
	case "file/file":
		return a.Value == b.Value
	case "dir/file":
		return contains(a.Value, b.Value)
	case "dir/dir":
		return nests(a.Value, b.Value)
	case "file/glob":
		ok, _ := doublestar.Match(b.Value, a.Value)
		return ok
	case "dir/glob":
		if ok, _ := doublestar.Match(b.Value, a.Value); ok {
			return true
		}
		return nests(a.Value, literalPrefix(b.Value))
	case "glob/glob":
		if a.Value == b.Value {
			return true
		}
		return nests(literalPrefix(a.Value), literalPrefix(b.Value))
	}
	return false
}

// Covers reports whether a scope covers a repository path.
func Covers(s Scope, p string) bool {
	switch s.Kind {
	case "file":
		return s.Value == p
	case "dir":
		return contains(s.Value, p)
	case "glob":
		ok, _ := doublestar.Match(s.Value, p)
		return ok
	}
	return false
}

// AccessConflict reports whether two access modes conflict.
func AccessConflict(a, b string) bool {
	a, b = normAccess(a), normAccess(b)
	if a == Advisory || b == Advisory {
		return false
	}
	return !(a == Shared && b == Shared)
}

func normAccess(a string) string {
	if a == "" {
		return Exclusive
	}
	return a
}

// ScopesConflict returns the first pair of conflicting scopes.
func ScopesConflict(a []string, accA string, b []string, accB string) (string, string, bool) {
	if !AccessConflict(accA, accB) {
		return "", "", false
	}
	if len(a) >= scopeIndexMin && len(b) >= scopeIndexMin {
		return scopesConflictIndexed(a, b)
	}
	for _, x := range a {
		sx := ParseCanonical(x)
		for _, y := range b {
			if Overlap(sx, ParseCanonical(y)) {
				return x, y, true
			}
		}
	}
	return "", "", false
}
