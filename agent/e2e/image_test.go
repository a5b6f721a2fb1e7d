//go:build e2e

package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"debug/elf"
	"encoding/pem"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// The image's contract with the Helm chart and the docs (see tools/image).
const (
	imageUser       = "65532:65532"
	imageEntrypoint = "/tributary-agent"
	imageCABundle   = "etc/ssl/certs/ca-certificates.crt"
)

// TestImage builds the agent's OCI image twice with tools/image (as make
// image does) and checks that both builds give the same index digest and
// the same tar file; that the index holds a linux/amd64 and a linux/arm64
// image, each with the contract's config and labels, every time the
// commit's, and a static agent for its architecture; that docker load
// would take the tar file's linux/amd64 image; and that the host's image,
// unpacked into a folder, has the nonroot user, a CA bundle, and no place
// its user may write but /data and /tmp. Then it runs the image's
// entrypoint with the image's config (Cmd, Env, WorkingDir, and its User
// through a chroot of the unpacked folder, which needs root) against the
// real broker: /healthz answers without a token, and a pipeline made over
// the API ingests records into a table that the agent wrote as 65532.
func TestImage(t *testing.T) {
	t.Parallel()
	tool := filepath.Join(t.TempDir(), "image")
	goCommand(t, "build", "-o", tool, "./tools/image")
	out1, out2 := t.TempDir(), t.TempDir()
	digest := buildImage(t, tool, out1)
	if again := buildImage(t, tool, out2); again != digest {
		t.Errorf("two builds of one commit gave two index digests: %s and %s", digest, again)
	}
	if a, b := fileSum(t, filepath.Join(out1, "tributary-agent-image.tar")), fileSum(t, filepath.Join(out2, "tributary-agent-image.tar")); a != b {
		t.Errorf("two builds of one commit gave two tar files: sha256 %x and %x", a, b)
	}

	created := commitTime(t)
	images := imageIndex(t, filepath.Join(out1, "image"), digest)
	var platforms []string
	for p, img := range images {
		platforms = append(platforms, p)
		checkImageConfig(t, p, img, created)
		checkImageBinary(t, p, img)
	}
	slices.Sort(platforms)
	if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(platforms, want) {
		t.Fatalf("the index holds the platforms %v, want %v", platforms, want)
	}

	checkDockerArchive(t, filepath.Join(out1, "tributary-agent-image.tar"), images["linux/amd64"])

	host := runtime.GOOS + "/" + runtime.GOARCH
	img, ok := images[host]
	if !ok {
		t.Skipf("no image for this machine's platform %s to run", host)
	}
	root := t.TempDir()
	// The chroot's / must be open to the image's user, as a container's is.
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	unpack(t, img, root)
	checkImageFiles(t, root)
	if os.Geteuid() != 0 {
		t.Skip("running the image's entrypoint as its user in a chroot needs root")
	}
	runImage(t, img, root)
}

// goCommand runs the go command with args in the module root.
func goCommand(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = env.root
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, exit.Stderr)
		}
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// buildImage runs the image tool, writing to out, and returns the index
// digest it prints.
func buildImage(t *testing.T, tool, out string) v1.Hash {
	t.Helper()
	cmd := exec.Command(tool, "-out", out)
	cmd.Dir = env.root
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s -out %s: %v\n%s", tool, out, err, b)
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		t.Fatalf("the image tool printed nothing")
	}
	h, err := v1.NewHash(fields[len(fields)-1])
	if err != nil {
		t.Fatalf("the image tool printed %q: %v", b, err)
	}
	return h
}

func fileSum(t *testing.T, name string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// commitTime returns the time of the commit checked out, which every time
// in the image must be.
func commitTime(t *testing.T) time.Time {
	t.Helper()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return time.Unix(sec, 0).UTC()
	}
	out, err := exec.Command("git", "-C", env.root, "log", "-1", "--format=%ct").Output()
	if err != nil {
		t.Fatal(err)
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.Unix(sec, 0).UTC()
}

// imageIndex reads the OCI layout in dir, checks that it names the index
// digest, and returns that index's images by platform (os/arch).
func imageIndex(t *testing.T, dir string, digest v1.Hash) map[string]v1.Image {
	t.Helper()
	l, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := l.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Manifests) != 1 || top.Manifests[0].Digest != digest {
		t.Fatalf("the layout's index.json names %+v, want the one index %s", top.Manifests, digest)
	}
	idx, err := l.ImageIndex(digest)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]v1.Image{}
	for _, d := range m.Manifests {
		if d.Platform == nil {
			t.Fatalf("manifest %s has no platform", d.Digest)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		images[d.Platform.OS+"/"+d.Platform.Architecture] = img
	}
	return images
}

