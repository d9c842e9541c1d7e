package web

import (
	"context"
	"sync"
)

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
