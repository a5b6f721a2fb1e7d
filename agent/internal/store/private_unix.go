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

// fileGroup returns the id of the group of the file info describes, and
// whether it has one.
func fileGroup(info fs.FileInfo) (int, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Gid), true
}
