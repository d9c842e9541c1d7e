package refs

import "testing"

// FsyncOf follows git's core.fsync: by default git fsyncs neither refs
// nor loose objects, so neither does rally.
func TestFsyncOf(t *testing.T) {
	for _, c := range []struct {
		vals          map[string][]string
		refs, objects bool
	}{
		{nil, false, false},
		{map[string][]string{"core.fsync": {""}}, false, false},
		{map[string][]string{"core.fsync": {"committed"}}, true, true},
		{map[string][]string{"core.fsync": {"reference"}}, true, false},
		{map[string][]string{"core.fsync": {"committed,-loose-object"}}, true, true}, // as git 2.39 does
		{map[string][]string{"core.fsync": {"objects,-loose-object"}}, false, true},
		{map[string][]string{"core.fsync": {"all,-ref"}}, true, true},
		{map[string][]string{"core.fsync": {"loose,-pack"}}, false, true},
		{map[string][]string{"core.fsync": {"all", "none"}}, false, false},
		{map[string][]string{"core.fsync": {"none,loose-object"}}, false, true},
		{map[string][]string{"core.fsync": {"added"}}, true, true},
		{map[string][]string{"core.fsync": {" objects , reference "}}, true, true},
		{map[string][]string{"core.fsync": {"pack,no-such-thing"}}, false, false},
		{map[string][]string{"core.fsyncobjectfiles": {"true"}}, false, true},
	} {
		got := FsyncOf(&Config{vals: c.vals})
		if got.Refs != c.refs || got.Objects != c.objects {
			t.Errorf("%v: %+v, want refs %v objects %v", c.vals, got, c.refs, c.objects)
		}
	}
}
