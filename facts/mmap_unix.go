//go:build unix

package facts

import (
	"os"
	"syscall"
)

// mapFile returns the bytes of the file at p mapped read-only, and how to
// unmap them: a claims file is read in place instead of copied, so opening
// one costs its checksum and the pages it touches, not a copy. rally never
// changes a file it may have mapped: a claims file is written under its
// own name, or replaced by a rename, never truncated or rewritten in
// place; a fault all the same is a damaged file (see claimBase.guard).
func mapFile(p string) ([]byte, func(), error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	n := fi.Size()
	if n <= 0 || n != int64(int(n)) {
		b, err := os.ReadFile(p)
		return b, func() {}, err
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(n), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		b, err := os.ReadFile(p)
		return b, func() {}, err
	}
	return b, func() { syscall.Munmap(b) }, nil
}
