//go:build !linux

package ledger

import "unsafe"

// prefault maps an allocation's pages ahead on Linux only.
func prefault(p unsafe.Pointer, n uintptr) {}
