package facts

import (
	"strings"
	"testing"
)

func TestNonCanonical(t *testing.T) {
	for _, c := range []struct {
		scope string
		ok    bool
	}{
		{"file:src/api.ts", true}, {"dir:src/ui", true}, {"dir:.", true}, {"glob:**", true}, {"glob:src/**/*.go", true},
		{"port:8080", true}, {"service:db", true}, {"branch:feat/x", true}, {"task:T-1", true}, {WholeRoom, true},
		{"file:../../etc/passwd", false}, {"file:/etc/passwd", false}, {"dir:", false}, {"bogus:thing", false},
		{"port:99999", false}, {"file:src//api.ts", false}, {"dir:src/../src", false}, {"port:08080", false},
		{"port:0", false}, {"file:./a", false}, {"dir:src/", false}, {"src/a", false}, {"file:.git/config", false},
		{"service: db", false}, {"file:.", false}, {"glob:[", false}, {":x", false}, {"file:a\x1bb", false},
		{"file:" + strings.Repeat("x", MaxScope), false}, {"workspace:x", false},
	} {
		if got := NonCanonical(c.scope) == ""; got != c.ok {
			t.Errorf("NonCanonical(%.40q) = %q, want canonical %v", c.scope, NonCanonical(c.scope), c.ok)
		}
	}
}

// Whatever ParseScope accepts is canonical: a fact an append writes is
// never corrupt when read.
func TestParseScopeIsCanonical(t *testing.T) {
	pc := PathContext{Root: t.TempDir()}
	pc.Cwd = pc.Root
	for _, arg := range []string{"src/a.go", "./src//a.go", "src/", ".", "dir:src/../src", "glob:src/**", "glob:**",
		"port:08080", "service:  db ", "file:a/./b", "task:x", "branch:main", "dir:./"} {
		sc, err := ParseScope(arg, pc)
		if err != nil {
			continue
		}
		if why := NonCanonical(sc.String()); why != "" {
			t.Errorf("ParseScope(%q) = %s, not canonical: %s", arg, sc, why)
		}
	}
	if _, err := ParseScope("file:"+strings.Repeat("x", 10000), pc); err == nil {
		t.Error("a 10,000-character scope is accepted")
	}
}
