package hooks

import (
	"reflect"
	"strings"
	"testing"
)

func TestShellPaths(t *testing.T) {
	dirs := map[string]bool{"dest": true, "sub/dest": true, "/abs/dir": true}
	isDir := func(p string) bool { return dirs[p] }
	patch := "*** Begin Patch\n*** Update File: src/api.ts\n@@\n-a\n+b\n*** Add File: docs/new.md\n+hi\n*** Delete File: old.go\n*** Update File: a.go\n*** Move to: b.go\n*** End Patch\n"
	for _, tc := range []struct {
		name, cmd string
		want      []string
	}{
		{"plain command", "go test ./...", nil},
		{"apply_patch heredoc", "apply_patch <<'EOF'\n" + patch + "EOF\n", []string{"src/api.ts", "docs/new.md", "old.go", "a.go", "b.go"}},
		{"apply_patch heredoc unquoted delim and cd", "cd sub && apply_patch <<EOF\n*** Begin Patch\n*** Add File: x.go\n+x\n*** End Patch\nEOF", []string{"sub/x.go"}},
		{"apply_patch argument", "apply_patch '*** Begin Patch\n*** Update File: q.go\n*** End Patch'", []string{"q.go"}},
		{"apply_patch <<- strips tabs", "apply_patch <<-END\n\t*** Begin Patch\n\t*** Update File: t.go\n\t*** End Patch\n\tEND\necho done > log.txt", []string{"t.go", "log.txt"}},
		{"heredoc body is not commands", "cat > out.txt <<'EOF'\nrm -rf important\n> not-a-file\nEOF\n", []string{"out.txt"}},
		{"redirections", "echo a > one.txt; echo b >> two.txt && echo c 2> err.log | cat &> all.log; echo d >| clobber", []string{"one.txt", "two.txt", "err.log", "all.log", "clobber"}},
		{"no space redirection", "echo a>x.txt 1>>y.txt", []string{"x.txt", "y.txt"}},
		{"descriptor duplication is no file", "make 2>&1 >/dev/null", nil},
		{">& to a file", "make >& build.log", []string{"build.log"}},
		{"input redirections", "sort < in.txt <<< word", nil},
		{"tee", "echo x | tee -a one.md two.md", []string{"one.md", "two.md"}},
		{"sed -i", "sed -i 's/a/b/' f1.go f2.go", []string{"f1.go", "f2.go"}},
		{"sed -i.bak -e", "sed -i.bak -e s/a/b/ -e s/c/d/ g.go", []string{"g.go"}},
		{"sed -ni combined", "sed -ni p h.go", []string{"h.go"}},
		{"sed --in-place -f", "sed --in-place=.orig -f script.sed k.go", []string{"k.go"}},
		{"sed without -i writes nothing", "sed 's/a/b/' f.go > out.go", []string{"out.go"}},
		{"mv", "mv old.go new.go", []string{"old.go", "new.go"}},
		{"mv into a directory", "mv -f a.go b.go dest", []string{"a.go", "b.go", "dest/a.go", "dest/b.go"}},
		{"mv -t", "mv -t dest c.go", []string{"c.go", "dest/c.go"}},
		{"cp writes the destination only", "cp -r src.go copy.go", []string{"copy.go"}},
		{"cp into a directory after cd", "cd sub; cp ../x.go dest/", []string{"sub/dest/x.go"}},
		{"rm", "rm -f gone.go -- -odd", []string{"gone.go", "-odd"}},
		{"touch and truncate -s", "touch new.go && truncate -s 0 big.log", []string{"new.go", "big.log"}},
		{"dd of=", "dd if=/dev/zero of=disk.img bs=1", []string{"disk.img"}},
		{"quotes", `echo x > "with space.txt"; echo y > 'single q.txt'; echo z > esc\ aped.txt`, []string{"with space.txt", "single q.txt", "esc aped.txt"}},
		{"variables and globs are unreadable", `echo x > "$OUT"; rm *.go; mv $a b; echo > ~/x; rm {a,b}.go; touch ` + "`name`", []string{"b"}},
		{"command substitution does not split", `echo "$(date; rm x)" > stamp.txt`, []string{"stamp.txt"}},
		{"substitution in a word", `rm $(ls) keep.go`, []string{"keep.go"}},
		{"cd to an unknown place", "cd $DIR && echo x > rel.txt; echo y > /abs/ok.txt", []string{"/abs/ok.txt"}},
		{"absolute paths", "sed -i s/a/b/ /repo/z.go", []string{"/repo/z.go"}},
		{"assignments and wrappers", "FOO=1 env -i BAR=2 sudo -E rm w.go; nohup tee n.log", []string{"w.go", "n.log"}},
		{"bash -lc", `bash -lc "apply_patch <<'EOF'
*** Begin Patch
*** Update File: nested.go
*** End Patch
EOF
"`, []string{"nested.go"}},
		{"sh -c quoted", `sh -c 'echo a > inner.txt'`, []string{"inner.txt"}},
		{"comments", "echo x # > not.txt\necho y > yes.txt", []string{"yes.txt"}},
		{"line continuation", "echo x \\\n > cont.txt", []string{"cont.txt"}},
		{"dev files", "echo x > /dev/null; echo y | tee /dev/stderr", nil},
		{"subshell and group", "(cd sub && echo a > in.txt); { echo b > out.txt; }", []string{"sub/in.txt", "out.txt"}},
		{"unterminated quote", "echo 'x > y.txt", nil},
		{"keywords", "if [ -f a.go ]; then rm a.go; else touch b.go; fi; while true; do echo x >> c.log; done", []string{"a.go", "b.go", "c.log"}},
		{"for loops stay unread", "for f in *.go; do rm $f; done", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ShellPaths(tc.cmd, isDir); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ShellPaths(%q) = %q, want %q", tc.cmd, got, tc.want)
			}
		})
	}
}

func TestShellHeredocIsPatch(t *testing.T) {
	// The exact shape Codex 0.171 sends through its shell tool.
	cmd := "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/api.ts\n@@\n-x\n+y\n*** End Patch\nEOF"
	if got := ShellPaths(cmd, nil); !reflect.DeepEqual(got, []string{"src/api.ts"}) {
		t.Fatalf("got %q", got)
	}
}

func FuzzShellPaths(f *testing.F) {
	f.Add("apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n*** End Patch\nEOF\n")
	f.Add(`sed -i -e "s/$x/y/" 'a b' > c 2>&1 | tee -a d; mv -t e f; bash -c "rm g"`)
	f.Add("cat <<-A <<B\n\tx\n\tA\ny\nB\n")
	f.Fuzz(func(t *testing.T, cmd string) {
		for _, p := range ShellPaths(cmd, func(string) bool { return false }) {
			if p == "" || strings.HasPrefix(p, "/dev/") {
				t.Fatalf("bad path %q from %q", p, cmd)
			}
		}
	})
}
