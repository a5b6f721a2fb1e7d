//go:build !unix

package store

import "io/fs"

// ownedByRoot is false where files have no Unix owner.
func ownedByRoot(fs.FileInfo) bool { return false }

// fileGroup finds no group where files have no Unix group.
func fileGroup(fs.FileInfo) (int, bool) { return 0, false }