// checkImageConfig checks the config of the image of platform p against
// the contract.
func checkImageConfig(t *testing.T, p string, img v1.Image, created time.Time) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cf.OS + "/" + cf.Architecture; got != p {
		t.Errorf("%s: the config says %s", p, got)
	}
	c := cf.Config
	if c.User != imageUser {
		t.Errorf("%s: User %q, want %q", p, c.User, imageUser)
	}
	if !slices.Equal(c.Entrypoint, []string{imageEntrypoint}) {
		t.Errorf("%s: Entrypoint %q, want [%s]", p, c.Entrypoint, imageEntrypoint)
	}
	if want := []string{"serve", "--data-dir", "/data", "--listen", "0.0.0.0:8470"}; !slices.Equal(c.Cmd, want) {
		t.Errorf("%s: Cmd %q, want %q", p, c.Cmd, want)
	}
	if _, ok := c.ExposedPorts["8470/tcp"]; !ok || len(c.ExposedPorts) != 1 {
		t.Errorf("%s: ExposedPorts %v, want 8470/tcp", p, c.ExposedPorts)
	}
	if c.WorkingDir != "/" {
		t.Errorf("%s: WorkingDir %q, want /", p, c.WorkingDir)
	}
	revision, err := exec.Command("git", "-C", env.root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"title", "description", "version", "revision", "source", "licenses", "created"} {
		if c.Labels["org.opencontainers.image."+name] == "" {
			t.Errorf("%s: no label org.opencontainers.image.%s", p, name)
		}
	}
	if got, want := c.Labels["org.opencontainers.image.revision"], strings.TrimSpace(string(revision)); got != want {
		t.Errorf("%s: revision label %q, want %q", p, got, want)
	}
	if got, want := c.Labels["org.opencontainers.image.created"], created.Format(time.RFC3339); got != want {
		t.Errorf("%s: created label %q, want the commit's time %s", p, got, want)
	}
	if !cf.Created.Equal(created) {
		t.Errorf("%s: created %s, want the commit's time %s", p, cf.Created.Time, created)
	}
	for _, h := range cf.History {
		if !h.Created.Equal(created) {
			t.Errorf("%s: history %q created %s, want the commit's time %s", p, h.CreatedBy, h.Created.Time, created)
		}
	}
}

// checkDockerArchive checks that the tar file at name reads as docker
// load reads it (its manifest.json, as docker save writes it) and gives
// want, the linux/amd64 image: the same config and layers.
func checkDockerArchive(t *testing.T, name string, want v1.Image) {
	t.Helper()
	got, err := tarball.ImageFromPath(name, nil)
	if err != nil {
		t.Fatalf("%s as docker load reads it: %v", name, err)
	}
	digests := func(img v1.Image) []v1.Hash {
		cfg, err := img.ConfigName()
		if err != nil {
			t.Fatal(err)
		}
		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		hs := []v1.Hash{cfg}
		for _, l := range layers {
			d, err := l.Digest()
			if err != nil {
				t.Fatal(err)
			}
			hs = append(hs, d)
		}
		return hs
	}
	if g, w := digests(got), digests(want); !slices.Equal(g, w) {
		t.Errorf("%s's Docker manifest gives the config and layers %v, want the linux/amd64 image's %v", name, g, w)
	}
}

// checkImageBinary checks that the entrypoint of the image of platform p is
// a static executable of its architecture: no interpreter, no libc.
func checkImageBinary(t *testing.T, p string, img v1.Image) {
	t.Helper()
	var bin []byte
	walkImage(t, img, func(h *tar.Header, r io.Reader) {
		if "/"+h.Name != imageEntrypoint {
			return
		}
		var err error
		if bin, err = io.ReadAll(r); err != nil {
			t.Fatal(err)
		}
	})
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("%s: %s is not an ELF executable: %v", p, imageEntrypoint, err)
	}
	want := map[string]elf.Machine{"linux/amd64": elf.EM_X86_64, "linux/arm64": elf.EM_AARCH64}[p]
	if f.Machine != want {
		t.Errorf("%s: %s is for %s, want %s", p, imageEntrypoint, f.Machine, want)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP || prog.Type == elf.PT_DYNAMIC {
			t.Errorf("%s: %s is linked dynamically (%s)", p, imageEntrypoint, prog.Type)
		}
	}
}

// walkImage calls fn on every entry of img's filesystem, its layers
// flattened as a container runtime does.
func walkImage(t *testing.T, img v1.Image, fn func(*tar.Header, io.Reader)) {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(h, tr)
	}
}

// unpack writes img's filesystem under root with the entries' modes,
// owners (when running as root) and times.
func unpack(t *testing.T, img v1.Image, root string) {
	t.Helper()
	walkImage(t, img, func(h *tar.Header, r io.Reader) {
		name := filepath.Join(root, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(name, root+string(filepath.Separator)) {
			t.Fatalf("the image's entry %q lies outside its root", h.Name)
		}
		mode := h.FileInfo().Mode()
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(name, 0o700); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, r); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("the image's entry %q has type %q; the image holds only files and folders", h.Name, h.Typeflag)
		}
		if os.Geteuid() == 0 {
			if err := os.Lchown(name, h.Uid, h.Gid); err != nil {
				t.Fatal(err)
			}
		}
		// After the chown, which clears the set-id bits.
		if err := os.Chmod(name, mode&(fs.ModePerm|fs.ModeSticky|fs.ModeSetuid|fs.ModeSetgid)); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(name, h.ModTime, h.ModTime); err != nil {
			t.Fatal(err)
		}
	})
}

