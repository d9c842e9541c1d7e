package sshsig

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// Allowed is one line of an allowed-signers file: who (principal
// patterns) may sign with which key, in which namespaces and when.
type Allowed struct {
	Principals string // comma-separated patterns: "alice@example.com", "codex:*", "!codex:ci"
	Key        ssh.PublicKey
	Namespaces []string // nil: any namespace
	After      time.Time
	Before     time.Time
	// CertAuthority lines trust certificates signed by Key; rally does not
	// verify certificates, so such a line never matches.
	CertAuthority bool
	Line          int
}

// AllowedSigners is a parsed allowed-signers file.
type AllowedSigners []Allowed

// ParseAllowedSigners reads git's allowed-signers format (ssh-keygen(1),
// ALLOWED SIGNERS): "principals [options] keytype base64-key [comment]"
// per line, # comments. Options: namespaces="a,b", valid-after=,
// valid-before= (YYYYMMDD[HHMM[SS]], Z for UTC, else local time) and
// cert-authority. Lines it cannot read are skipped and reported.
func ParseAllowedSigners(data []byte) (AllowedSigners, []error) {
	var out AllowedSigners
	var errs []error
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		a, err := parseLine(line)
		if err != nil {
			errs = append(errs, fmt.Errorf("allowed signers line %d: %w", n, err))
			continue
		}
		a.Line = n
		out = append(out, a)
	}
	return out, errs
}

func parseLine(line string) (Allowed, error) {
	var a Allowed
	var rest string
	if line[0] == '"' {
		end := strings.IndexByte(line[1:], '"')
		if end < 0 {
			return a, fmt.Errorf("unterminated quoted principals")
		}
		a.Principals, rest = line[1:1+end], line[2+end:]
	} else {
		i := strings.IndexAny(line, " \t")
		if i < 0 {
			return a, fmt.Errorf("no key")
		}
		a.Principals, rest = line[:i], line[i:]
	}
	if a.Principals == "" {
		return a, fmt.Errorf("empty principals")
	}
	key, _, opts, _, err := ssh.ParseAuthorizedKey([]byte(strings.TrimSpace(rest)))
	if err != nil {
		return a, err
	}
	a.Key = key
	for _, o := range opts {
		name, val, hasVal := strings.Cut(o, "=")
		val = strings.Trim(val, `"`)
		switch strings.ToLower(name) {
		case "cert-authority":
			a.CertAuthority = true
		case "namespaces":
			if !hasVal {
				return a, fmt.Errorf("namespaces without a value")
			}
			a.Namespaces = strings.Split(val, ",")
		case "valid-after", "valid-before":
			t, err := parseTime(val)
			if err != nil {
				return a, fmt.Errorf("%s: %w", name, err)
			}
			if strings.ToLower(name) == "valid-after" {
				a.After = t
			} else {
				a.Before = t
			}
		default:
			return a, fmt.Errorf("unknown option %q", name)
		}
	}
	return a, nil
}

func parseTime(s string) (time.Time, error) {
	loc := time.Local
	if strings.HasSuffix(s, "Z") || strings.HasSuffix(s, "z") {
		loc, s = time.UTC, s[:len(s)-1]
	}
	for _, layout := range []string{"20060102150405", "200601021504", "20060102"} {
		if len(s) == len(layout) {
			return time.ParseInLocation(layout, s, loc)
		}
	}
	return time.Time{}, fmt.Errorf("bad time %q: want YYYYMMDD[HHMM[SS]][Z]", s)
}

// Allows reports whether key may sign for principal in namespace at time
// at (git checks a commit at its committer time).
func (as AllowedSigners) Allows(principal string, key ssh.PublicKey, namespace string, at time.Time) bool {
	for _, a := range as {
		if a.covers(key, namespace, at) && MatchList(principal, a.Principals) {
			return true
		}
	}
	return false
}

// Lists reports whether key may sign in namespace at time at for anyone.
func (as AllowedSigners) Lists(key ssh.PublicKey, namespace string, at time.Time) bool {
	for _, a := range as {
		if a.covers(key, namespace, at) {
			return true
		}
	}
	return false
}

func (a Allowed) covers(key ssh.PublicKey, namespace string, at time.Time) bool {
	if a.CertAuthority || !bytes.Equal(a.Key.Marshal(), key.Marshal()) {
		return false
	}
	if a.Namespaces != nil {
		ok := false
		for _, n := range a.Namespaces {
			ok = ok || MatchPattern(namespace, strings.TrimSpace(n))
		}
		if !ok {
			return false
		}
	}
	if !a.After.IsZero() && at.Before(a.After) {
		return false
	}
	if !a.Before.IsZero() && !at.Before(a.Before) {
		return false
	}
	return true
}

// MatchList matches s against a comma-separated list of patterns the way
// OpenSSH's match_pattern_list does: a matching negated pattern ("!x")
// rejects, else any matching pattern accepts.
func MatchList(s, list string) bool {
	ok := false
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		if neg := strings.HasPrefix(p, "!"); neg {
			if MatchPattern(s, p[1:]) {
				return false
			}
			continue
		}
		ok = ok || MatchPattern(s, p)
	}
	return ok
}

// MatchPattern matches s against a pattern where * matches any run of
// characters and ? any one character.
func MatchPattern(s, p string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			if p == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if MatchPattern(s[i:], p) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			s, p = s[1:], p[1:]
		default:
			if s == "" || s[0] != p[0] {
				return false
			}
			s, p = s[1:], p[1:]
		}
	}
	return s == ""
}
