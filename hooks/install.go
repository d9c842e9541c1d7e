package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-rally/git-rally/worktree"
)

// Hosts rally installs hooks for.
const (
	Git    = "git"
	Claude = "claude"
	Codex  = "codex"
	Gemini = "gemini"
	Cursor = "cursor"
)

// DefaultHosts are the hosts `hooks install` handles when no flag names one.
var DefaultHosts = []string{Git, Claude, Codex}

// AllHosts are every host rally installs into; `hooks status` and
// `uninstall` with no flag cover those of them rally's lines are in.
var AllHosts = []string{Git, Claude, Codex, Gemini, Cursor}

// GitHookNames are the git hooks --git installs and removes together.
var GitHookNames = []string{"pre-commit", "pre-push", "post-commit"}

// States of an installation.
const (
	StateInstalled    = "installed"
	StateNotInstalled = "not installed"
	StateOutdated     = "outdated"
)

// Result is what install, uninstall or status found or did for one host.
type Result struct {
	Host    string
	Path    string   // the file that holds rally's hook
	State   string   // after the operation
	Changed bool     // whether the operation wrote anything
	Chained string   // git: the user's own hook that runs first
	Events  []string // agent hosts: the events rally's entries answer
	Note    string   // what the user should know (trust steps, foreign hooks)
	MCP     string   // the MCP server's name, when this is the host's MCP registration
	// Local is a worktree-local copy rally keeps besides Path (Codex in
	// a linked worktree: Path is the main checkout's file Codex runs).
	Local string
	// Problems are what stands between installed entries and hooks that
	// run: trust and approval steps, a start directory, a switch.
	Problems []Problem
}

// Install adds rally's hook for host. Installing twice changes nothing.
func Install(r *worktree.Repo, host string) (Result, error) {
	switch host {
	case Git:
		return installGit(r)
	case Codex:
		if m := codexMain(r); m != nil {
			return installCodexLinked(r, m)
		}
		return installSettings(r, host)
	case Claude, Gemini, Cursor:
		return installSettings(r, host)
	}
	return Result{}, fmt.Errorf("unknown host %q", host)
}

// Uninstall removes rally's hook for host and restores what was there.
func Uninstall(r *worktree.Repo, host string) (Result, error) {
	switch host {
	case Git:
		return uninstallGit(r)
	case Claude, Codex, Gemini, Cursor:
		return uninstallSettings(r, host)
	}
	return Result{}, fmt.Errorf("unknown host %q", host)
}

// Status reports what is installed for host, changing nothing.
func Status(r *worktree.Repo, host string) (Result, error) {
	switch host {
	case Git:
		return statusGit(r)
	case Codex:
		if m := codexMain(r); m != nil {
			return statusCodexLinked(r, m)
		}
		return statusSettings(r, host)
	case Claude, Gemini, Cursor:
		return statusSettings(r, host)
	}
	return Result{}, fmt.Errorf("unknown host %q", host)
}

// record remembers, in machine-local state, what a file was before rally
// first changed it, so uninstall can put back the very bytes. Losing it
// is harmless: uninstall then removes rally's entries and keeps the rest.
type record struct {
	Path     string      `json:"path"`
	Existed  bool        `json:"existed"`
	Original []byte      `json:"original,omitempty"`
	Mode     fs.FileMode `json:"mode,omitempty"`
	Wrote    string      `json:"wrote"`               // sha256 of what rally wrote
	MadeDirs []string    `json:"made_dirs,omitempty"` // created by rally, innermost first
}

func recordPath(r *worktree.Repo, path string) string {
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(r.RallyDir(), "hooks", "installed", hex.EncodeToString(sum[:8])+".json")
}

func loadRecord(r *worktree.Repo, path string) *record {
	b, err := os.ReadFile(recordPath(r, path))
	if err != nil {
		return nil
	}
	var rec record
	if json.Unmarshal(b, &rec) != nil || rec.Path != path {
		return nil
	}
	return &rec
}

func saveRecord(r *worktree.Repo, rec *record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	p := recordPath(r, rec.Path)
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return err
	}
	return writeAtomic(p, b, 0o666)
}

func dropRecord(r *worktree.Repo, path string) { os.Remove(recordPath(r, path)) }

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// writeAtomic replaces path with data through a temporary file in the same
// directory, so a reader sees the old file or the new one.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".rally-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(name, mode)); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}

// mkdirs creates dir and its missing parents and returns those it made,
// innermost first.
func mkdirs(dir string) ([]string, error) {
	var made []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		made = append(made, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	return made, nil
}

// removeDirs removes directories rally made, innermost first, as long as
// they are empty.
func removeDirs(dirs []string) {
	for _, d := range dirs {
		if os.Remove(d) != nil {
			return
		}
	}
}

// display shows a path relative to the worktree when it lies inside it.
func display(r *worktree.Repo, p string) string {
	if r.WorkTree == "" {
		return p
	}
	rel, err := filepath.Rel(r.WorkTree, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return filepath.ToSlash(rel)
}
