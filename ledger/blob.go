package ledger

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/git-rally/git-rally/facts"
	"github.com/git-rally/git-rally/refs"
)

func (l *Ledger) parseBlobs(bs []blobRef) []*facts.Fact {
	parsed := make([][]*facts.Fact, len(bs))
	warns := make([][]string, len(bs))
	collect := func() []*facts.Fact {
		n := 0
		for i := range parsed {
			n += len(parsed[i])
		}
		out := make([]*facts.Fact, 0, n)
		for i := range bs {
			out = append(out, parsed[i]...)
			l.Warnings = append(l.Warnings, warns[i]...)
		}
		return out
	}
	if len(bs) >= refs.BatchThreshold {
		// One git cat-file streams the blobs; decoding and checking
		// them, CPU work, runs on the other cores meanwhile.
		type job struct {
			i    int
			data []byte
		}
		jobs := make(chan job, 256)
		var wg sync.WaitGroup
		for w := 0; w < max(1, runtime.GOMAXPROCS(0)); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range jobs {
					parsed[j.i], warns[j.i] = parseBlob(bs[j.i].path, j.data)
				}
			}()
		}
		hs := make([]refs.Hash, len(bs))
		for i, b := range bs {
			hs[i] = b.hash
		}
		err := l.Store.StreamBlobs(hs, func(i int, data []byte) { jobs <- job{i, data} })
		close(jobs)
		wg.Wait()
		if err == nil {
			return collect()
		}
		// On error, fall back to one by one.
	}
	for i, b := range bs {
		data, err := l.Store.ReadBlob(b.hash)
		if err != nil {
			parsed[i], warns[i] = nil, []string{fmt.Sprintf("%s: %v", b.path, err)}
			continue
		}
		parsed[i], warns[i] = parseBlob(b.path, data)
	}
	return collect()
}

// cutLine splits the first line off b: the line without its newline, the
// rest, and whether a newline ended the line.
func cutLine(b []byte) (line, rest []byte, nl bool) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i+1:], true
	}
	return b, nil, false
}

// parseBlob reads the facts of one blob, skipping (with a warning each)
// lines that do not parse and facts that are corrupt: those are kept in
// the ledger and synced unchanged, never believed: they shadow, replace or
// close nothing.
func parseBlob(path string, data []byte) ([]*facts.Fact, []string) {
	return parseBlobRaw(path, data, false)
}

// parseBlobRaw is parseBlob; with alias, a fact's Raw is its line in data
// when a newline ends it there (the caller owns data and keeps it as is).
func parseBlobRaw(path string, data []byte, alias bool) ([]*facts.Fact, []string) {
	var sc blobScanner
	name := facts.BaseName(path)
	dir := strings.TrimSuffix(path[:len(path)-len(name)], "/")
	var out []*facts.Fact
	warns := sc.each(dir, name, data, true, alias, func(f *facts.Fact, raw []byte) {
		f.Raw = raw
		out = append(out, f)
	})
	return out, warns
}

// A blobScanner reads the lines of fact blobs: the one parser of the
// ledger's text, for reads (parseBlob) and rebuilds (scan). It keeps what
// it reuses from one line and one blob to the next.
type blobScanner struct {
	f    facts.Fact
	ms   facts.FastMembers
	buf  []byte
	name []byte
}

// scan returns the good facts of the blob b, and a warning for each line
// skipped, exactly as parseBlobRaw(its path, data, true) does.
func (sc *blobScanner) scan(fl *factList, i int, data []byte) ([]scanned, []string) {
	var out []scanned
	b := fl.blob(i)
	warns := sc.each(*b.dir, fl.name(b, &sc.name), data, false, true, func(f *facts.Fact, raw []byte) {
		s := scanned{clock: f.Clock, raw: raw}
		s.id, s.idOK = parseFactID(f.ID)
		if f.Kind == facts.KindRetract && f.Ref != "" {
			s.retract = &retractRef{id: strings.Clone(f.ID), ref: strings.Clone(f.Ref), tool: strings.Clone(f.Tool)}
		}
		out = append(out, s)
	})
	return out, warns
}

