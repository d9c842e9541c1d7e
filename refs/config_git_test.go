package refs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ReadConfig reads what `git config --get` reads, over layouts of
// include and includeIf (gitdir:, gitdir/i:, onbranch:,
// hasconfig:remote.*.url:), nested and ordered includes, and the keys
// rally acts on set in an included file (SPEC §17).
func TestReadConfigAsGit(t *testing.T) {
	keys := []string{"user.k", "rally.requireSigned", "user.signingKey", "rally.sign", "core.fsync", "rally.tool"}
	type file struct{ name, text string } // name under $HOME; "local" is the repository's config
	layouts := []struct {
		name  string
		files []file
	}{
		{"include order: a later section wins over the include before it", []file{
			{"local", "[user]\n\tk = A\n[include]\n\tpath = ~/f\n[user]\n\tk = C\n"},
			{"f", "[user]\n\tk = B\n"},
		}},
		{"include order: the include wins over the section before it", []file{
			{"local", "[user]\n\tk = A\n[include]\n\tpath = ~/f\n"},
			{"f", "[user]\n\tk = B\n"},
		}},
		{"keys rally acts on in an included file", []file{
			{".gitconfig", "[include]\n\tpath = inc/signing\n"},
			{"inc/signing", "[rally]\n\trequireSigned = true\n\tsign = true\n[user]\n\tsigningKey = ~/.ssh/k.pub\n[core]\n\tfsync = committed\n"},
		}},
		{"includeIf gitdir: matching the repository", []file{
			{".gitconfig", "[includeIf \"gitdir:REPO/\"]\n\tpath = ~/work\n"},
			{"work", "[rally]\n\trequireSigned = true\n\tsign = yes\n\ttool = codex:a1\n[user]\n\tsigningKey = /k\n[core]\n\tfsync = all\n"},
		}},
		{"includeIf gitdir: not matching", []file{
			{".gitconfig", "[rally]\n\tsign = false\n[includeIf \"gitdir:/elsewhere/\"]\n\tpath = ~/work\n"},
			{"work", "[rally]\n\trequireSigned = true\n\tsign = true\n"},
		}},
		{"includeIf gitdir/i: in another case", []file{
			{".gitconfig", "[includeIf \"gitdir/i:UPREPO/\"]\n\tpath = ~/work\n"},
			{"work", "[rally]\n\trequireSigned = on\n[user]\n\tsigningKey = ~/id\n"},
		}},
		{"includeIf onbranch: the current branch", []file{
			{"local", "[includeIf \"onbranch:main\"]\n\tpath = ~/main\n[includeIf \"onbranch:other\"]\n\tpath = ~/other\n"},
			{"main", "[rally]\n\tsign = true\n[user]\n\tk = main\n"},
			{"other", "[rally]\n\trequireSigned = true\n[user]\n\tk = other\n"},
		}},
		{"includeIf hasconfig:remote.*.url:", []file{
			{".gitconfig", "[includeIf \"hasconfig:remote.*.url:https://example.com/**\"]\n\tpath = ~/corp\n"},
			{"local", "[remote \"origin\"]\n\turl = https://example.com/team/repo.git\n"},
			{"corp", "[rally]\n\trequireSigned = true\n[core]\n\tfsync = reference\n"},
		}},
		{"nested include with an includeIf inside", []file{
			{".gitconfig", "[user]\n\tk = g\n[include]\n\tpath = a\n"},
			{"a", "[includeIf \"gitdir:REPO/\"]\n\tpath = b\n[user]\n\tk = a\n"},
			{"b", "[user]\n\tk = b\n\tsigningKey = fromb\n"},
		}},
		{"plain files, no include", []file{
			{".gitconfig", "[user]\n\tk = g\n[rally]\n\tsign\n"},
			{"local", "[user]\n\tk = l\n[core]\n\tfsync = loose-object\n"},
		}},
	}
	for _, lo := range layouts {
		t.Run(lo.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
			t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			unsetenv(t, "GIT_CONFIG_GLOBAL")
			unsetenv(t, "GIT_CONFIG_PARAMETERS")
			unsetenv(t, "GIT_CONFIG_COUNT")
			gd := gitRepo(t)
			gitOut(t, gd, "symbolic-ref", "HEAD", "refs/heads/main")
			repo := filepath.Dir(gd)
			for _, f := range lo.files {
				text := strings.ReplaceAll(f.text, "UPREPO", strings.ToUpper(repo))
				text = strings.ReplaceAll(text, "REPO", repo)
				if f.name == "local" {
					old, _ := os.ReadFile(filepath.Join(gd, "config"))
					text = string(old) + text
				}
				p := filepath.Join(home, f.name)
				if f.name == "local" {
					p = filepath.Join(gd, "config")
				}
				os.MkdirAll(filepath.Dir(p), 0o777)
				if err := os.WriteFile(p, []byte(text), 0o666); err != nil {
					t.Fatal(err)
				}
			}
			c := ReadConfig(gd, "")
			for _, k := range keys {
				want, _ := exec.Command("git", "--git-dir", gd, "config", "--get", k).Output()
				if got := c.Get(k); got != strings.TrimSuffix(string(want), "\n") {
					t.Errorf("Get(%s) = %q, git config reads %q", k, got, want)
				}
				wantB, _ := exec.Command("git", "--git-dir", gd, "config", "--type=bool", "--get", k).Output()
				if b := strings.TrimSpace(string(wantB)); (b == "true" || b == "false") && c.Bool(k) != (b == "true") {
					t.Errorf("Bool(%s) = %v, git config reads %s", k, c.Bool(k), b)
				}
			}
			if c.Conditional() {
				t.Error("Conditional after git was asked: callers would ask git again")
			}
		})
	}
}
