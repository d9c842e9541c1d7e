//go:build !linux

package cli

import "io"

// termWidth is 0 here: the room's width comes from $COLUMNS, else 100.
func termWidth(io.Writer) int { return 0 }
