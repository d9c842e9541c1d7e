package worktree

import "testing"

func TestCheckName(t *testing.T) {
	for _, tc := range []struct {
		name, sanitized string
		ok              bool
	}{
		{"api", "api", true},
		{"impl-1.v2_x", "impl-1.v2_x", true},
		{"A9", "A9", true},
		{"my feature", "my-feature", false},
		{"../escape", "escape", false},
		{".hidden", "hidden", false},
		{"-flag", "flag", false},
		{"a..b", "a.b", false},
		{"x.lock", "x", false},
		{"end.", "end", false},
		{"a/b", "a-b", false},
		{"ünï", "n-", false},
		{"", "", false},
		{"...", "", false},
	} {
		if got := SanitizeName(tc.name); got != tc.sanitized {
			t.Errorf("SanitizeName(%q) = %q, want %q", tc.name, got, tc.sanitized)
		}
		if err := CheckName(tc.name); (err == nil) != tc.ok {
			t.Errorf("CheckName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	long := make([]byte, MaxName+1)
	for i := range long {
		long[i] = 'a'
	}
	if CheckName(string(long)) == nil {
		t.Errorf("a name of %d bytes was accepted", len(long))
	}
}
