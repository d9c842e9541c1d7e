package hooks

import "strings"

// maxShellInput bounds what the tokenizer reads of one command.
const maxShellInput = 1 << 20

// tokenize splits a POSIX shell command line into words, operators and
// redirections, removing quotes as the shell would. It never expands
// anything: a word the shell would still expand is marked not literal.
// Heredoc bodies are attached to their << redirection.
func tokenize(s string) []shellWord {
	if len(s) > maxShellInput {
		s = s[:maxShellInput]
	}
	t := &tokenizer{s: s}
	t.run()
	return t.out
}

type tokenizer struct {
	s       string
	i       int
	out     []shellWord
	pending []pendingDoc // heredocs whose bodies start after the next newline
}

type pendingDoc struct {
	delim     string
	stripTabs bool
	body      *string
}

func (t *tokenizer) peek(k int) byte {
	if t.i+k < len(t.s) {
		return t.s[t.i+k]
	}
	return 0
}

func (t *tokenizer) run() {
	for t.i < len(t.s) {
		c := t.s[t.i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			t.i++
		case c == '\\' && t.peek(1) == '\n':
			t.i += 2
		case c == '\n':
			t.i++
			t.op("\n")
			t.readHeredocs()
		case c == '#':
			for t.i < len(t.s) && t.s[t.i] != '\n' {
				t.i++
			}
		case c == ';' || c == '(' || c == ')':
			t.i++
			t.op(string(c))
		case c == '&' && t.peek(1) == '>':
			t.i++
			t.redirect("&")
		case c == '&' || c == '|':
			t.i++
			if t.peek(0) == c || c == '|' && t.peek(0) == '&' {
				t.i++
			}
			t.op(string(c))
		case c == '<' || c == '>':
			t.redirect("")
		default:
			w := t.word()
			if w.literal && (w.text == "{" || w.text == "}" || w.text == "!") {
				t.op(w.text) // grouping and negation: the next word starts a command
				continue
			}
			if w.literal && isDigits(w.text) && (t.peek(0) == '<' || t.peek(0) == '>') {
				t.redirect("") // 2>file: the digits name a descriptor
				continue
			}
			t.out = append(t.out, w)
		}
	}
	t.readHeredocs()
}

func (t *tokenizer) op(s string) { t.out = append(t.out, shellWord{text: s, op: true}) }

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// redirect reads a redirection operator at t.i (after a leading & of &>)
// and its target word.
func (t *tokenizer) redirect(prefix string) {
	c := t.s[t.i]
	t.i++
	op := string(c)
	switch n := t.peek(0); {
	case c == '>' && (n == '>' || n == '|' || n == '&'), c == '<' && (n == '&' || n == '>'):
		op += string(n)
		t.i++
	case c == '<' && n == '<':
		op, t.i = "<<", t.i+1
		if m := t.peek(0); m == '<' || m == '-' {
			op += string(m)
			t.i++
		}
	}
	op = prefix + op
	for t.i < len(t.s) && (t.s[t.i] == ' ' || t.s[t.i] == '\t') {
		t.i++
	}
	if t.i >= len(t.s) || strings.IndexByte("\n;&|()<>", t.s[t.i]) >= 0 {
		return // a syntax error for the shell; nothing to read
	}
	w := t.word()
	switch op {
	case "<<", "<<-":
		body := new(string)
		delim := w.text
		t.pending = append(t.pending, pendingDoc{delim: delim, stripTabs: op == "<<-", body: body})
		t.out = append(t.out, shellWord{text: delim, redir: op, heredoc: body})
		return
	case ">&", "<&":
		if isDigits(w.text) || w.text == "-" {
			op += "&" // a descriptor, not a file
		} else if op == ">&" {
			op = "&>"
		}
	}
	w.redir = op
	t.out = append(t.out, w)
}

// readHeredocs reads the bodies of pending heredocs, starting at t.i (the
// start of a line).
func (t *tokenizer) readHeredocs() {
	for _, d := range t.pending {
		var b strings.Builder
		for t.i < len(t.s) {
			end := strings.IndexByte(t.s[t.i:], '\n')
			line := t.s[t.i:]
			next := len(t.s)
			if end >= 0 {
				line = t.s[t.i : t.i+end]
				next = t.i + end + 1
			}
			t.i = next
			cmp := strings.TrimSuffix(line, "\r")
			if d.stripTabs {
				cmp = strings.TrimLeft(cmp, "\t")
				line = strings.TrimLeft(line, "\t")
			}
			if cmp == d.delim {
				break
			}
			b.WriteString(line)
			b.WriteByte('\n')
		}
		*d.body = b.String()
	}
	t.pending = nil
}

// word reads one word at t.i, removing quotes.
func (t *tokenizer) word() shellWord {
	var b strings.Builder
	w := shellWord{literal: true}
	first := true
	for t.i < len(t.s) {
		c := t.s[t.i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '&' || c == '|' || c == '<' || c == '>' || c == '(' || c == ')':
			w.text = b.String()
			return w
		case c == '\\':
			if t.i+1 < len(t.s) {
				if t.s[t.i+1] != '\n' {
					b.WriteByte(t.s[t.i+1])
				}
				t.i += 2
			} else {
				t.i++
			}
		case c == '\'':
			end := strings.IndexByte(t.s[t.i+1:], '\'')
			if end < 0 {
				b.WriteString(t.s[t.i+1:])
				t.i = len(t.s)
				w.literal = false // unterminated: the shell would refuse it
				continue
			}
			b.WriteString(t.s[t.i+1 : t.i+1+end])
			t.i += end + 2
		case c == '"':
			t.i++
			closed := false
			for t.i < len(t.s) {
				d := t.s[t.i]
				if d == '"' {
					t.i++
					closed = true
					break
				}
				if d == '\\' && t.i+1 < len(t.s) && strings.IndexByte("$`\"\\\n", t.s[t.i+1]) >= 0 {
					if t.s[t.i+1] != '\n' {
						b.WriteByte(t.s[t.i+1])
					}
					t.i += 2
					continue
				}
				if d == '$' || d == '`' {
					w.literal = false
					if d == '$' && t.peek(1) == '(' {
						t.i++
						t.skipParens(&b)
						continue
					}
				}
				b.WriteByte(d)
				t.i++
			}
			if !closed {
				w.literal = false
			}
		case c == '$':
			w.literal = false
			if t.peek(1) == '(' {
				b.WriteByte('$')
				t.i++
				t.skipParens(&b)
				continue
			}
			b.WriteByte(c)
			t.i++
		case c == '`':
			w.literal = false
			end := strings.IndexByte(t.s[t.i+1:], '`')
			if end < 0 {
				t.i = len(t.s)
				continue
			}
			b.WriteString(t.s[t.i : t.i+end+2])
			t.i += end + 2
		case c == '*' || c == '?' || c == '[' || c == '{' || c == '}' || c == '~' && first:
			w.literal = false
			b.WriteByte(c)
			t.i++
		default:
			b.WriteByte(c)
			t.i++
		}
		first = false
	}
	w.text = b.String()
	return w
}

// skipParens copies a $( ... ) group, t.i at its "(", to b, so operators
// inside it do not end the word.
func (t *tokenizer) skipParens(b *strings.Builder) {
	depth := 0
	for t.i < len(t.s) {
		c := t.s[t.i]
		b.WriteByte(c)
		t.i++
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return
			}
		case '\'':
			end := strings.IndexByte(t.s[t.i:], '\'')
			if end < 0 {
				t.i = len(t.s)
				return
			}
			b.WriteString(t.s[t.i : t.i+end+1])
			t.i += end + 1
		}
	}
}
