package cli

import (
	"testing"
	"time"
)

func TestLocalTime(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	if got, want := localTime("2026-03-01T10:30:00.000Z", cet), "2026-03-01 11:30 CET"; got != want {
		t.Errorf("localTime = %q, want %q", got, want)
	}
	if got := localTime("soon", cet); got != "soon" {
		t.Errorf("localTime of a bad time = %q, want it unchanged", got)
	}
}
