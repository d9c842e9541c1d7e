package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/ledger"
	"github.com/git-rally/git-rally/refs"
)

// floor makes the same append as a claim with the git command line alone:
// hash-object -w for the fact blob, mktree for each of the five trees on
// the path root/facts/YYYY-MM/DD/NNNN, commit-tree, and update-ref with
// the old value. Reading the trees it extends (rev-parse, ls-tree) and
// encoding the fact happen before the clock starts, so the floor is the
// cheapest possible plumbing append. It writes its own chain on
// refs/rally/floor so the ledger and rally's cache are left alone.
func (m *measurer) floor() (time.Duration, error) {
	var base refs.Hash
	old := ""
	if m.reset {
		base = m.packedHead
		if _, err := refs.Git(m.dir, nil, "update-ref", "-d", floorRef); err != nil {
			return 0, err
		}
	} else {
		var err error
		if base, old, err = m.chainBase(m.floorTip); err != nil {
			return 0, err
		}
	}
	now := time.Now().UTC()
	dirs := ledger.LayoutDirs(now)
	// levels[i]: the entries (ls-tree lines by name) of the tree at depth i.
	levels := make([]map[string]string, len(dirs)+1)
	tree := base.String() + "^{tree}"
	for i := 0; i <= len(dirs); i++ {
		es, err := lsTree(m.dir, tree)
		if err != nil {
			return 0, err
		}
		levels[i] = es
		tree = ""
		if i < len(dirs) {
			if l, ok := es[dirs[i]]; ok && strings.Contains(l, " tree ") {
				tree = strings.Fields(l)[2]
			}
		}
	}
	day := levels[len(dirs)]
	segName, segNum := "", -1
	for name := range day {
		if n, err := strconv.Atoi(name); err == nil && n > segNum {
			segName, segNum = name, n
		}
	}
	seg := map[string]string{}
	if segName != "" {
		es, err := lsTree(m.dir, strings.Fields(day[segName])[2])
		if err != nil {
			return 0, err
		}
		if len(es)+1 > 256 {
			segNum++
		} else {
			seg = es
		}
	}
	if segNum < 0 {
		segNum = 0
	}
	f, msg := m.floorFact("floor", now)

	t0 := time.Now()
	blob, err := refs.GitInput(m.dir, nil, f.Raw, "hash-object", "-w", "--stdin")
	if err != nil {
		return 0, err
	}
	seg[f.ID+".json"] = "100644 blob " + strings.TrimSpace(blob) + "\t" + f.ID + ".json"
	child, err := mktree(m.dir, seg)
	if err != nil {
		return 0, err
	}
	name := fmt.Sprintf("%04d", segNum)
	for i := len(dirs); i >= 0; i-- {
		es := levels[i]
		if es == nil {
			es = map[string]string{}
		}
		es[name] = "040000 tree " + child + "\t" + name
		if child, err = mktree(m.dir, es); err != nil {
			return 0, err
		}
		if i > 0 {
			name = dirs[i-1]
		}
	}
	commit, err := refs.Git(m.dir, nil, "commit-tree", child, "-p", base.String(), "-m", msg)
	if err != nil {
		return 0, err
	}
	commit = strings.TrimSpace(commit)
	if _, err := refs.Git(m.dir, nil, "update-ref", floorRef, commit, old); err != nil {
		return 0, err
	}
	d := time.Since(t0)
	if !m.reset {
		if m.floorTip, err = refs.ParseHash(commit); err != nil {
			return 0, err
		}
	}
	return d, nil
}

func lsTree(dir, tree string) (map[string]string, error) {
	es := map[string]string{}
	if tree == "" {
		return es, nil
	}
	out, err := refs.Git(dir, nil, "ls-tree", tree)
	if err != nil {
		return nil, err
	}
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if i := strings.IndexByte(l, '\t'); i > 0 {
			es[l[i+1:]] = l
		}
	}
	return es, nil
}

// chainBase is where a floor's next commit goes: on its own chain's tip,
// or, before its first, on the ledger's head with no old value for
// update-ref (the floor's ref does not exist yet).
func (m *measurer) chainBase(tip refs.Hash) (base refs.Hash, old string, err error) {
	if !tip.IsZero() {
		return tip, tip.String(), nil
	}
	base, err = m.head()
	return base, "", err
}

// floorFact is the claim a floor appends (its tool bench:<name>, a file of
// its own per round), sealed, and its commit message.
func (m *measurer) floorFact(name string, now time.Time) (*facts.Fact, string) {
	f := &facts.Fact{V: 1, Kind: facts.KindClaim, Tool: "bench:" + name, At: facts.FormatTime(now), Clock: int64(m.round + 1),
		Scopes: []string{fmt.Sprintf("file:src/bench/%s-%s-%s-%d.go", name, m.scenario, m.size, m.round)},
		Access: facts.Exclusive, LeaseS: 1800}
	f.Seal()
	return f, f.Summary()
}

func mktree(dir string, es map[string]string) (string, error) {
	lines := make([]string, 0, len(es))
	for _, l := range es {
		lines = append(lines, l)
	}
	sort.Strings(lines)
	out, err := refs.GitInput(dir, nil, []byte(strings.Join(lines, "\n")+"\n"), "mktree")
	return strings.TrimSpace(out), err
}

// floor4 is the simplest append git itself allows, the floor of issue 14:
// hash-object -w --stdin, mktree of a tree holding that one blob,
// commit-tree -p and update-ref <ref> <new> <old>, four processes. It
// keeps its own chain on refs/rally/floor4, so it reads nothing before
// the clock starts but the fact it encodes.
func (m *measurer) floor4() (time.Duration, error) {
	base, old, err := m.chainBase(m.floor4Tip)
	if err != nil {
		return 0, err
	}
	now := time.Now().UTC()
	f, msg := m.floorFact("floor4", now)

	t0 := time.Now()
	blob, err := refs.GitInput(m.dir, nil, f.Raw, "hash-object", "-w", "--stdin")
	if err != nil {
		return 0, err
	}
	tree, err := refs.GitInput(m.dir, nil, []byte("100644 blob "+strings.TrimSpace(blob)+"\t"+f.ID+".json\n"), "mktree")
	if err != nil {
		return 0, err
	}
	commit, err := refs.Git(m.dir, nil, "commit-tree", strings.TrimSpace(tree), "-p", base.String(), "-m", msg)
	if err != nil {
		return 0, err
	}
	commit = strings.TrimSpace(commit)
	if _, err := refs.Git(m.dir, nil, "update-ref", floor4Ref, commit, old); err != nil {
		return 0, err
	}
	d := time.Since(t0)
	m.floor4Tip, err = refs.ParseHash(commit)
	return d, err
}
