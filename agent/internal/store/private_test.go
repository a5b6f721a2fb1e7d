package store

import (
	"io/fs"
	"testing"
)

// A file only its owner may use is private; one root owns and lets its group
// read, as Kubernetes mounts a Secret for a pod with an fsGroup, is private
// to an agent that is not root; anything more open is not.
func TestPrivate(t *testing.T) {
	for _, tc := range []struct {
		perm      fs.FileMode
		rootOwned bool
		euid      int
		want      bool
	}{
		{0o600, false, 1000, true},
		{0o400, true, 0, true},
		{0o440, true, 65532, true},   // a Secret's file under fsGroup
		{0o640, true, 65532, true},   // root may write its own file
		{0o440, false, 65532, false}, // the agent's own file: chmod 600 it
		{0o440, true, 0, false},      // an agent running as root
		{0o460, true, 65532, false},  // the group may write
		{0o444, true, 65532, false},  // everyone may read
		{0o404, false, 1000, false},
	} {
		if got := private(tc.perm, tc.rootOwned, tc.euid); got != tc.want {
			t.Errorf("private(%#o, root-owned %v, euid %d) = %v, want %v", tc.perm, tc.rootOwned, tc.euid, got, tc.want)
		}
	}
}
