package cli

import (
	"testing"
	"time"

	"github.com/git-rally/git-rally/cmd/git-rally/cli/cmdutil"
)

func TestLocalTime(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	if got, want := cmdutil.LocalTime("2026-03-01T10:30:00.000Z", cet), "2026-03-01 11:30 CET"; got != want {
		t.Errorf("localTime = %q, want %q", got, want)
	}
	if got := cmdutil.LocalTime("soon", cet); got != "soon" {
		t.Errorf("localTime of a bad time = %q, want it unchanged", got)
	}
}
