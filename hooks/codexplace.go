package hooks

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-rally/git-rally/worktree"
)

// Codex (0.171) reads a linked worktree's project hooks from the main
// checkout's .codex/hooks.json, and only when the worktree itself has a
// .codex directory (the file there is not read). So in a linked worktree
// rally's Codex entries go into both: the main checkout's file, which
// Codex runs, and the worktree's, which makes Codex look.

// codexMain returns the main checkout of a linked worktree, nil when r is
// the main checkout (or bare).
func codexMain(r *worktree.Repo) *worktree.Repo {
	main := r.MainWorkTree()
	if main == "" || r.WorkTree == "" || samePath(main, r.WorkTree) {
		return nil
	}
	m, err := worktree.Discover(main)
	if err != nil || m.WorkTree == "" {
		return nil
	}
	return m
}

func samePath(a, b string) bool {
	if a == b {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// installCodexLinked installs rally's Codex entries for a linked
// worktree: the worktree's own file (kept as Local) and the main
// checkout's, whose result it returns.
func installCodexLinked(r, m *worktree.Repo) (Result, error) {
	local, err := installSettings(r, Codex)
	if err != nil {
		return Result{}, err
	}
	res, err := installSettings(m, Codex)
	if err != nil {
		return Result{}, err
	}
	res.Changed = res.Changed || local.Changed
	res.Path = filepath.Join(m.WorkTree, filepath.FromSlash(hostFiles()[Codex].path))
	res.Local = filepath.Join(r.WorkTree, filepath.FromSlash(hostFiles()[Codex].path))
	res.Problems = codexLinkedProblems(r, m, res.Problems)
	return res, nil
}

// statusCodexLinked is what Codex will do in a linked worktree: the main
// checkout's entries, trusted and approved there, and a .codex directory
// in the worktree.
func statusCodexLinked(r, m *worktree.Repo) (Result, error) {
	res, err := statusSettings(m, Codex)
	if err != nil {
		return Result{}, err
	}
	res.Path = filepath.Join(m.WorkTree, filepath.FromSlash(hostFiles()[Codex].path))
	res.Problems = codexLinkedProblems(r, m, res.Problems)
	return res, nil
}

func codexLinkedProblems(r, m *worktree.Repo, ps []Problem) []Problem {
	if fi, err := os.Stat(filepath.Join(r.WorkTree, ".codex")); err != nil || !fi.IsDir() {
		ps = append(ps, Problem{
			Problem: "Codex reads this worktree's hooks from " + filepath.Join(m.WorkTree, ".codex", "hooks.json") + " only when the worktree has a .codex directory, and it has none",
			Fix:     "cd " + shellQuote(r.WorkTree) + " && git rally hooks install --codex",
		})
	}
	return ps
}

// CodexApproval is what ApproveCodex did.
type CodexApproval struct {
	Approved int    // rally's hooks newly recorded as trusted
	Config   string // the config.toml written
	Skipped  string // why nothing was asked (codex not installed...), "" when it was
}

// ApproveCodex records Codex's approval of exactly rally's own project
// hooks for the worktree at dir, as Codex's /hooks does: it asks Codex
// (its app-server's hooks/list, run in dir with env) which hooks it loads
// there and their hashes, and writes trusted_hash for each of rally's
// that is not trusted yet into Codex's config.toml. Other hooks of the
// repository keep waiting for the person's approval; nothing turns
// Codex's trust checks off. Called only when the person ran hooks
// install or run. Codex not installed: nothing done, Skipped says so.
func ApproveCodex(dir string, env []string) (CodexApproval, error) {
	var out CodexApproval
	prog, err := lookPathIn("codex", env)
	if err != nil {
		out.Skipped = "codex is not on PATH"
		return out, nil
	}
	hs, err := codexHooksList(prog, dir, env)
	if err != nil {
		return out, err
	}
	home := envValue(env, "HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	chome := envValue(env, "CODEX_HOME")
	if chome == "" {
		chome = filepath.Join(home, ".codex")
	}
	out.Config = filepath.Join(chome, "config.toml")
	var want []codexListed
	for _, h := range hs {
		if h.Source == "project" && isRallyCommand(h.Command) && h.TrustStatus != "trusted" && h.Key != "" && strings.HasPrefix(h.CurrentHash, "sha256:") {
			want = append(want, h)
		}
	}
	if len(want) == 0 {
		return out, nil
	}
	old, err := os.ReadFile(out.Config)
	if err != nil && !os.IsNotExist(err) {
		return out, err
	}
	if err := os.MkdirAll(chome, 0o700); err != nil {
		return out, err
	}
	mode := os.FileMode(0o600)
	if fi, err := os.Stat(out.Config); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := writeAtomic(out.Config, approveIn(old, want), mode); err != nil {
		return out, err
	}
	out.Approved = len(want)
	return out, nil
}

// approveIn is config.toml with a [hooks.state."<key>"] table holding
// trusted_hash for each hook: an earlier table of the same key is
// replaced, everything else is kept byte for byte.
func approveIn(old []byte, hs []codexListed) []byte {
	headers := map[string]bool{}
	var add strings.Builder
	for _, h := range hs {
		header := "[hooks.state." + tomlString(h.Key) + "]"
		headers[header] = true
		fmt.Fprintf(&add, "\n%s\ntrusted_hash = %s\n", header, tomlString(h.CurrentHash))
	}
	var keep strings.Builder
	skip := false
	for _, l := range strings.SplitAfter(string(old), "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "[") {
			skip = headers[t]
		}
		if !skip {
			keep.WriteString(l)
		}
	}
	s := keep.String()
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return []byte(s + add.String())
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// codexListed is one hook as Codex's hooks/list reports it.
type codexListed struct {
	Key         string `json:"key"`
	Command     string `json:"command"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"`
	Source      string `json:"source"`
}

// codexHooksList is the one place rally runs Codex: its app-server over
// stdio, asked hooks/list for dir, then ended.
func codexHooksList(prog, dir string, env []string) ([]codexListed, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, "app-server")
	cmd.Dir, cmd.Env = dir, env
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting codex app-server: %w", err)
	}
	defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }()
	send := func(v any) {
		b, _ := json.Marshal(v)
		in.Write(append(b, '\n'))
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"clientInfo": map[string]any{"name": "git-rally", "version": "1"}}})
	sc := bufio.NewScanner(outp)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var resp struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &resp) != nil || resp.ID == nil {
			continue
		}
		if resp.Error != nil {
			return nil, fmt.Errorf("codex app-server: %s", resp.Error.Message)
		}
		switch *resp.ID {
		case 1:
			send(map[string]any{"jsonrpc": "2.0", "method": "initialized"})
			send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": map[string]any{"cwds": []string{dir}}})
		case 2:
			var res struct {
				Data []struct {
					Hooks []codexListed `json:"hooks"`
				} `json:"data"`
			}
			if err := json.Unmarshal(resp.Result, &res); err != nil {
				return nil, fmt.Errorf("codex app-server hooks/list: %w", err)
			}
			var hs []codexListed
			for _, d := range res.Data {
				hs = append(hs, d.Hooks...)
			}
			return hs, nil
		}
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("codex app-server gave no hooks/list answer in 30s")
	}
	if err := sc.Err(); err != nil && err != io.EOF {
		return nil, err
	}
	return nil, fmt.Errorf("codex app-server ended without a hooks/list answer")
}

func envValue(env []string, k string) string {
	v := ""
	for _, kv := range env {
		if rest, ok := strings.CutPrefix(kv, k+"="); ok {
			v = rest
		}
	}
	return v
}

// lookPathIn finds prog on the PATH of env.
func lookPathIn(prog string, env []string) (string, error) {
	for _, dir := range filepath.SplitList(envValue(env, "PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}
