// Command image builds the agent's OCI image without a container engine:
// it cross-compiles the static agent for each platform and assembles, from
// scratch, an image per platform and an OCI index of them, with
// go-containerregistry. Run it from the module root (make image does):
//
//	go run ./tools/image [-out dist] [-version V] [-platforms linux/amd64,linux/arm64]
//
// V defaults to git describe --tags --always --dirty less its leading v, as
// a release names its version (v0.1.0 gives 0.1.0, the chart's appVersion).
//
// It writes the OCI layout to OUT/image/ and the same layout as one tar file,
// OUT/tributary-agent-image.tar, that also holds a Docker manifest.json for
// the linux/amd64 image (so that docker load takes it as well as tools that
// read OCI archives), and prints the index's digest.
//
// Each image has two layers: the base (/etc/passwd and /etc/group with the
// nonroot user and group 65532, the CA bundle at
// /etc/ssl/certs/ca-certificates.crt, /data owned by nonroot with mode 0700,
// /tmp with mode 1777) and the agent at /tributary-agent. The agent runs as
// 65532:65532 and writes only under /data and /tmp, so the root filesystem
// can be mounted read-only.
//
// The build is reproducible: every time in the image (file times, the
// config's created, the history) is the commit's time (git log -1
// --format=%ct, or SOURCE_DATE_EPOCH when set), files are written in a fixed
// order with fixed owners, and the agent is built with -trimpath and without
// VCS stamping, so two builds of one commit with one Go toolchain give the
// same digest.
//
// The CA bundle holds the Mozilla roots of golang.org/x/crypto/x509roots/
// fallback/bundle (the NSS trust store, taken at the version go.mod pins),
// written as PEM. A root that NSS trusts only for certificates issued before
// some date is left out: a PEM bundle cannot carry that limit, and keeping
// the root would trust what NSS no longer does.
package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// The image's fixed parts, shared with the Helm chart and the docs.
const (
	repository = "tributary-agent"
	entrypoint = "/tributary-agent"
	agentPkg   = "./agent/cmd/tributary-agent"
	source     = "https://github.com/tributary-io/terraform-provider-tributary"
	apiPort    = "8470"
	// nonroot is the user and group id the agent runs as.
	nonroot   = 65532
	caBundle  = "etc/ssl/certs/ca-certificates.crt"
	tarName   = "tributary-agent-image.tar"
	layoutDir = "image"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	out       string
	version   string
	license   string
	platforms []v1.Platform
}

// run parses args, builds the image and prints its reference and digest to
// stdout.
func run(args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("image", flag.ContinueOnError)
	var o options
	var platforms string
	flags.StringVar(&o.out, "out", "dist", "`folder` to write image/ (the OCI layout) and "+tarName+" in")
	flags.StringVar(&o.version, "version", "", "the agent's `version` (default: git describe --tags --always --dirty, less a leading v)")
	flags.StringVar(&o.license, "license", "NOASSERTION", "the org.opencontainers.image.licenses label, an SPDX `expression`")
	flags.StringVar(&platforms, "platforms", "linux/amd64,linux/arm64", "comma-separated `os/arch` list to build")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	for _, p := range strings.Split(platforms, ",") {
		goos, goarch, ok := strings.Cut(strings.TrimSpace(p), "/")
		if !ok || goos == "" || goarch == "" {
			return fmt.Errorf("-platforms: %q is not os/arch", p)
		}
		o.platforms = append(o.platforms, v1.Platform{OS: goos, Architecture: goarch})
	}
	if o.version == "" {
		v, err := git("describe", "--tags", "--always", "--dirty")
		if err != nil {
			return fmt.Errorf("the version (pass -version): %w", err)
		}
		// Tags are v0.1.0, versions 0.1.0: a release (goreleaser's
		// {{ .Version }}) and the chart's appVersion, the image tag the chart
		// pulls by default, have no v.
		o.version = strings.TrimPrefix(v, "v")
	}
	created, err := commitTime()
	if err != nil {
		return err
	}
	revision, err := git("rev-parse", "HEAD")
	if err != nil {
		return fmt.Errorf("the revision: %w", err)
	}
	digest, err := build(o, created, revision)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s:%s %s\n", repository, tag(o.version), digest)
	return nil
}

