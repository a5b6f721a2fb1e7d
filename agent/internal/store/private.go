package store

import (
	"io/fs"
	"os"
)

// Private reports whether the permissions of a file, as info describes it,
// keep it from other users than the agent's: no permission for group or
// others; or, for a file root owns while the agent runs as another user,
// read permission for its group and none for others. The second is how
// Kubernetes mounts a Secret in a pod with an fsGroup (owner root, group the
// pod's fsGroup, mode 0440), and what PostgreSQL accepts of its key files:
// root chose the one group that may read the file, and the agent runs in
// it. An agent running as root gets no such leeway: the group would be
// someone else's.
func Private(info fs.FileInfo) bool {
	return private(info.Mode().Perm(), ownedByRoot(info), os.Geteuid())
}

// private is Private on the file's permission bits, whether root owns it,
// and the agent's effective user id.
func private(perm fs.FileMode, rootOwned bool, euid int) bool {
	if perm&0o077 == 0 {
		return true
	}
	return rootOwned && euid != 0 && perm&0o037 == 0
}