// scanSegment is scan for a segment unit (factList.addSegment) whose
// segment blob is data: its lines scanned as the blobs they stand for
// (each its own blob, named by the line), when ck rebuilds the segment's
// tree id from them; ok is false when it does not (the blob is not
// believed: the caller reads the segment's blobs).
func (sc *blobScanner) scanSegment(fl *factList, i int, data []byte, ck *segmentChecker) (out []scanned, warns []string, ok bool) {
	b := fl.blob(i)
	seg, _ := fl.segment(b)
	if _, over := refs.Oversize(data); over {
		return nil, nil, false
	}
	offs, ok := ck.check(data, seg)
	if !ok {
		return nil, nil, false
	}
	out = make([]scanned, 0, len(offs))
	for k, at := range offs {
		end := len(data)
		if k+1 < len(offs) {
			end = offs[k+1]
		}
		line := data[at:end:end]
		id, _ := lineID(line)
		sc.name = append(append(sc.name[:0], id...), ".json"...)
		name := unsafe.String(unsafe.SliceData(sc.name), len(sc.name))
		w := sc.each(*b.dir, name, line, false, true, func(f *facts.Fact, raw []byte) {
			s := scanned{clock: f.Clock, raw: raw}
			s.id, s.idOK = parseFactID(f.ID)
			if f.Kind == facts.KindRetract && f.Ref != "" {
				s.retract = &retractRef{id: strings.Clone(f.ID), ref: strings.Clone(f.Ref), tool: strings.Clone(f.Tool)}
			}
			out = append(out, s)
		})
		warns = append(warns, w...)
	}
	return out, warns, true
}

// each calls emit with each good fact of the blob name in dir and its
// line ending in a newline (raw), and returns a warning for each line it
// skips. With own, each fact is emit's, its strings copied from the line;
// without, the scanner reuses one fact whose strings alias data, valid
// while emit runs. raw is data's own bytes when a newline ends the line
// there and alias is set, a copy otherwise.
func (sc *blobScanner) each(dir, name string, data []byte, own, alias bool, emit func(f *facts.Fact, raw []byte)) []string {
	path := func() string { return joinPath(dir, name) }
	if _, ok := refs.Oversize(data); ok {
		w, _ := oversizeWarning(path(), data)
		return []string{w}
	}
	var warns []string
	for rest := data; len(rest) > 0; {
		var line []byte
		var nl bool
		line, rest, nl = cutLine(rest)
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var c *facts.Corrupt
		var raw []byte
		f, str := &sc.f, ""
		if own {
			// One string holds the line; the fields written as they are
			// are slices of it (one allocation a fact, not one a field).
			f, str = &facts.Fact{}, string(line)
		} else {
			sc.f, str = facts.Fact{}, unsafe.String(unsafe.SliceData(line), len(line))
		}
		sc.ms = facts.FastMembers{}
		if facts.FastDecodeInto(f, line, str, &sc.ms) && f.ID != "" && f.Kind != "" {
			// A canonical line: decoded and hashed without encoding/json.
			if alias && nl {
				raw = line[: len(line)+1 : len(line)+1]
			} else {
				raw = append(append(make([]byte, 0, len(line)+1), line...), '\n')
			}
			var id [18]byte
			sc.buf = facts.FastIDInto(&id, sc.buf, line, &sc.ms)
			got := f.ID
			if string(id[:]) != got {
				got = string(id[:])
			}
			c = facts.CheckStoredID(f, got, nil, name)
		} else {
			var err error
			if f, err = facts.Parse(line); err != nil {
				warns = append(warns, fmt.Sprintf("skipping unreadable line in %s: %v", facts.Sanitize(path(), 200), err))
				continue
			}
			raw = f.Raw
			c = facts.CheckStored(f, line, name)
		}
		if c != nil {
			warns = append(warns, fmt.Sprintf("skipping corrupt fact in %s: %s: %s", facts.Sanitize(path(), 200), c.Code, c.Message))
			continue
		}
		emit(f, raw)
	}
	return warns
}

// decodeShared decodes a stored line (newline included) of this version's
// encoding into f, its strings slices of line and its Raw line; it
// reports false for any other line. f and ms are the caller's to reuse;
// line must not be written again while f is used.
func decodeShared(f *facts.Fact, ms *facts.FastMembers, line []byte) bool {
	*f, *ms = facts.Fact{}, facts.FastMembers{}
	n := len(line)
	if n <= 2 || line[n-1] != '\n' {
		return false
	}
	body := line[:n-1]
	if facts.FastDecodeInto(f, body, unsafe.String(unsafe.SliceData(body), len(body)), ms) && f.ID != "" && f.Kind != "" {
		f.Raw = line[:n:n]
		return true
	}
	return false
}

// parseOwned is facts.Parse for a stored line (newline included) of a
// rebuild's second pass: a canonical line is copied once, and that copy
// is both the fact's Raw and the bytes its strings are slices of
// (facts.Parse copies it twice: 161 MB of a cold read of 1M facts).
func parseOwned(line []byte) (*facts.Fact, error) {
	if n := len(line); n > 2 && line[n-1] == '\n' {
		buf := make([]byte, n)
		copy(buf, line)
		body := buf[:n-1]
		f := &facts.Fact{}
		var ms facts.FastMembers
		if facts.FastDecodeInto(f, body, unsafe.String(unsafe.SliceData(body), len(body)), &ms) && f.ID != "" && f.Kind != "" {
			f.Raw = buf
			return f, nil
		}
	}
	return facts.Parse(line)
}
