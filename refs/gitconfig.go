package refs

import (
	"bytes"
	"errors"
	"strings"
)

// A hand-written reader of git's config file syntax, in place of go-git's
// plumbing/format/config: that package parses through gcfg, which links
// encoding/gob, and gob's package initialisation alone cost 0.14 ms of
// every git-rally process (GODEBUG=inittrace=1), about 3% of a claim.
// The reader follows git's own (config.c: git_parse_source, get_value,
// parse_value, get_base_var): TestParseConfigAsGit checks it against
// `git config -z --list` over quoting, escapes, continuation lines,
// subsections, case and comments; BenchmarkParseConfig against go-git's.

// noValue is the value of a key written without "=" (`[rally] sign`):
// git reads it as true, and an empty value (`sign =`) as false. A value
// read from a file never holds a NUL (git cuts it there).
const noValue = "\x00"

// configEntry is one variable of a config file: key is "section.key" or
// "section.sub.key" as git lists it (section and key lowercased, a
// quoted subsection as written), val is noValue for a bare key.
type configEntry struct{ key, val string }

var errBadConfig = errors.New("bad config line")

// parseConfig reads a config file's bytes as git does. It returns every
// variable in order, or an error where git would refuse the file.
func parseConfig(b []byte) ([]configEntry, error) {
	p := configParser{b: b}
	var out []configEntry
	var name []byte // the section's stem ("section." or "section.sub.")
	stem := 0
	comment := false
	// A UTF-8 byte order mark at the start is skipped; part of one is an error.
	if len(b) > 0 && b[0] == 0xef {
		if len(b) < 3 || b[1] != 0xbb || b[2] != 0xbf {
			return nil, errBadConfig
		}
		p.i = 3
	}
	for {
		c := p.next()
		if c == '\n' {
			if p.eof {
				return out, nil
			}
			comment = false
			continue
		}
		if comment {
			continue
		}
		if isConfigSpace(c) {
			continue
		}
		if c == '#' || c == ';' {
			comment = true
			continue
		}
		if c == '[' {
			name = name[:0]
			var ok bool
			if name, ok = p.section(name); !ok || len(name) == 0 {
				return nil, errBadConfig
			}
			name = append(name, '.')
			stem = len(name)
			continue
		}
		if !isAlpha(c) {
			return nil, errBadConfig
		}
		name = append(name[:stem], lower(c))
		var val string
		var ok bool
		if name, val, ok = p.variable(name); !ok {
			return nil, errBadConfig
		}
		out = append(out, configEntry{string(name), val})
	}
}

type configParser struct {
	b   []byte
	i   int
	eof bool
	val []byte
}

// next is git's get_next_char: "\r\n" reads as "\n", and the end of the
// file as a "\n" with eof set.
func (p *configParser) next() byte {
	if p.i >= len(p.b) {
		p.eof = true
		return '\n'
	}
	c := p.b[p.i]
	p.i++
	if c == '\r' && p.i < len(p.b) && p.b[p.i] == '\n' {
		p.i++
		return '\n'
	}
	return c
}

// section reads a section header after its "[" (get_base_var): a name of
// key characters and dots, lowercased, then "]" or a quoted subsection
// kept as written ("\x" is x).
func (p *configParser) section(name []byte) ([]byte, bool) {
	for {
		c := p.next()
		if p.eof {
			return name, false
		}
		if c == ']' {
			return name, true
		}
		if isConfigSpace(c) {
			return p.subsection(name, c)
		}
		if !isKeyChar(c) && c != '.' {
			return name, false
		}
		name = append(name, lower(c))
	}
}

// subsection is get_extended_base_var: [section "sub"].
func (p *configParser) subsection(name []byte, c byte) ([]byte, bool) {
	for {
		if c == '\n' {
			return name, false
		}
		c = p.next()
		if !isConfigSpace(c) {
			break
		}
	}
	if c != '"' {
		return name, false
	}
	name = append(name, '.')
	for {
		c := p.next()
		if c == '\n' {
			return name, false
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c = p.next(); c == '\n' {
				return name, false
			}
		}
		name = append(name, c)
	}
	return name, p.next() == ']'
}

// variable reads the rest of a variable's name and its value (get_value).
func (p *configParser) variable(name []byte) ([]byte, string, bool) {
	var c byte
	for {
		c = p.next()
		if p.eof || !isKeyChar(c) {
			break
		}
		name = append(name, lower(c))
	}
	for c == ' ' || c == '\t' {
		c = p.next()
	}
	if c == '\n' {
		return name, noValue, true
	}
	if c != '=' {
		return name, "", false
	}
	v, ok := p.value()
	return name, v, ok
}

// value is parse_value: blanks outside quotes dropped at the start and
// the end and each read as a space inside (git before 2.45; 2.45 keeps a
// tab inside a value as a tab), comments cut outside quotes, "\" before
// a newline joins the lines, and the escapes \t \b \n \\ \"; any
// other is an error.
func (p *configParser) value() (string, bool) {
	v := p.val[:0]
	quote, comment := false, false
	space := 0
	for {
		c := p.next()
		if c == '\n' {
			if quote {
				return "", false
			}
			p.val = v
			if i := bytes.IndexByte(v, 0); i >= 0 {
				v = v[:i] // git hands values on as C strings
			}
			return string(v), true
		}
		if comment {
			continue
		}
		if isConfigSpace(c) && !quote {
			if len(v) > 0 {
				space++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; space > 0; space-- {
			v = append(v, ' ')
		}
		if c == '\\' {
			switch c = p.next(); c {
			case '\n':
				continue
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'n':
				c = '\n'
			case '\\', '"':
			default:
				return "", false
			}
			v = append(v, c)
			continue
		}
		if c == '"' {
			quote = !quote
			continue
		}
		v = append(v, c)
	}
}

// isConfigSpace is git's isspace: space, tab, newline, carriage return.
func isConfigSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isKeyChar(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '-' }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// configKeyHas reports whether key is in section (lowercase), as git
// lists keys.
func configKeyHas(key, section string) bool {
	return len(key) > len(section) && key[len(section)] == '.' && strings.EqualFold(key[:len(section)], section)
}
