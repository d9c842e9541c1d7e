package cli

import (
	"bytes"
	"testing"
	"time"
)

// git's progress reaches the terminal only once a transfer has run for a
// while, and the line it leaves open is closed.
func TestDelayedProgress(t *testing.T) {
	var out bytes.Buffer
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	d := &delayedWriter{w: &out, now: func() time.Time { return now }, start: now, delay: time.Second}
	d.Write([]byte("Counting objects: 10%\r"))
	d.finish()
	if out.Len() != 0 {
		t.Fatalf("a quick transfer printed %q", out.String())
	}
	now = now.Add(1500 * time.Millisecond)
	d.Write([]byte("Writing objects: 50%\r"))
	d.finish()
	if got := out.String(); got != "Writing objects: 50%\r\n" {
		t.Fatalf("progress %q", got)
	}
	out.Reset()
	d.Write([]byte("Writing objects: 100%, done.\n"))
	d.finish()
	if got := out.String(); got != "Writing objects: 100%, done.\n" {
		t.Fatalf("progress %q", got)
	}
}
