package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/server"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/store"
)

// readTokens returns the API tokens in file: one a line, surrounding
// whitespace trimmed, blank lines and lines starting with # ignored. Several
// tokens let clients move to a new one before the old one is removed. It
// refuses a file without a token and a token shorter than
// server.MinTokenLength; errors name the line, never the token.
func readTokens(file string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading the token file: %w", err)
	}
	var tokens []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if len(t) < server.MinTokenLength {
			return nil, fmt.Errorf("token file %s, line %d: the token is %d bytes long, shorter than the minimum of %d; "+
				"write a random secret, e.g. with `openssl rand -hex 32`", file, line, len(t), server.MinTokenLength)
		}
		tokens = append(tokens, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the token file %s: %w", file, err)
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("token file %s is empty (or only comments); write a random secret into it, e.g. with `openssl rand -hex 32`", file)
	}
	return tokens, nil
}

// envToken returns the token in the environment variable tokenEnv, if any,
// refusing one shorter than server.MinTokenLength.
func envToken(value string) ([]string, error) {
	t := strings.TrimSpace(value)
	if t == "" {
		return nil, nil
	}
	if len(t) < server.MinTokenLength {
		return nil, fmt.Errorf("%s is %d bytes long, shorter than the minimum of %d; use a random secret, e.g. made with `openssl rand -hex 32`",
			tokenEnv, len(t), server.MinTokenLength)
	}
	return []string{t}, nil
}

// warnIfReadable logs a warning when other users than the agent's may read
// the token file (see [store.Private]).
func warnIfReadable(file string, log *slog.Logger) {
	fi, err := os.Stat(file)
	if err != nil {
		return // reading it just worked or failed with a clearer error
	}
	if perm := fi.Mode().Perm(); !store.Private(fi) {
		log.Warn("the token file is readable by other users; restrict it with chmod 600",
			"file", file, "mode", fmt.Sprintf("%#o", perm))
	}
}

// fingerprints returns the fingerprints of tokens, for the log.
func fingerprints(tokens []string) []string {
	fps := make([]string, len(tokens))
	for i, t := range tokens {
		fps[i] = server.TokenFingerprint(t)
	}
	return fps
}

// fileWatch tells whether any of a few files changed since it last marked
// them: a file changed when its modification time or size differs, or when
// its path now leads to another file. os.Stat follows symbolic links, so a
// file replaced by a rename, or a link moved to a new target as the kubelet
// updates a mounted Secret (tokens -> ..data/tokens, ..data -> a new
// timestamped folder), counts as changed even with the same time and size.
// A file it cannot stat counts as absent. It is not safe for concurrent
// use.
type fileWatch struct {
	files []string
	seen  []os.FileInfo
}

// newFileWatch watches files, marked as they are now.
func newFileWatch(files ...string) *fileWatch {
	w := &fileWatch{files: files}
	w.mark()
	return w
}

// stat returns the files' information now, nil for a file it cannot stat.
func (w *fileWatch) stat() []os.FileInfo {
	fis := make([]os.FileInfo, len(w.files))
	for i, f := range w.files {
		if fi, err := os.Stat(f); err == nil {
			fis[i] = fi
		}
	}
	return fis
}

// mark remembers the files as they are now. Mark before reading them: a
// change made while they are read then shows on the next look.
func (w *fileWatch) mark() { w.seen = w.stat() }

// changed reports whether a file changed since the last mark.
func (w *fileWatch) changed() bool {
	for i, fi := range w.stat() {
		was := w.seen[i]
		if (fi == nil) != (was == nil) {
			return true
		}
		if fi != nil && (!os.SameFile(fi, was) || !fi.ModTime().Equal(was.ModTime()) || fi.Size() != was.Size()) {
			return true
		}
	}
	return false
}

