package ledger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// DefaultWatchInterval is how often a Watcher looks at the ledger ref
// when no file-system notification arrives (the fallback, and a safety
// net for notifications that never come, such as on some network file
// systems).
const DefaultWatchInterval = 2 * time.Second

// Watcher learns that the ledger moved: one way for `watch`, the web room
// and managed sessions alike. It is woken by file-system notification
// (inotify, kqueue, ...) of the directories that hold the ledger ref, the
// packed refs and the fetched tracking refs, and it also reads the ref
// every interval. Reading the ref is a file read in this process: a
// Watcher never starts a process, so a still ledger costs nothing but an
// idle goroutine and a stat every interval.
//
//	w := l.Watch(0)
//	defer w.Close()
//	head, _ := l.HeadString()
//	for {
//		next, err := w.Wait(ctx, head) // blocks until the head is not head
//		if err != nil { break }        // ctx ended
//		fs, _ := l.Between(head, next) // the facts that landed, (clock, id) order
//		head = next
//	}
type Watcher struct {
	l        *Ledger
	common   string
	interval time.Duration
	fsw      *fsnotify.Watcher // nil: polling only
	watched  map[string]bool
	tracking string // the tracking refs' values last seen
}

// Watch returns a Watcher of this ledger. interval <= 0 means
// DefaultWatchInterval. When file-system notification is unavailable the
// Watcher polls every interval.
func (l *Ledger) Watch(interval time.Duration) *Watcher {
	if interval <= 0 {
		interval = DefaultWatchInterval
	}
	w := &Watcher{l: l, common: filepath.Dir(filepath.Dir(l.cache.dir)), interval: interval, watched: map[string]bool{}}
	if fsw, err := fsnotify.NewWatcher(); err == nil {
		w.fsw = fsw
		w.addDirs()
	}
	w.tracking = w.trackingSig()
	return w
}

// Notified reports whether file-system notification is in use (false:
// the Watcher only polls).
func (w *Watcher) Notified() bool { return w.fsw != nil && len(w.watched) > 0 }

// Close stops the notification.
func (w *Watcher) Close() error {
	if w.fsw != nil {
		return w.fsw.Close()
	}
	return nil
}

// addDirs watches what exists of the directories a ledger move touches;
// called again after every wake, so a refs/rally made later is picked up.
func (w *Watcher) addDirs() {
	if w.fsw == nil {
		return
	}
	dirs := []string{w.common, filepath.Join(w.common, "refs"), filepath.Join(w.common, "refs", "rally"),
		filepath.Join(w.common, "refs", "rally-remotes")}
	if es, err := os.ReadDir(filepath.Join(w.common, "refs", "rally-remotes")); err == nil {
		for _, e := range es {
			if e.IsDir() {
				dirs = append(dirs, filepath.Join(w.common, "refs", "rally-remotes", e.Name()))
			}
		}
	}
	for _, d := range dirs {
		if w.watched[d] {
			continue
		}
		if err := w.fsw.Add(d); err == nil {
			w.watched[d] = true
		}
	}
}

// Wait blocks until the ledger head is not since ("" for no ledger) and
// returns the new head, or returns ctx's error when ctx ends first. A
// tracking ref that moved (a plain `git fetch`) makes it read the ledger
// once, which merges what the fetch brought when reads do that.
func (w *Watcher) Wait(ctx context.Context, since string) (string, error) {
	tick := time.NewTicker(w.interval)
	defer tick.Stop()
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w.fsw != nil {
		events, errs = w.fsw.Events, w.fsw.Errors
	}
	for check := true; ; {
		if check {
			if head, err := w.l.HeadString(); err != nil {
				return "", err
			} else if head != since {
				return head, nil
			}
			if sig := w.trackingSig(); sig != w.tracking {
				w.tracking = sig
				if _, err := w.l.Read(); err != nil {
					return "", err
				}
				continue
			}
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case ev, ok := <-events:
			if !ok {
				events = nil
			} else if ev.Op&fsnotify.Create != 0 {
				w.addDirs()
			}
			check = ok && relevant(ev.Name)
		case _, ok := <-errs:
			if !ok {
				errs = nil
			}
			check = false
		case <-tick.C:
			w.addDirs()
			check = true
		}
	}
}

// relevant reports whether a changed file can move the ledger: a ref
// under refs/rally or refs/rally-remotes, or packed-refs. Lock files
// are not (the rename that follows is).
func relevant(name string) bool {
	if strings.HasSuffix(name, ".lock") {
		return false
	}
	base := filepath.Base(name)
	if base == "packed-refs" {
		return true
	}
	s := filepath.ToSlash(name)
	return strings.Contains(s, "/refs/rally/") || strings.Contains(s, "/refs/rally-remotes/") ||
		strings.HasSuffix(s, "/refs/rally") || strings.HasSuffix(s, "/refs/rally-remotes")
}

// trackingSig is the value of every loose tracking ref of the ledger.
func (w *Watcher) trackingSig() string {
	dir := filepath.Join(w.common, "refs", "rally-remotes")
	es, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, e := range es {
		if !e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "ledger"))
		if err == nil {
			b.WriteString(e.Name() + "=" + strings.TrimSpace(string(data)) + ";")
		}
	}
	return b.String()
}

// HeadString returns the ledger's current commit id, "" when there is no
// ledger.
func (l *Ledger) HeadString() (string, error) {
	h, err := l.Head()
	if err != nil {
		return "", err
	}
	return hashString(h), nil
}

// Between returns the facts of ledger commit to that are not in ledger
// commit from ("" = none: every fact of to), in (clock, id) order. It
// reads only the trees that differ. When from holds facts to lacks (the
// ref was moved back), the facts only to holds are still returned.
func (l *Ledger) Between(from, to string) ([]*facts.Fact, error) {
	if to == "" {
		return nil, nil
	}
	toTree, err := l.commitTree(to)
	if err != nil {
		return nil, err
	}
	var fromTree refs.Hash
	if from != "" {
		if fromTree, err = l.commitTree(from); err != nil {
			return nil, err
		}
	}
	added, err := l.diff(fromTree, toTree)
	if err != nil && !errors.Is(err, errShrank) {
		return nil, err
	}
	fs := dedupe(l.parseBlobs(added))
	sort.Slice(fs, func(i, j int) bool { return fs[i].Key().Less(fs[j].Key()) })
	return fs, nil
}

func (l *Ledger) commitTree(id string) (refs.Hash, error) {
	h, err := refs.ParseHash(id)
	if err != nil {
		return refs.ZeroHash, fmt.Errorf("ledger commit %q: %w", id, err)
	}
	c, err := l.Store.ReadCommit(h)
	if err != nil {
		return refs.ZeroHash, fmt.Errorf("reading ledger commit %s: %w", id, err)
	}
	return c.Tree, nil
}
