package ledger

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/git-rally/git-rally/facts"
)

// Seal's one-encode fast path gives the id and the line the general way
// gives: ComputeID of the encoding without id, then Encode with it.
func TestSealAgreesWithComputeID(t *testing.T) {
	cases := []*facts.Fact{
		{V: 1, Kind: facts.KindClaim, Tool: "codex:a", At: "2026-01-02T03:04:05.000Z", Clock: 7, Scopes: []string{"file:src/a.go"}, Access: facts.Exclusive, LeaseS: 1800},
		{V: 1, Kind: facts.KindNote, Tool: "t", Clock: 1, Subject: "<b>&\"quoted\" \\ tab\tnl\n é 😀"},
		{V: 1, Kind: facts.KindNote, Tool: "t", Clock: 2, Subject: "control \x01 and \u2028 and invalid \xff"},
		{V: 1, Kind: facts.KindHandoff, Tool: "a:b", Session: "s1", Clock: 1 << 52, Target: "c:d", Files: []string{"x", "y"},
			Evidence: []string{"e"}, URI: "https://x/?a=1&b=2", AckBy: "2026-01-02T03:04:05.000Z", Body: "long\nbody"},
		{V: 1, Kind: "session", Tool: "rally", Clock: 3, Name: "n", Path: "/p", Branch: "rally/n", Base: "main",
			Agent: "claude", Backend: "tmux", Worktree: "/w", Command: []string{"claude", "--x"}, Status: "started"},
		{V: 1, Kind: "", Clock: 0},
	}
	for i, f := range cases {
		want := *f
		want.ID = ""
		id, err := facts.ComputeID(want.Encode())
		if err != nil {
			t.Fatal(err)
		}
		want.ID = id
		wantRaw := want.Encode()
		if line := want.Encode(); i == 0 {
			noID := bytes.Replace(line, []byte(`"id":"`+id+`",`), nil, 1)
			if _, _, ok := facts.FastDecode(noID[:len(noID)-1]); !ok {
				t.Errorf("a plain claim without id is not canonical to fastDecode: Seal takes the slow way")
			}
		}
		f.ID = "f_stale"
		f.Seal()
		if f.ID != id {
			t.Errorf("case %d: id %s, want %s", i, f.ID, id)
		}
		if !bytes.Equal(f.Raw, wantRaw) {
			t.Errorf("case %d: raw\n%s\nwant\n%s", i, f.Raw, wantRaw)
		}
	}
}

// segmentNumber reads names as the fmt.Sscanf("%d") it replaced did.
func TestSegmentNumberAsSscanf(t *testing.T) {
	for _, name := range []string{"0000", "0007", "0255", "12", "+3", "-1", "7x", "x7", "", "-", "99999999999999999999", " 5", "\t5", "\n5", "\r5", "  -0"} {
		var want int
		_, err := fmt.Sscanf(name, "%d", &want)
		got, ok := segmentNumber(name)
		if ok != (err == nil) || (ok && got != want) {
			t.Errorf("segmentNumber(%q) = %d, %v; Sscanf: %d, %v", name, got, ok, want, err)
		}
	}
}
