//go:build unix

package store

import (
	"io/fs"
	"syscall"
)

// ownedByRoot reports whether user 0 owns the file info describes.
func ownedByRoot(info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	return ok && st.Uid == 0
}