// git runs git with args in the current folder and returns its trimmed
// output.
func git(args ...string) (string, error) {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			err = fmt.Errorf("%w: %s", err, bytes.TrimSpace(exit.Stderr))
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// commitTime returns SOURCE_DATE_EPOCH when set, else the time of the
// commit checked out: every time in the image is this one.
func commitTime() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		var err error
		if s, err = git("log", "-1", "--format=%ct"); err != nil {
			return time.Time{}, fmt.Errorf("the commit time (or set SOURCE_DATE_EPOCH): %w", err)
		}
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("the commit time %q is not seconds since the epoch: %w", s, err)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// tagRE matches what a Docker tag may not hold.
var tagRE = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// tag turns a version into an image tag: anything a tag cannot hold (a
// semver build's +) becomes -.
func tag(version string) string {
	return tagRE.ReplaceAllString(version, "-")
}

// build builds the binaries and the images and writes the layout and the
// tar file; it returns the index's digest.
func build(o options, created time.Time, revision string) (v1.Hash, error) {
	work, err := os.MkdirTemp("", "tributary-image")
	if err != nil {
		return v1.Hash{}, fmt.Errorf("a folder for the binaries: %w", err)
	}
	defer func() { _ = os.RemoveAll(work) }()
	base, err := baseLayer(created)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("the base layer: %w", err)
	}
	labels := map[string]string{
		"org.opencontainers.image.title":       repository,
		"org.opencontainers.image.description": "Tributary's agent: ingests Kafka topics into Delta Lake tables, exactly once",
		"org.opencontainers.image.version":     o.version,
		"org.opencontainers.image.revision":    revision,
		"org.opencontainers.image.source":      source,
		"org.opencontainers.image.licenses":    o.license,
		"org.opencontainers.image.created":     created.Format(time.RFC3339),
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var amd64 v1.Image
	for _, p := range o.platforms {
		bin := filepath.Join(work, "tributary-agent-"+p.OS+"-"+p.Architecture)
		if err := compile(bin, p, o.version); err != nil {
			return v1.Hash{}, err
		}
		img, err := image(p, base, bin, labels, created)
		if err != nil {
			return v1.Hash{}, fmt.Errorf("the %s image: %w", p, err)
		}
		if p.OS == "linux" && p.Architecture == "amd64" {
			amd64 = img
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	idx = mutate.Annotations(idx, labels).(v1.ImageIndex)
	digest, err := idx.Digest()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("the index's digest: %w", err)
	}
	dir := filepath.Join(o.out, layoutDir)
	if err := os.RemoveAll(dir); err != nil {
		return v1.Hash{}, fmt.Errorf("removing the previous layout: %w", err)
	}
	l, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("writing the layout: %w", err)
	}
	if err := l.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": tag(o.version),
	})); err != nil {
		return v1.Hash{}, fmt.Errorf("writing the layout: %w", err)
	}
	var extra []tarFile
	if amd64 != nil {
		m, err := dockerManifest(amd64, o.version)
		if err != nil {
			return v1.Hash{}, fmt.Errorf("the archive's manifest.json: %w", err)
		}
		extra = append(extra, tarFile{name: "manifest.json", mode: 0o644, data: m})
	}
	if err := writeArchive(filepath.Join(o.out, tarName), dir, extra, created); err != nil {
		return v1.Hash{}, fmt.Errorf("writing %s: %w", tarName, err)
	}
	return digest, nil
}

// buildEnvDropped are the variables of the environment that change what go
// build compiles (flags, instruction set levels, experiments, a workspace's
// modules) without showing in the command line: compile leaves them out,
// so that the binaries, and so the digest, depend on the commit and the
// toolchain alone. What the go command needs to run (PATH, HOME, GOCACHE,
// GOMODCACHE, GOPROXY...) stays.
var buildEnvDropped = []string{"GOFLAGS", "GOEXPERIMENT", "GOWORK", "GOAMD64", "GOARM", "GOARM64",
	"GO386", "GOMIPS", "GOMIPS64", "GOPPC64", "GORISCV64", "GOWASM", "CGO_ENABLED", "GOOS", "GOARCH"}

// buildEnv returns env less buildEnvDropped, with the platform's GOOS and
// GOARCH, no cgo and no workspace.
func buildEnv(env []string, p v1.Platform) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(buildEnvDropped, name)
	})
	return append(out, "CGO_ENABLED=0", "GOWORK=off", "GOOS="+p.OS, "GOARCH="+p.Architecture)
}

// compile builds the static agent for platform p into out, as a release
// is built: no cgo, -trimpath, no VCS stamp, the version in main.version,
// in an environment that cannot add flags (buildEnv).
func compile(out string, p v1.Platform, version string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -X main.version="+version, "-o", out, agentPkg)
	cmd.Env = buildEnv(os.Environ(), p)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building the agent for %s: %w", p, err)
	}
	return nil
}

