package facts

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseScope(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "src", "ui"), 0o777)
	pc := PathContext{Root: root, Cwd: filepath.Join(root, "src")}
	cases := []struct {
		arg, want string
		bad       bool
	}{
		{"api.ts", "file:src/api.ts", false},
		{"./api.ts", "file:src/api.ts", false},
		{"../README.md", "file:README.md", false},
		{"ui", "dir:src/ui", false},
		{"ui/", "dir:src/ui", false},
		{"newdir/", "dir:src/newdir", false},
		{filepath.Join(root, "src", "x.go"), "file:src/x.go", false},
		{"file:src/./a/../b.go", "file:src/b.go", false},
		{"dir:src/ui/", "dir:src/ui", false},
		{"glob:src/**/*.go", "glob:src/**/*.go", false},
		{"port:08080", "port:8080", false},
		{"port:1", "port:1", false},
		{"port:65535", "port:65535", false},
		{"branch:main", "branch:main", false},
		{"service:db", "service:db", false},
		{"task:T-12", "task:T-12", false},
		{"../../outside", "", true},
		{"file:../x", "", true},
		{"/etc/passwd", "", true},
		{"port:0", "", true},
		{"port:65536", "", true},
		{"port:http", "", true},
		{"file:", "", true},
		{"branch:", "", true},
		{"nope:x", "", true},
		{"glob:src/[", "", true},
		{"", "", true},
		{"../.git/config", "", true},
	}
	for _, c := range cases {
		got, err := ParseScope(c.arg, pc)
		if c.bad {
			if err == nil {
				t.Errorf("ParseScope(%q) = %v, want an error", c.arg, got)
			} else if _, ok := err.(*UsageError); !ok {
				t.Errorf("ParseScope(%q) error %T, want *UsageError", c.arg, err)
			}
			continue
		}
		if err != nil || got.String() != c.want {
			t.Errorf("ParseScope(%q) = %v, %v; want %s", c.arg, got, err, c.want)
		}
	}
}

func TestOverlap(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"file:a/b.go", "file:a/b.go", true},
		{"file:a/b.go", "file:a/c.go", false},
		{"dir:a", "file:a/b.go", true},
		{"dir:a", "file:ab/c.go", false}, // on / boundaries
		{"dir:a", "dir:a/b", true},
		{"dir:a/b", "dir:a", true},
		{"dir:a/b", "dir:a/c", false},
		{"dir:.", "file:x", true},
		{"glob:src/**/*.go", "file:src/x/y.go", true},
		{"glob:src/*.go", "file:src/x/y.go", false},
		{"glob:src/*.go", "file:src/y.go", true},
		{"glob:src/*.go", "dir:src", true},
		{"glob:src/*.go", "dir:src/ui", true}, // conservative: prefixes nest
		{"glob:src/*.go", "dir:lib", false},
		{"glob:src/*.go", "glob:src/ui/*.ts", true},
		{"glob:src/*.go", "glob:lib/*.go", false},
		{"glob:*.md", "file:README.md", true},
		{"glob:*.md", "dir:docs", true},
		{"branch:main", "branch:main", true},
		{"branch:main", "branch:dev", false},
		{"port:8080", "port:8080", true},
		{"port:8080", "service:8080", false},
		{"task:1", "file:1", false},
		{"service:db", "dir:.", false},
	}
	for _, c := range cases {
		a, b := ParseCanonical(c.a), ParseCanonical(c.b)
		if got := Overlap(a, b); got != c.want {
			t.Errorf("Overlap(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := Overlap(b, a); got != c.want {
			t.Errorf("Overlap(%s, %s) = %v, want %v (symmetry)", c.b, c.a, got, c.want)
		}
	}
}

// Every pair of scope kinds and every pair of accesses.
func TestConflictMatrix(t *testing.T) {
	access := []string{Exclusive, Shared, Advisory}
	want := map[[2]string]bool{
		{Exclusive, Exclusive}: true, {Exclusive, Shared}: true, {Shared, Exclusive}: true,
		{Shared, Shared}: false, {Advisory, Exclusive}: false, {Exclusive, Advisory}: false,
		{Advisory, Shared}: false, {Shared, Advisory}: false, {Advisory, Advisory}: false,
	}
	kinds := map[string][2]string{ // a scope of each kind and one it overlaps
		"file": {"file:a/b", "file:a/b"}, "dir": {"dir:a", "file:a/b"}, "glob": {"glob:a/*", "file:a/b"},
		"branch": {"branch:x", "branch:x"}, "service": {"service:x", "service:x"},
		"port": {"port:80", "port:80"}, "task": {"task:x", "task:x"},
	}
	for k, pair := range kinds {
		for _, x := range access {
			for _, y := range access {
				_, _, got := ScopesConflict([]string{pair[0]}, x, []string{pair[1]}, y)
				if got != want[[2]string{x, y}] {
					t.Errorf("%s %s vs %s %s: conflict %v, want %v", k, x, pair[1], y, got, want[[2]string{x, y}])
				}
			}
		}
	}
	// kinds never cross
	for k1, p1 := range kinds {
		for k2, p2 := range kinds {
			if k1 == k2 {
				continue
			}
			pathKinds := map[string]bool{"file": true, "dir": true, "glob": true}
			if pathKinds[k1] && pathKinds[k2] {
				continue
			}
			if Overlap(ParseCanonical(p1[0]), ParseCanonical(p2[0])) {
				t.Errorf("%s overlaps %s across kinds", p1[0], p2[0])
			}
		}
	}
}

func FuzzScope(f *testing.F) {
	for _, s := range []string{"src/a.go", "dir:src", "glob:**/*.go", "port:80", "glob:a/{b,c}/*", "file:../x", "x:y", "glob:[a-"} {
		f.Add(s, "file:src/a.go")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		pc := PathContext{Root: "/repo", Cwd: "/repo"}
		sa, errA := ParseScope(a, pc)
		sb, errB := ParseScope(b, pc)
		if errA != nil || errB != nil {
			return
		}
		// canonical forms parse back to themselves
		if again, err := ParseScope(sa.String(), pc); err != nil || again != sa {
			t.Fatalf("canonical %q does not round-trip: %v %v", sa, again, err)
		}
		if Overlap(sa, sb) != Overlap(sb, sa) {
			t.Fatalf("overlap not symmetric for %s and %s", sa, sb)
		}
		if !Overlap(sa, sa) {
			t.Fatalf("%s does not overlap itself", sa)
		}
		Covers(sa, "src/a.go")
	})
}
