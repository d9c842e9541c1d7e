package hooks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-rally/git-rally/worktree"
)

// Problem is a reason an installed hook will not run (or not as the user
// thinks), with the command that puts it right.
type Problem struct {
	Problem string
	Fix     string
}

// Env is what the host checks read of the user's environment; tests set
// it. Getwd is where the user would start the host.
var Env = struct {
	Getenv func(string) string
	Home   func() (string, error)
	Getwd  func() (string, error)
}{os.Getenv, os.UserHomeDir, os.Getwd}

// hostProblems says what will really happen with rally's installed entries
// for host: the trust and approval steps the host still wants, a start
// directory whose settings the host would read instead, switches that turn
// hooks off, and a file changed since rally wrote it.
func hostProblems(r *worktree.Repo, host string, sf settingsFile) []Problem {
	var out []Problem
	top := r.WorkTree
	if rec := loadRecord(r, sf.path); rec != nil && sf.exists && digest(sf.content) != rec.Wrote {
		out = append(out, Problem{
			Problem: sf.shown + " was changed after rally installed its entries (by hand or by another tool); rally's entries are intact, and uninstall will remove only those",
		})
	}
	home, _ := Env.Home()
	switch host {
	case Claude:
		if wd, err := Env.Getwd(); err == nil {
			if rel, err := filepath.Rel(top, wd); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
				out = append(out, Problem{
					Problem: fmt.Sprintf("Claude Code started in %s reads %s/.claude/settings.json, not the repository's: no rally hook runs in a session started there", filepath.ToSlash(rel), filepath.ToSlash(rel)),
					Fix:     "cd " + shellQuote(top) + " && claude",
				})
			}
		}
		for _, f := range []string{filepath.Join(top, ".claude", "settings.json"), filepath.Join(top, ".claude", "settings.local.json"), filepath.Join(home, ".claude", "settings.json")} {
			if jsonBool(f, "disableAllHooks") == "true" {
				out = append(out, Problem{Problem: "disableAllHooks is set in " + display(r, f) + ": Claude Code runs no hook", Fix: "remove \"disableAllHooks\" from " + display(r, f)})
			}
		}
		if home != "" && !claudeTrusted(filepath.Join(home, ".claude.json"), top) {
			out = append(out, Problem{
				Problem: "an interactive Claude Code holds back project hooks until its trust dialog for " + top + " is accepted (claude -p trusts the folder)",
				Fix:     "cd " + shellQuote(top) + " && claude   # accept the trust dialog once",
			})
		}
	case Codex:
		cfg := filepath.Join(codexHome(home), "config.toml")
		trusted, hooksOff := codexConfig(cfg, top)
		if hooksOff {
			out = append(out, Problem{Problem: "hooks are turned off in " + cfg + " ([features] hooks = false)", Fix: "remove hooks = false from [features] in " + cfg})
		}
		if !trusted {
			out = append(out, Problem{
				Problem: "Codex loads project hooks only in a trusted project, and " + top + " is not trusted in " + cfg,
				Fix:     fmt.Sprintf("printf '\\n[projects.%q]\\ntrust_level = \"trusted\"\\n' >> %s   # or trust it when codex asks", top, shellQuote(cfg)),
			})
		}
		if keys := codexHookKeys(sf); len(keys) > 0 {
			if n := len(keys) - codexApproved(cfg, keys); n > 0 {
				out = append(out, Problem{
					Problem: fmt.Sprintf("Codex runs a hook only after you approve it, and %d of rally's %d hooks have no approval in %s (unapproved hooks are skipped silently)", n, len(keys), cfg),
					Fix:     "cd " + shellQuote(top) + " && codex   # then /hooks and trust rally's hooks (codex exec: --dangerously-bypass-hook-trust)",
				})
			}
		}
	case Gemini:
		if !geminiTrusted(home, top) {
			file := geminiTrustFile(home)
			out = append(out, Problem{
				Problem: "Gemini CLI registers no project hook outside a trusted folder, and " + top + " is not trusted in " + file,
				Fix:     "cd " + shellQuote(top) + " && gemini   # and trust the folder; or add \"" + top + "\": \"TRUST_FOLDER\" to " + file + "; headless: GEMINI_CLI_TRUST_WORKSPACE=true",
			})
		}
	case Cursor:
		out = append(out, Problem{
			Problem: "Cursor reads .cursor/hooks.json when it opens the folder; a Cursor already open runs the hooks after a restart",
		})
	}
	return out
}

func codexHome(home string) string {
	if h := Env.Getenv("CODEX_HOME"); h != "" {
		return h
	}
	return filepath.Join(home, ".codex")
}

