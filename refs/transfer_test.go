package refs

import "testing"

func TestParsePush(t *testing.T) {
	const dst = "refs/rally/ledger"
	for _, tc := range []struct {
		out  string
		want PushStatus
	}{
		{"To ../o.git\n*\trefs/rally/ledger:refs/rally/ledger\t[new reference]\nDone\n", Pushed},
		{"To ../o.git\n \trefs/rally/ledger:refs/rally/ledger\tabc..def\nDone\n", Pushed},
		{"To ../o.git\n=\trefs/rally/ledger:refs/rally/ledger\t[up to date]\nDone\n", UpToDate},
		{"To ../o.git\n!\trefs/rally/ledger:refs/rally/ledger\t[rejected] (fetch first)\nDone\n", Rejected},
		{"To ../o.git\n!\trefs/rally/ledger:refs/rally/ledger\t[rejected] (non-fast-forward)\nDone\n", Rejected},
		{"To ../o.git\n!\trefs/rally/ledger:refs/rally/ledger\t[remote rejected] (failed to update ref)\nDone\n", Rejected},
		{"To ../o.git\n!\trefs/rally/ledger:refs/rally/ledger\t[remote rejected] (pre-receive hook declined)\nDone\n", RemoteRejected},
		{"To ../o.git\n!\trefs/rally/ledger:refs/rally/ledger\t[remote rejected] (funny refname)\nDone\n", RemoteRejected},
	} {
		r, ok := parsePush(tc.out, dst)
		if !ok || r.Status != tc.want {
			t.Errorf("%q: %v %v, want %v", tc.out, r, ok, tc.want)
		}
	}
	if _, ok := parsePush("To ../o.git\n \trefs/heads/main:refs/heads/main\tabc..def\nDone\n", dst); ok {
		t.Error("another ref's line was taken for the ledger's")
	}
	if _, ok := parsePush("fatal: unable to access\n", dst); ok {
		t.Error("no status line, but a status")
	}
}

func TestPushDetail(t *testing.T) {
	stderr := "remote: error: cannot lock ref 'refs/rally/ledger': Unable to create '/r.git/./refs/rally/ledger.lock': File exists.        \n" +
		"remote: \nremote: Another git process seems to be running in this repository, e.g.        \n" +
		"error: failed to push some refs to '../r.git'\n"
	want := "cannot lock ref 'refs/rally/ledger': Unable to create '/r.git/./refs/rally/ledger.lock': File exists."
	if got := pushDetail(stderr); got != want {
		t.Errorf("detail %q, want %q", got, want)
	}
	if got := pushDetail("To ../o.git\nerror: failed to push some refs to '../o.git'\n"); got != "" {
		t.Errorf("detail %q of a plain rejection", got)
	}
}
