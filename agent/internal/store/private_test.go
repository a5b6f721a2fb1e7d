package store

import (
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
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

// The note for a key file its group may read names the group, by name and
// id, and says it must have no other member; a file only its owner may
// read gets none.
func TestGroupNote(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("files have no Unix group")
	}
	file := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if note := groupNote(file, info); note != "" {
		t.Errorf("groupNote of a 0600 file = %q, want none", note)
	}
	if err := os.Chmod(file, 0o640); err != nil {
		t.Fatal(err)
	}
	if info, err = os.Stat(file); err != nil {
		t.Fatal(err)
	}
	gid := strconv.Itoa(os.Getegid())
	want := "group " + gid
	if g, err := user.LookupGroupId(gid); err == nil {
		want = "group " + g.Name + " (" + gid + ")"
	}
	if note := groupNote(file, info); !strings.Contains(note, want) || !strings.Contains(note, "no other member") || !strings.Contains(note, file) {
		t.Errorf("groupNote of a 0640 file = %q, want it to name %q and say the group must have no other member", note, want)
	}
}
