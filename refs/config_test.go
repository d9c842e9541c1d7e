package refs

import (
	"os"
	"path/filepath"
	"testing"
)

// ReadConfig answers as git config --get does for the keys rally reads.
func TestReadConfig(t *testing.T) {
	gd := gitRepo(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	unsetenv(t, "GIT_CONFIG_GLOBAL")
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tsigningKey = ~/.ssh/id.pub\n[rally]\n\tsign = false\n"), 0o666)
	os.WriteFile(filepath.Join(gd, "extra"), []byte("[gpg \"ssh\"]\n\tallowedSignersFile = /etc/allowed\n"), 0o666)
	for _, kv := range [][]string{{"rally.sign", "yes"}, {"include.path", "extra"}, {"Rally.RequireSigned", "true"}} {
		gitOut(t, gd, "config", kv[0], kv[1])
	}
	t.Setenv("GIT_CONFIG_PARAMETERS", `'rally.tool'='codex:a1' 'rally.x=it'\''s'`)
	c := ReadConfig(gd, "")
	for k, want := range map[string]string{
		"user.signingKey":            "~/.ssh/id.pub",
		"gpg.ssh.allowedSignersFile": "/etc/allowed",
		"rally.tool":                 "codex:a1",
		"rally.x":                    "it's",
	} {
		if got := c.Get(k); got != want {
			t.Errorf("Get(%s) = %q, want %q", k, got, want)
		}
	}
	if !c.Bool("rally.sign") || !c.Bool("rally.requiresigned") || c.Bool("rally.nothing") {
		t.Error("Bool")
	}
	if got := c.Path("user.signingkey"); got != filepath.Join(home, ".ssh/id.pub") {
		t.Errorf("Path = %q", got)
	}
}

// unsetenv unsets key for the test (git reads GIT_CONFIG_GLOBAL="" as no
// global file, not as unset).
func unsetenv(t *testing.T, key string) {
	t.Setenv(key, "")
	os.Unsetenv(key)
}
