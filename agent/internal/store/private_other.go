//go:build !unix

package store

import "io/fs"

// ownedByRoot is false where files have no Unix owner.
func ownedByRoot(fs.FileInfo) bool { return false }