// certReloader holds the agent's TLS key pair and reloads it from its files
// when they change (see [fileWatch], looked at no more than once a second,
// on a TLS handshake) or when asked (SIGHUP). A pair that fails to load is
// logged and the previous one kept, so that a certificate renewal that
// writes the two files one after the other never takes the API down. It is
// safe for concurrent use.
type certReloader struct {
	certFile, keyFile string
	log               *slog.Logger

	mu   sync.Mutex
	cert *tls.Certificate
	// watch holds the files as they were when last loaded or tried, and
	// checked when they were last looked at.
	watch   *fileWatch
	checked time.Time
}

// checkEvery is how often the agent looks whether the files it reloads
// changed: the key pair on a handshake, the token file and the client CAs
// on a timer.
const checkEvery = time.Second

// newCertReloader loads the key pair in certFile and keyFile.
func newCertReloader(certFile, keyFile string, log *slog.Logger) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile, log: log, watch: newFileWatch(certFile, keyFile)}
	if err := r.load(); err != nil {
		return nil, err
	}
	r.checked = time.Now()
	return r, nil
}

// load reads the key pair; on success it replaces the one served.
// r.mu must be held, or r not yet shared.
func (r *certReloader) load() error {
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("loading the TLS key pair --tls-cert %s and --tls-key %s: %w", r.certFile, r.keyFile, err)
	}
	r.cert = &cert
	return nil
}

// reload loads the key pair again, logging the outcome; a failure keeps the
// previous pair.
func (r *certReloader) reload() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reloadLocked()
}

func (r *certReloader) reloadLocked() {
	r.watch.mark()
	r.checked = time.Now()
	if err := r.load(); err != nil {
		r.log.Error("the new TLS key pair did not load; still serving the previous one", "err", err)
		return
	}
	r.log.Info("reloaded the TLS key pair", "cert", r.certFile, "not_after", r.cert.Leaf.NotAfter)
}

// getCertificate is the tls.Config's GetCertificate: the current pair,
// reloaded first when its files changed.
func (r *certReloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.checked) >= checkEvery {
		r.checked = time.Now()
		if r.watch.changed() {
			r.reloadLocked()
		}
	}
	return r.cert, nil
}

// tlsConfig returns the API's TLS configuration: the reloader's key pair
// and, when clientCAFile is set, client certificates required and verified
// against the CAs in it, which cas (nil without clientCAFile) reloads.
func tlsConfig(r *certReloader, clientCAFile string, log *slog.Logger) (_ *tls.Config, cas *clientCAs, _ error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.getCertificate}
	if clientCAFile == "" {
		return cfg, nil, nil
	}
	cas = &clientCAs{file: clientCAFile, log: log, watch: newFileWatch(clientCAFile)}
	pool, err := readClientCAs(clientCAFile)
	if err != nil {
		return nil, nil, err
	}
	cas.pool.Store(pool)
	cfg.ClientAuth = tls.RequireAndVerifyClientCert
	cfg.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		c := cfg.Clone()
		c.GetConfigForClient, c.ClientCAs = nil, cas.pool.Load()
		return c, nil
	}
	return cfg, cas, nil
}

// clientCAs holds the CAs that sign the API clients' certificates, read from
// --tls-client-ca at start and again on SIGHUP and when it changes, so that
// a CA can be rotated without a restart.
type clientCAs struct {
	file string
	log  *slog.Logger
	pool atomic.Pointer[x509.CertPool]
	// watch holds the file as it was when last read or tried.
	watch *fileWatch
}

// reload reads the CA file again; a file that does not read keeps the
// previous CAs, and says why.
func (c *clientCAs) reload() {
	pool, err := readClientCAs(c.file)
	if err != nil {
		c.log.Error("the client CA file did not reload; still trusting the previous CAs", "err", err)
		return
	}
	c.pool.Store(pool)
	c.log.Info("reloaded the client CAs", "file", c.file)
}

// readClientCAs returns the certificates of the PEM file of --tls-client-ca.
func readClientCAs(file string) (*x509.CertPool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading --tls-client-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("--tls-client-ca %s holds no PEM certificate; give the CA that signs the clients' certificates", file)
	}
	return pool, nil
}

// isLoopback reports whether addr, a listener's address, accepts
// connections from this machine only.
func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
