package refs

import "testing"

func TestParseHash(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef01234567"
	for _, s := range []string{id, " " + id + "\n", "0123456789ABCDEF0123456789abcdef01234567"} {
		h, err := ParseHash(s)
		if err != nil || h.String() != id {
			t.Errorf("ParseHash(%q) = %s, %v; want %s", s, h, err, id)
		}
	}
	for _, s := range []string{"", id[:39], id + "0", "g123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef0123456-"} {
		if h, err := ParseHash(s); err == nil {
			t.Errorf("ParseHash(%q) = %s, want an error", s, h)
		}
	}
}