// codexConfig reads, line by line, the two things of config.toml that
// decide whether project hooks run: a [projects."<top>"] table with
// trust_level = "trusted", and [features] hooks = false.
func codexConfig(path, top string) (trusted, hooksOff bool) {
	tomlLines(path, func(table, k, v string) {
		if i := strings.Index(v, "#"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		switch {
		case table == "features" && (k == "hooks" || k == "codex_hooks") && v == "false":
			hooksOff = true
		case strings.HasPrefix(table, "projects.") && k == "trust_level" && strings.Trim(v, `"'`) == "trusted":
			// Exactly the project: Codex 0.171 loads no project hook
			// when only a directory above it is trusted.
			dir := strings.Trim(strings.TrimPrefix(table, "projects."), `"'`)
			if dir != "" && filepath.Clean(dir) == filepath.Clean(top) {
				trusted = true
			}
		}
	})
	return trusted, hooksOff
}

// tomlLines calls fn with each key = value line of the TOML file at path,
// key and value trimmed (the value as written: quotes and a comment
// stay), and the table it stands in; nothing when the file cannot be
// read. Line by line: enough for the few keys rally reads from Codex's
// config.toml.
func tomlLines(path string, fn func(table, k, v string)) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	table := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			table = strings.TrimSpace(strings.Trim(line, "[]"))
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			fn(table, strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
}

func geminiTrustFile(home string) string {
	if f := Env.Getenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH"); f != "" {
		return f
	}
	if h := Env.Getenv("GEMINI_CLI_HOME"); h != "" {
		home = h
	}
	return filepath.Join(home, ".gemini", "trustedFolders.json")
}

// geminiTrusted applies Gemini CLI's rules: GEMINI_CLI_TRUST_WORKSPACE,
// then the longest rule of trustedFolders.json that contains the folder
// (TRUST_PARENT trusts the rule's parent).
func geminiTrusted(home, top string) bool {
	switch Env.Getenv("GEMINI_CLI_TRUST_WORKSPACE") {
	case "true":
		return true
	case "false":
		return false
	}
	b, err := os.ReadFile(geminiTrustFile(home))
	if err != nil {
		return false
	}
	var rules map[string]string
	if json.Unmarshal(b, &rules) != nil {
		return false
	}
	best, level := -1, ""
	for p, l := range rules {
		eff := p
		if l == "TRUST_PARENT" {
			eff = filepath.Dir(p)
		}
		if within(eff, top) && len(p) > best {
			best, level = len(p), l
		}
	}
	return level == "TRUST_FOLDER" || level == "TRUST_PARENT"
}

// claudeTrusted reads ~/.claude.json's projects[top].hasTrustDialogAccepted
// (for top or a directory above it).
func claudeTrusted(path, top string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var cfg struct {
		Projects map[string]struct {
			Accepted bool `json:"hasTrustDialogAccepted"`
		} `json:"projects"`
	}
	if json.Unmarshal(b, &cfg) != nil {
		return false
	}
	for dir, p := range cfg.Projects {
		if p.Accepted && within(dir, top) {
			return true
		}
	}
	return false
}

// within says whether p is dir or below it.
func within(dir, p string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(p))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// jsonBool is the top-level key of a JSON file as text ("" when absent).
func jsonBool(path, key string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return ""
	}
	return strings.TrimSpace(string(m[key]))
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// codexHookKeys are the keys under which Codex records the approval of
// rally's handlers in sf: "<hooks.json>:<event_in_snake_case>:<group>:<handler>".
func codexHookKeys(sf settingsFile) []string {
	h, err := hooksOf(sf)
	if err != nil {
		return nil
	}
	var keys []string
	for _, ev := range h.keys {
		gs, _ := groupsOf(h, ev)
		for gi, g := range gs {
			var grp struct {
				Hooks []struct {
					Command string `json:"command"`
				} `json:"hooks"`
			}
			if json.Unmarshal(g, &grp) != nil {
				continue
			}
			for hi, hd := range grp.Hooks {
				if isRallyCommand(hd.Command) {
					keys = append(keys, fmt.Sprintf("%s:%s:%d:%d", sf.path, snake(ev), gi, hi))
				}
			}
		}
	}
	return keys
}

func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// codexApproved counts the keys with a trusted_hash in a
// [hooks.state."<key>"] table of Codex's config.toml. Whether that hash is
// the one of the entry as it is now only Codex can tell (it asks again
// when an entry changed; rally's entries change only between versions).
func codexApproved(path string, keys []string) int {
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	approved := map[string]bool{}
	tomlLines(path, func(table, k, v string) {
		if k != "trusted_hash" || strings.Trim(v, `"'`) == "" {
			return
		}
		if key, ok := strings.CutPrefix(table, "hooks.state."); ok {
			key = strings.Trim(key, `"'`)
			if want[key] {
				approved[key] = true
			}
		}
	})
	return len(approved)
}
