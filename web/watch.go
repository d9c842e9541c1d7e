package web

import (
	"context"
	"sync"
	"time"
)

// Watcher tells when the ledger moves: Changes sends the new head each
// time it changes, until ctx ends. serve uses the ledger's own watcher
// (facts.Watcher, through WaitWatcher); PollWatcher is the plain fallback.
type Watcher interface {
	Changes(ctx context.Context) <-chan string
}

// PollWatcher reads the head every Interval: one small ref read, for the
// whole server, however many pages are open.
type PollWatcher struct {
	Head     func() (string, error)
	Interval time.Duration
}

func (p *PollWatcher) Changes(ctx context.Context) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		last, _ := p.Head()
		t := time.NewTicker(p.Interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			h, err := p.Head()
			if err != nil || h == last {
				continue
			}
			last = h
			select {
			case ch <- h:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

// HeadWaiter blocks until the ledger head is not since and returns the
// new head: facts.Watcher, the ledger watcher `watch` uses.
type HeadWaiter interface {
	Wait(ctx context.Context, since string) (string, error)
}

// WaitWatcher turns a HeadWaiter into a Watcher.
type WaitWatcher struct {
	W    HeadWaiter
	Head func() (string, error)
}

func (w *WaitWatcher) Changes(ctx context.Context) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		head, _ := w.Head()
		for {
			next, err := w.W.Wait(ctx, head)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				// A failed read (a ref being rewritten): look again soon.
				select {
				case <-ctx.Done():
					return
				case <-time.After(200 * time.Millisecond):
				}
				continue
			}
			head = next
			select {
			case ch <- head:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

// hub fans one watcher out to every open event stream; a slow page only
// ever misses intermediate heads, never the latest.
type hub struct {
	w    Watcher
	mu   sync.Mutex
	subs map[chan string]bool
}

func newHub(w Watcher) *hub { return &hub{w: w, subs: map[chan string]bool{}} }

func (h *hub) run(ctx context.Context) {
	for head := range h.w.Changes(ctx) {
		h.mu.Lock()
		for ch := range h.subs {
			select {
			case <-ch: // drop the stale head
			default:
			}
			ch <- head
		}
		h.mu.Unlock()
	}
	h.mu.Lock()
	for ch := range h.subs {
		close(ch)
		delete(h.subs, ch)
	}
	h.mu.Unlock()
}

func (h *hub) subscribe() (<-chan string, func()) {
	ch := make(chan string, 1)
	h.mu.Lock()
	h.subs[ch] = true
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		if h.subs[ch] {
			delete(h.subs, ch)
			close(ch)
		}
		h.mu.Unlock()
	}
}
