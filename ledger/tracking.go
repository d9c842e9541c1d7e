package ledger

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// TrackingPrefix is where fetches put other clones' ledgers:
// refs/rally-remotes/<remote>/ledger (see FetchRefspec).
const TrackingPrefix = "refs/rally-remotes/"

// trackingRefs returns every refs/rally-remotes/*/ledger, loose or packed,
// and its value. A repository that never fetched a ledger costs one failed
// directory read and no packed-refs scan.
func trackingRefs(commonDir string) map[string]refs.Hash {
	out := map[string]refs.Hash{}
	dir := filepath.Join(commonDir, filepath.FromSlash(TrackingPrefix))
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		name := TrackingPrefix + e.Name() + "/ledger"
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "ledger"))
		if err != nil {
			continue
		}
		if h, err := refs.ParseHash(strings.TrimSpace(string(b))); err == nil {
			out[name] = h
		}
	}
	// git pack-refs (and gc) move refs into packed-refs; a loose ref wins.
	for name, h := range packedTracking(commonDir) {
		if _, ok := out[name]; !ok {
			out[name] = h
		}
	}
	return out
}

// packedTracking returns the tracking refs in packed-refs. A repository's
// packed-refs can be megabytes (every tag): the scan's result is kept in
// rally/packed-tracking with the file's size and modification time, and
// the file is read again only when it changed.
func packedTracking(commonDir string) map[string]refs.Hash {
	out := map[string]refs.Hash{}
	p := filepath.Join(commonDir, "packed-refs")
	fi, err := os.Stat(p)
	if err != nil || fi.Size() == 0 {
		return out
	}
	sig := fmt.Sprintf("%d %d", fi.Size(), fi.ModTime().UnixNano())
	memo := filepath.Join(commonDir, "rally", "packed-tracking")
	if b, err := os.ReadFile(memo); err == nil {
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		if len(lines) > 0 && lines[0] == sig {
			for _, l := range lines[1:] {
				if f := strings.Fields(l); len(f) == 2 {
					if h, err := refs.ParseHash(f[1]); err == nil {
						out[f[0]] = h
					}
				}
			}
			return out
		}
	}
	err = refs.ScanPackedRefs(commonDir, func(name, id string) bool {
		if !strings.HasPrefix(name, TrackingPrefix) || !strings.HasSuffix(name, "/ledger") || strings.Count(name, "/") != 3 {
			return true
		}
		if h, err := refs.ParseHash(id); err == nil {
			out[name] = h
		}
		return true
	})
	if err == nil {
		var b strings.Builder
		b.WriteString(sig + "\n")
		for name, h := range out {
			fmt.Fprintf(&b, "%s %s\n", name, h)
		}
		os.MkdirAll(filepath.Dir(memo), 0o777)
		tmp := fmt.Sprintf("%s.%d.tmp", memo, os.Getpid())
		if os.WriteFile(tmp, []byte(b.String()), 0o666) == nil && os.Rename(tmp, memo) != nil {
			os.Remove(tmp)
		}
	}
	return out
}

func trackingMemoPath(commonDir string) string { return filepath.Join(commonDir, "rally", "tracking") }

// loadTrackingMemo reads "<ref> <hash>" lines: the tracking heads already
// merged into the local ledger.
func loadTrackingMemo(commonDir string) map[string]string {
	m := map[string]string{}
	b, err := os.ReadFile(trackingMemoPath(commonDir))
	if err != nil {
		return m
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if f := strings.Fields(string(line)); len(f) == 2 {
			m[f[0]] = f[1]
		}
	}
	return m
}

func saveTrackingMemo(commonDir string, m map[string]string) {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s %s\n", n, m[n])
	}
	p := trackingMemoPath(commonDir)
	os.MkdirAll(filepath.Dir(p), 0o777)
	tmp := fmt.Sprintf("%s.%d.tmp", p, os.Getpid())
	if os.WriteFile(tmp, []byte(b.String()), 0o666) == nil && os.Rename(tmp, p) != nil {
		os.Remove(tmp)
	}
}

// MergeTracking merges into the local ledger every fetched ledger (a
// refs/rally-remotes/*/ledger that any fetch, a plain `git fetch` too,
// brought in) whose facts it has not merged yet: the same union as sync,
// locally, no network. Then a claim is checked against every fact the
// clone holds, and every new clock exceeds every fetched one. A contest
// the merge reveals gets its one claim-contested risk, as in sync.
// Failures are warnings: the local ledger is still the room.
func (l *Ledger) MergeTracking() {
	if l.mergingTracking {
		return
	}
	tr := trackingRefs(l.Store.CommonDir)
	if len(tr) == 0 {
		return
	}
	// The memo is read once per process: a command that reads and then
	// appends, or a long-lived server, pays a directory read and a stat.
	if l.trackingMemo == nil {
		l.trackingMemo = loadTrackingMemo(l.Store.CommonDir)
	}
	memo := l.trackingMemo
	changed := false
	l.mergingTracking = true
	defer func() { l.mergingTracking = false }()
	names := make([]string, 0, len(tr))
	for n := range tr {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		h := tr[name]
		if memo[name] == h.String() {
			continue
		}
		sm := loadSyncMemo(l.Store.CommonDir)
		l.noteMine(sm, h)
		mr, err := l.Merge(h, MergeOptions{From: strings.TrimSuffix(strings.TrimPrefix(name, TrackingPrefix), "/ledger") + " (fetched)"})
		if err != nil {
			l.warn("merging the fetched ledger %s: %v", facts.Sanitize(name, 200), err)
			continue
		}
		// With no claim of this clone's and no risk of its own pending,
		// ContestRisks writes nothing: not asked, the projection is not
		// computed here (a fresh clone's first read may start from a
		// signed checkpoint instead).
		if mr.Kind != MergeNone && (len(sm.Pending) > 0 || len(sm.Mine) > 0) {
			written, err := l.Append(facts.ContestRisks(sm.Pending, sm.mineTest()))
			if err != nil {
				l.warn("recording contested claims after merging %s: %v", facts.Sanitize(name, 200), err)
			}
			// Risks written here are unpushed like sync's own: the next
			// sync retracts one that another clone published first.
			for _, f := range written {
				if f.Kind == facts.KindRisk {
					sm.Pending = append(sm.Pending, f.ID)
				}
			}
		}
		if mr.Kind != MergeNone || len(sm.Mine) > 0 {
			sm.save(l.Store.CommonDir)
		}
		memo[name] = h.String()
		changed = true
	}
	if changed {
		saveTrackingMemo(l.Store.CommonDir, memo)
	}
}
