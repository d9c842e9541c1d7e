package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

// ErrNoFact is returned when no fact has the given id.
var ErrNoFact = errors.New("no such fact")

// All returns every fact of the current head in (clock, id) order.
func (l *Ledger) All() ([]*facts.Fact, error) {
	st, err := l.readMirror()
	if err != nil {
		return nil, err
	}
	if st.Head == "" {
		return nil, nil
	}
	if fs, ok := l.cache.mirror(st); ok {
		facts.SortFacts(fs)
		return fs, nil
	}
	h, _ := refs.ParseHash(st.Tree)
	fs, err := l.readAll(h)
	if err != nil {
		return nil, err
	}
	fs = dedupe(fs)
	facts.SortFacts(fs)
	return fs, nil
}

// Find resolves an id or a unique prefix of at least 6 characters (with or
// without the f_).
func (l *Ledger) Find(prefix string) (*facts.Fact, error) {
	p := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(prefix)), "f_")
	if len(p) < 6 || strings.Trim(p, "0123456789abcdef") != "" {
		return nil, &facts.UsageError{Msg: fmt.Sprintf("bad fact id %q: want f_ and at least 6 hex digits", prefix),
			Hint: "git rally log --json"}
	}
	found, err := l.findPrefix("f_" + p)
	if err != nil {
		return nil, err
	}
	switch len(found) {
	case 0:
		return nil, &NotFoundError{ID: prefix}
	case 1:
		return found[0], nil
	}
	return nil, &facts.UsageError{Msg: fmt.Sprintf("fact id %q is ambiguous: %d facts match", prefix, len(found)),
		Hint: "give more characters of the id"}
}

// NotFoundError reports an unknown fact id (exit 2: it is the caller's input).
type NotFoundError struct{ ID string }

// findPrefix returns the facts whose id starts with prefix. It scans the
// mirror's raw lines and decodes only the candidates, so resolving an id
// costs a byte scan, not a decode of the whole ledger.
func (l *Ledger) findPrefix(prefix string) ([]*facts.Fact, error) {
	st, err := l.readMirror()
	if err != nil {
		return nil, err
	}
	if found, ok := l.cache.indexPrefix(st, prefix); ok {
		return found, nil
	}
	var found []*facts.Fact
	if data, ok := l.cache.mirrorBytes(st); ok {
		needle := []byte(prefix) // may also hit a ref; the decode below checks the id
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break
			}
			line := data[:i]
			data = data[i+1:]
			if !bytes.Contains(line, needle) {
				continue
			}
			linesDecoded.Add(1)
			if f, err := facts.Parse(line); err == nil && strings.HasPrefix(f.ID, prefix) {
				found = append(found, f)
			}
		}
		return found, nil
	}
	all, err := l.All()
	if err != nil {
		return nil, err
	}
	for _, f := range all {
		if strings.HasPrefix(f.ID, prefix) {
			found = append(found, f)
		}
	}
	return found, nil
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("no fact with id %q", e.ID) }