// image assembles the image of platform p: the base layer, the agent
// binary's layer and the config.
func image(p v1.Platform, base v1.Layer, bin string, labels map[string]string, created time.Time) (v1.Image, error) {
	agent, err := os.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("reading the agent: %w", err)
	}
	binLayer, err := layer(created, []tarFile{{name: strings.TrimPrefix(entrypoint, "/"), mode: 0o755, data: agent}})
	if err != nil {
		return nil, fmt.Errorf("the agent's layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	at := v1.Time{Time: created}
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, MediaType: types.OCILayer, History: v1.History{Created: at,
			CreatedBy: "tools/image: /etc/passwd, /etc/group, " + caBundle + ", /data, /tmp"}},
		mutate.Addendum{Layer: binLayer, MediaType: types.OCILayer, History: v1.History{Created: at,
			CreatedBy: "tools/image: go build -trimpath " + agentPkg + " to " + entrypoint}},
	)
	if err != nil {
		return nil, fmt.Errorf("adding the layers: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("the config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = at
	cf.Config = v1.Config{
		User:         fmt.Sprintf("%d:%d", nonroot, nonroot),
		Entrypoint:   []string{entrypoint},
		Cmd:          []string{"serve", "--data-dir", "/data", "--listen", "0.0.0.0:" + apiPort},
		ExposedPorts: map[string]struct{}{apiPort + "/tcp": {}},
		WorkingDir:   "/",
		// Go finds the CA bundle at its Debian path by itself: no
		// SSL_CERT_FILE.
		Env:    []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		Labels: labels,
	}
	return mutate.ConfigFile(img, cf)
}

// tarFile is one entry of a layer or of the archive: a file, or a folder
// when dir is set.
type tarFile struct {
	name     string
	dir      bool
	mode     int64
	uid, gid int
	data     []byte
}

// baseLayer returns the layer every platform shares: the users, the CA
// bundle and the folders the agent writes to.
func baseLayer(created time.Time) (v1.Layer, error) {
	certs, err := caPEM()
	if err != nil {
		return nil, err
	}
	// nonroot's home is /data, the one folder it owns.
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/data:/sbin/nologin\n", nonroot, nonroot)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", nonroot)
	return layer(created, []tarFile{
		{name: "data", dir: true, mode: 0o700, uid: nonroot, gid: nonroot},
		{name: "etc", dir: true, mode: 0o755},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/ssl", dir: true, mode: 0o755},
		{name: "etc/ssl/certs", dir: true, mode: 0o755},
		{name: caBundle, mode: 0o644, data: certs},
		{name: "tmp", dir: true, mode: 0o1777},
	})
}

// caPEM returns the roots of the fallback bundle as PEM, leaving out those
// that carry a constraint (see the package doc).
func caPEM() ([]byte, error) {
	var b bytes.Buffer
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		if err := pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate}); err != nil {
			return nil, err
		}
	}
	if b.Len() == 0 {
		return nil, errors.New("the CA bundle is empty")
	}
	return b.Bytes(), nil
}

// layer returns a gzip-compressed OCI layer of files, in their order, every
// time set to created.
func layer(created time.Time, files []tarFile) (v1.Layer, error) {
	var b bytes.Buffer
	if err := writeTar(&b, files, created); err != nil {
		return nil, err
	}
	raw := b.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(raw)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// writeTar writes files to w as a tar stream, in their order, with mtime
// created and no user or group names, so that the bytes depend on nothing
// but the files.
func writeTar(w io.Writer, files []tarFile, created time.Time) error {
	tw := tar.NewWriter(w)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, Uid: f.uid, Gid: f.gid, ModTime: created, Format: tar.FormatPAX}
		if f.dir {
			h.Typeflag, h.Name = tar.TypeDir, f.name+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// dockerManifest returns the manifest.json that docker load reads (the
// format of docker save): img's config and layers, by their paths in the
// OCI layout's blobs, tagged repository:version.
func dockerManifest(img v1.Image, version string) ([]byte, error) {
	cfg, err := img.ConfigName()
	if err != nil {
		return nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return nil, err
		}
		paths = append(paths, blobPath(d))
	}
	return json.Marshal([]struct {
		Config   string
		RepoTags []string
		Layers   []string
	}{{Config: blobPath(cfg), RepoTags: []string{repository + ":" + tag(version)}, Layers: paths}})
}

// blobPath is where the OCI layout keeps the blob of digest h.
func blobPath(h v1.Hash) string {
	return path.Join("blobs", h.Algorithm, h.Hex)
}

// writeArchive writes the OCI layout in dir, and the extra files, to the
// tar file at name: entries sorted by name, owned by root, every time
// created.
func writeArchive(name, dir string, extra []tarFile, created time.Time) error {
	files := slices.Clone(extra)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		f := tarFile{name: filepath.ToSlash(rel), dir: d.IsDir(), mode: 0o755}
		if !f.dir {
			f.mode = 0o644
			if f.data, err = os.ReadFile(p); err != nil {
				return err
			}
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortFunc(files, func(a, b tarFile) int { return strings.Compare(a.name, b.name) })
	var b bytes.Buffer
	if err := writeTar(&b, files, created); err != nil {
		return err
	}
	return os.WriteFile(name, b.Bytes(), 0o644)
}
