package cli

import (
	"fmt"
	"strings"
	"sync"
)

// fakeTerminal is a terminal backend that runs nothing: it remembers what
// was started and what was pasted, and shows it back as the screen.
type fakeTerminal struct {
	mu      sync.Mutex          // serve reads the screens while commands paste
	screens map[string][]string // target -> lines
}

func newFakeTerminal() *fakeTerminal { return &fakeTerminal{screens: map[string][]string{}} }

func (t *fakeTerminal) Name() string     { return "demo" }
func (t *fakeTerminal) Available() error { return nil }

func (t *fakeTerminal) Start(name, dir string, env, argv []string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.screens[name]; ok {
		return fmt.Errorf("a session %s exists already", name)
	}
	t.screens[name] = []string{"$ " + argvText(argv), "(a fake agent: it waits for what rally pastes here)"}
	return nil
}

func (t *fakeTerminal) Live() (map[string]bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	live := map[string]bool{}
	for n := range t.screens {
		live[n] = true
	}
	return live, nil
}

func (t *fakeTerminal) Resolve(target string) (string, string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.screens[target]; !ok {
		return "", "", fmt.Errorf("no terminal %s", target)
	}
	return target, target, nil
}

func (t *fakeTerminal) Capture(target string, lines int) ([]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.screens[target]
	if !ok {
		return nil, fmt.Errorf("no terminal %s", target)
	}
	if lines > 0 && len(s) > lines {
		s = s[len(s)-lines:]
	}
	return append([]string(nil), s...), nil
}

func (t *fakeTerminal) Paste(target, text string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.screens[target]; !ok {
		return fmt.Errorf("no terminal %s", target)
	}
	t.screens[target] = append(t.screens[target], strings.Split(strings.TrimRight(text, "\n"), "\n")...)
	return nil
}

func (t *fakeTerminal) Kill(target string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.screens, target)
	return nil
}

func (t *fakeTerminal) Attach(target string) error {
	return fmt.Errorf("the demo's terminals are stand-ins: use git rally capture")
}
