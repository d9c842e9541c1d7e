package ledger

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/git-rally/git-rally/facts"
)

// The watcher polls once an hour here, so only a file-system notification
// can wake it within the test's deadline.
func TestWatcherWakesOnAppend(t *testing.T) {
	r := newOneRepo(t)
	before := r.append(t, "one").String()
	w := r.l.Watch(time.Hour)
	defer w.Close()
	if !w.Notified() {
		t.Skip("no file-system notification on this system")
	}
	other := r.ledger(t) // another process's view
	go func() {
		time.Sleep(50 * time.Millisecond)
		other.Append(facts.Simple(&facts.Fact{Kind: facts.KindNote, Tool: "t:y", Subject: "two"}))
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	head, err := w.Wait(ctx, before)
	if err != nil {
		t.Fatalf("Wait: %v (no wake-up within 5s)", err)
	}
	fs, err := r.l.Between(before, head)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].Subject != "two" {
		t.Fatalf("Between = %v, want the one new fact", fs)
	}
}

func TestWatcherFirstAppendOfAnEmptyRoom(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	_, cs := network(t, 1, &now)
	l := cs[0].ledger(t)
	start, err := l.HeadString()
	if err != nil {
		t.Fatal(err)
	}
	w := l.Watch(time.Hour)
	defer w.Close()
	if !w.Notified() {
		t.Skip("no file-system notification on this system")
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		cs[0].ledger(t).Append(facts.Simple(&facts.Fact{Kind: facts.KindNote, Tool: "t:y", Subject: "first"}))
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	head, err := w.Wait(ctx, start)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	fs, err := l.Between(start, head)
	if err != nil || len(fs) == 0 || fs[len(fs)-1].Subject != "first" {
		t.Fatalf("Between = %v, %v", fs, err)
	}
}

func TestWatcherPollsAndEndsWithContext(t *testing.T) {
	r := newOneRepo(t)
	head := r.append(t, "one").String()
	w := r.l.Watch(10 * time.Millisecond)
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := w.Wait(ctx, head); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait on a still ledger = %v, want the deadline", err)
	}
	// Polling alone (no notification) finds a move.
	w.fsw.Close()
	w.fsw = nil
	next := r.append(t, "two").String()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	if got, err := w.Wait(ctx2, head); err != nil || got != next {
		t.Fatalf("Wait = %q, %v; want %q", got, err, next)
	}
	fs, err := r.l.Between("", next)
	if err != nil || len(fs) != 2 || fs[0].Subject != "one" {
		t.Fatalf("Between from the start = %v, %v", fs, err)
	}
}
