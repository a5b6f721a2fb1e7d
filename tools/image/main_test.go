package main

import (
	"slices"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The agent's build leaves out the variables that would change the
// binaries unseen (flags, an instruction set level, experiments, a
// workspace, another platform) and keeps what the go command needs.
func TestBuildEnv(t *testing.T) {
	env := []string{"PATH=/usr/bin", "HOME=/home/u", "GOCACHE=/c", "GOMODCACHE=/m", "GOPROXY=off",
		"GOFLAGS=-tags=debug", "GOAMD64=v3", "GOARM64=v9.0", "GOEXPERIMENT=boringcrypto", "GOWORK=/w/go.work",
		"GOOS=darwin", "CGO_ENABLED=1"}
	got := buildEnv(env, v1.Platform{OS: "linux", Architecture: "arm64"})
	want := []string{"PATH=/usr/bin", "HOME=/home/u", "GOCACHE=/c", "GOMODCACHE=/m", "GOPROXY=off",
		"CGO_ENABLED=0", "GOWORK=off", "GOOS=linux", "GOARCH=arm64"}
	if !slices.Equal(got, want) {
		t.Errorf("buildEnv:\n got %q\nwant %q", got, want)
	}
}
