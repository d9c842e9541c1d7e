package refs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/config"
)

// configInputs are config files that exercise git's syntax: quoting,
// escapes, continuation lines, comments, subsections and their case
// rules, bare keys, CRLF, a byte order mark, and files git refuses.
var configInputs = []string{
	"",
	"# only a comment\n; and another\n",
	"[core]\n\tbare = false\n\trepositoryformatversion = 0\n[remote \"origin\"]\n\turl = https://example.com/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
	"[core] bare = true\n",
	"[a]k=v\n[a \"b\"]k=w",
	"[rally]\n\tsign\n\tempty =\n\tspaces =   \n",
	"[Rally] Sign = Yes\n[Rally \"Sub\"] KEY = v\n[A.B] C = d\n[a.b \"C\"] e = f\n",
	"[user]\n\tname = \"a b\"  c  \n\tx = a\"  \"b\n\ty = \"a;b#c\" # comment\n\tz = \" lead\"\n\tw = trail\t \n",
	"[s]\n\tv = a ; comment\n\tw = a# comment\n\tu = \"x\" ; \"y\"\n",
	"[s]\n\tesc = a\\tb\\nc\\bd\\\\e\\\"f\n",
	"[s]\n\tbad = a\\xb\n",
	"[s]\n\tcont = a\\\n  b\n\tq = \"a\\\nb\"\n",
	"[s]\n\tcont = trailing\\",
	"[s]\n\tq = \"unterminated\n",
	"[s]\n\tq = \"a\" \"b\" c\n",
	"[a \"b\\\"c\\\\d\\e\"]\n\tk = v\n",
	"[a \"b\" ]\n\tk = v\n",
	"[a   \"b\"]\n\tk = v\n",
	"[a \"\"]\n\tk = v\n",
	"[a \"b]\n\tk = v\n",
	"[a\n\tk = v\n",
	"[]\n\tk = v\n",
	"[a_b]\n\tk = v\n",
	"[a]\n\tmy-key2 = v\n\tK-Y = w\n",
	"[a]\n\t2k = v\n",
	"[a]\n\tk v\n",
	"[a]\n\tk   =v\n\tu=\t x \t\n",
	"[a]\r\n\tk = v\r\n\tw = x\r\n",
	"[a]\n\tk = a\rb\n",
	"[a]\n\tk = a\t\tb  c\n",
	"\xef\xbb\xbf[a]\n\tk = bom\n",
	"\xef\xbb[a]\n\tk = partial\n",
	"[a]\n\tk = no newline at the end",
	"k = outside any section\n[a]\nb\n",
	"[include]\n\tpath = other\n[includeIf \"gitdir:/x/\"]\n\tpath = y\n",
	"[url \"git@host:\"]\n\tinsteadOf = https://host/\n",
	"[a]\n\tk = x=y=z\n\tk = second\n",
	"[a]\n\tk = \"\"\n\tl = \"\" x\n",
	"[a]\n\tk = v # c \\\n\tl = w\n",
	"[a \"sub\"] # c\n\tk = v\n[b] ; c\n\tk = w\n",
	"[a]\n\tk=\xc3\xa9t\xc3\xa9\n",
	"[a] k = 1 [b] l = 2\n",
	"[a]\n\tk = v\n\t[b]\n",
	"[a]\n\tk   \n\tl\t# c\n\tm ; c\n",
	"[a]\n\tk =#\n\tl = ;\n\tm = \"#\"\n",
	"[a \"b\nc\"]\n\tk = v\n",
	"[a]\n\tk = \"x\\\n   y\"\n\tl = x \\\n   y\n",
	"[a]\n\tk = x\\",
	"[a]\n\tk = \"x\\\"",
	"[a]\n\tk = a\\\"b\\\\c\n",
	"[a]\n\tk = \\t\n",
	"[a]\n\tk = v\r\n\r\n[b]\r\n\tl\r\n",
	"[a]\n\tk\r= v\n",
	"[a]k\n",
	"[a.b.c]\n\tk = v\n",
	"[a-b \"C.D\"]\n\tk-1 = v\n",
	"[a]\n\tk = \x00v\n",
}

// parseConfig lists what `git config -z --list --file` lists, and
// refuses what git refuses.
func TestParseConfigAsGit(t *testing.T) {
	dir := t.TempDir()
	tab := filepath.Join(dir, "tab")
	os.WriteFile(tab, []byte("[a]\n\tk = a\tb\n"), 0o666)
	out, _ := exec.Command("git", "config", "--file", tab, "a.k").Output()
	keepsTabs := string(out) == "a\tb\n"
	for i, in := range configInputs {
		p := filepath.Join(dir, fmt.Sprintf("c%d", i))
		if err := os.WriteFile(p, []byte(in), 0o666); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "config", "-z", "--list", "--file", p)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=")
		out, gitErr := cmd.Output()
		got, err := parseConfig([]byte(in))
		if (gitErr != nil) != (err != nil) {
			t.Errorf("%q: git says %v, parseConfig %v", in, gitErr, err)
			continue
		}
		if gitErr != nil {
			continue
		}
		var want []configEntry
		for _, e := range strings.Split(string(out), "\x00") {
			if e == "" {
				continue
			}
			k, v, ok := strings.Cut(e, "\n")
			if !ok {
				v = noValue
			}
			want = append(want, configEntry{k, v})
		}
		if keepsTabs {
			// git 2.45 keeps a tab inside a value; parseConfig reads it as
			// git before 2.45 did, as a space.
			r := strings.NewReplacer("\t", " ", "\r", " ")
			for i := range want {
				want[i].val = r.Replace(want[i].val)
			}
			for i := range got {
				got[i].val = r.Replace(got[i].val)
			}
		}
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Errorf("%q:\n parseConfig %q\n git         %q", in, got, want)
		}
	}
}

// A bare key is true and an empty value false, as git reads booleans.
func TestConfigBoolBareAndEmpty(t *testing.T) {
	c := &Config{vals: map[string][]string{}}
	c.readData("config", []byte("[rally]\n\tsign\n\trequireSigned =\n"), 0)
	if !c.Bool("rally.sign") {
		t.Error("a bare key reads false")
	}
	if c.Bool("rally.requireSigned") {
		t.Error("an empty value reads true")
	}
	if c.Get("rally.sign") != "" {
		t.Errorf("Get of a bare key = %q", c.Get("rally.sign"))
	}
}

// The repository config of a clone with a remote and a few rally keys,
// and a global config with an alias section: what a claim reads.
var benchConfig = []byte(`[core]
	repositoryformatversion = 0
	filemode = true
	bare = false
	logallrefupdates = true
[remote "origin"]
	url = https://example.com/team/repo.git
	fetch = +refs/heads/*:refs/remotes/origin/*
[branch "main"]
	remote = origin
	merge = refs/heads/main
[rally]
	tool = codex:a1
	sign = false
[user]
	name = "A. Person"
	email = person@example.com
[alias]
	st = status --short ; a comment
	lg = "log --graph --oneline"
`)

// The hand-written reader against go-git's format/config (gcfg), which
// it replaces. Per process the larger gain is not linking gcfg: encoding/gob's
// package initialisation (GODEBUG=inittrace=1 git-rally version).
func BenchmarkParseConfig(b *testing.B) {
	b.Run("rally", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := parseConfig(benchConfig); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-git", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			var cfg config.Config
			if err := config.NewDecoder(bytes.NewReader(benchConfig)).Decode(&cfg); err != nil {
				b.Fatal(err)
			}
		}
	})
}
