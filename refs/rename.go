package refs

import (
	"os"
	"syscall"
)

// RenameOver renames the file oldpath to newpath, replacing newpath, with
// one rename(2). os.Rename first stats newpath to refuse a directory
// there; the callers rename files onto file names (an object, a ref, a
// cache file), where the kernel refuses a directory by itself (EISDIR),
// and the stat is one more system call per object an append writes.
func RenameOver(oldpath, newpath string) error {
	for {
		err := syscall.Rename(oldpath, newpath)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
		}
		return nil
	}
}