// checkImageFiles checks the unpacked image under root: the users, the CA
// bundle, /data and /tmp, and that the image's user may write nowhere
// else, so that the root filesystem may be mounted read-only.
func checkImageFiles(t *testing.T, root string) {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if s := read("etc/passwd"); !strings.Contains(s, "\nnonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot user 65532:\n%s", s)
	}
	if s := read("etc/group"); !strings.Contains(s, "\nnonroot:x:65532:") {
		t.Errorf("/etc/group has no nonroot group 65532:\n%s", s)
	}
	pool := x509.NewCertPool()
	rest, n := []byte(read(imageCABundle)), 0
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil || !c.IsCA {
			t.Fatalf("the CA bundle's certificate %d is not a CA certificate: %v", n, err)
		}
		pool.AddCert(c)
		n++
	}
	if n < 100 || len(bytes.TrimSpace(rest)) > 0 {
		t.Errorf("the CA bundle holds %d certificates and %d bytes that are none; want the Mozilla roots (over 100)", n, len(rest))
	}

	uid := uint32(65532)
	writable := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		rel := "/" + strings.TrimPrefix(p, root)
		rel = filepath.Clean(rel)
		if (os.Geteuid() == 0 && st.Uid == uid) || fi.Mode().Perm()&0o022 != 0 {
			writable[rel] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"/data": true, "/tmp": true}
	if os.Geteuid() != 0 {
		want = map[string]bool{"/tmp": true} // no owners without root
	}
	for p := range writable {
		if !want[p] {
			t.Errorf("%s is writable by the image's user; only /data and /tmp should be", p)
		}
	}
	for p := range want {
		if !writable[p] {
			t.Errorf("%s is not writable by the image's user", p)
		}
	}
	if fi, err := os.Stat(filepath.Join(root, "data")); err != nil || fi.Mode() != fs.ModeDir|0o700 {
		t.Errorf("/data: %v, %v; want a folder with mode 0700", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(root, "tmp")); err != nil || fi.Mode() != fs.ModeDir|fs.ModeSticky|0o777 {
		t.Errorf("/tmp: %v, %v; want a folder with mode 1777", fi.Mode(), err)
	}
}

// runImage runs the image unpacked under root as its config says, in a
// chroot of root, and has it ingest records from the real broker. To the
// image's Cmd it adds --listen 127.0.0.1:0 (the last --listen wins), so
// that tests running at once do not meet on port 8470, and the API token
// in TRIBUTARY_TOKEN, as a deployment passes --token-file or the token.
func runImage(t *testing.T, img v1.Image, root string) {
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	user, group, _ := strings.Cut(c.User, ":")
	uid, err1 := strconv.ParseUint(user, 10, 32)
	gid, err2 := strconv.ParseUint(group, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatalf("User %q is not uid:gid: %v", c.User, err)
	}
	argv := slices.Concat(c.Entrypoint, c.Cmd, []string{"--listen", "127.0.0.1:0"})
	a := &agent{t: t, dataDir: filepath.Join(root, "data"), token: uniqueName("image-token") + strings.Repeat("0", 32)}
	a.command = func() *exec.Cmd {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(slices.Clone(c.Env), "TRIBUTARY_TOKEN="+a.token)
		cmd.Dir = c.WorkingDir
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root,
			Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
		return cmd
	}
	a.start()
	t.Cleanup(a.stop)

	resp, err := http.Get(a.endpoint + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz without a token: %s, want 200", resp.Status)
	}

	topic := uniqueName("e2e-image")
	python(t, "produce.py", "--bootstrap", env.bootstrap, "--topic", topic, "--count", "500", "--partitions", "2")
	ctx := context.Background()
	cl := a.client()
	if _, err := cl.PutConnection(ctx, &spec.Connection{Name: "image", BootstrapServers: []string{env.bootstrap}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.PutPipeline(ctx, &spec.Pipeline{
		Name: "image", Connection: "image", DestinationCatalog: "main", DestinationSchema: "e2e", FlushInterval: "300ms",
		Tables: []spec.Table{{
			DestinationTable: "image",
			ConnectorOptions: spec.ConnectorOptions{KafkaOptions: spec.KafkaOptions{
				Topics: []string{topic}, StartingOffset: spec.StartingOffsetEarliest,
				ValueTransformer: &spec.Transformer{Format: spec.FormatJSON, JSONOptions: &spec.JSONOptions{Schema: eventsSchema}},
			}},
		}},
	}); err != nil {
		t.Fatal(err)
	}
	st := a.waitRows("image", 0, 500, 2*time.Minute)
	// The location is the agent's, inside the chroot.
	location := filepath.Join(root, st.Location)
	if !strings.HasPrefix(st.Location, "/data/") {
		t.Fatalf("the table is at %s, want it under /data", st.Location)
	}
	checkTable(t, location, "--count", "500", "--values")
	fi, err := os.Stat(filepath.Join(location, "_delta_log"))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != uint32(uid) || st.Gid != uint32(gid) {
		t.Errorf("the agent wrote the table's log as %d:%d, want the image's user %s", st.Uid, st.Gid, c.User)
	}
}
