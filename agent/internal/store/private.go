package store

import (
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
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

// groupNote returns, for a file Private accepts only because root owns it
// and lets its group read it, a warning naming that group, for the agent
// to log: every member of the group may read the file, so the group must
// have no other member than the agent's user. It returns "" for a file
// only its owner may use, and where files have no Unix group (Windows,
// whose permission bits say nothing of the kind).
func groupNote(file string, info fs.FileInfo) string {
	gid, ok := fileGroup(info)
	if !ok || info.Mode().Perm()&0o077 == 0 {
		return ""
	}
	group := fmt.Sprintf("group %d", gid)
	if g, err := user.LookupGroupId(strconv.Itoa(gid)); err == nil {
		group = fmt.Sprintf("group %s (%d)", g.Name, gid)
	}
	return fmt.Sprintf("secrets key file %s (mode %04o) is root's and readable by %s: accepted, as root chose that group "+
		"(a Kubernetes Secret mounted for a pod with an fsGroup is so), but every member of the group can read the key; "+
		"make sure the group has no other member than the agent's user, or give the agent a file of its own, mode 0600",
		file, info.Mode().Perm(), group)
}
