//go:build !linux

package cmdutil

import "io"

// GrowPipe grows a pipe on Linux only.
func GrowPipe(w io.Writer, n int) {}
