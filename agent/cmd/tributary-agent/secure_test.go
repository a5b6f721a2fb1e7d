package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/server"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/testcerts"
)

// writeFile writes data to a file of dir with mode perm and returns its
// path.
func writeFile(t *testing.T, dir, name, data string, perm os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadTokens(t *testing.T) {
	dir := t.TempDir()
	a, b := strings.Repeat("a", 32), strings.Repeat("b", 64)
	file := writeFile(t, dir, "tokens", "# rotated 2026-11-30\n\n  "+a+"  \n# the new one\n"+b+"\n", 0o600)
	got, err := readTokens(file)
	if err != nil || len(got) != 2 || got[0] != a || got[1] != b {
		t.Fatalf("readTokens = %q, %v; want both tokens", got, err)
	}
	short := "only-31-bytes-long-0123456789ab"
	for name, tt := range map[string]struct{ data, want string }{
		"short":    {data: a + "\n" + short + "\n", want: "line 2: the token is 31 bytes long, shorter than the minimum of 32"},
		"empty":    {data: "\n", want: "is empty"},
		"comments": {data: "# nothing yet\n", want: "is empty (or only comments)"},
	} {
		_, err := readTokens(writeFile(t, dir, name, tt.data, 0o600))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), short) {
			t.Errorf("%s: the error shows the token: %v", name, err)
		}
	}
}

// keyPairFiles writes p into cert.pem and key.pem in dir, dated at.
func keyPairFiles(t *testing.T, dir string, p *testcerts.Pair, at time.Time) (certFile, keyFile string) {
	t.Helper()
	certFile = writeFile(t, dir, "cert.pem", string(p.CertPEM), 0o600)
	keyFile = writeFile(t, dir, "key.pem", string(p.KeyPEM), 0o600)
	for _, f := range []string{certFile, keyFile} {
		if err := os.Chtimes(f, at, at); err != nil {
			t.Fatal(err)
		}
	}
	return certFile, keyFile
}

// The key pair is reloaded when its files change and on reload; a pair
// that does not load keeps the previous one and logs why.
func TestCertReloader(t *testing.T) {
	ca, err := testcerts.NewCA("agent CA")
	if err != nil {
		t.Fatal(err)
	}
	issue := func() *testcerts.Pair {
		p, err := ca.Issue(testcerts.Loopback("agent"))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	first, second := issue(), issue()
	dir := t.TempDir()
	now := time.Now()
	certFile, keyFile := keyPairFiles(t, dir, first, now.Add(-time.Hour))
	var logs bytes.Buffer
	r, err := newCertReloader(certFile, keyFile, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	serving := func() string {
		t.Helper()
		c, err := r.getCertificate(nil)
		if err != nil {
			t.Fatal(err)
		}
		return c.Leaf.SerialNumber.String()
	}
	if got := serving(); got != first.Cert.SerialNumber.String() {
		t.Fatalf("serving %s, want the first pair", got)
	}

	keyPairFiles(t, dir, second, now)
	if got := serving(); got != first.Cert.SerialNumber.String() {
		t.Errorf("the files were looked at again within %v", checkEvery)
	}
	r.checked = time.Time{} // as if a second had passed
	if got := serving(); got != second.Cert.SerialNumber.String() {
		t.Fatalf("serving %s after the files changed, want the second pair", got)
	}

	writeFile(t, dir, "key.pem", string(first.KeyPEM), 0o600) // does not match the certificate
	r.reload()
	if got := serving(); got != second.Cert.SerialNumber.String() {
		t.Errorf("serving %s after a failed reload, want the previous pair", got)
	}
	if !strings.Contains(logs.String(), "the new TLS key pair did not load; still serving the previous one") {
		t.Errorf("the failed reload was not logged:\n%s", &logs)
	}

	if _, err := newCertReloader(certFile, filepath.Join(dir, "missing.pem"), slog.Default()); err == nil ||
		!strings.Contains(err.Error(), "--tls-key") {
		t.Errorf("newCertReloader of a missing key: %v, want an error naming --tls-key", err)
	}
}

// newClientCA returns a new CA named name and a client certificate it
// signed.
func newClientCA(t *testing.T, name string) (*testcerts.CA, []tls.Certificate) {
	t.Helper()
	ca, err := testcerts.NewCA(name)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.Issue(testcerts.Leaf{CommonName: "terraform", Client: true})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return ca, []tls.Certificate{cert}
}

var listeningTLSRE = regexp.MustCompile(`^tributary-agent listening on (https://\S+)$`)

// serve runs with HTTPS, client certificates and a token file of two
// tokens; SIGHUP reloads the key pair, the tokens and the client CAs, which
// are also read again when their file changes.
func TestServeHTTPS(t *testing.T) {
	ca, err := testcerts.NewCA("agent CA")
	if err != nil {
		t.Fatal(err)
	}
	issue := func(l testcerts.Leaf) *testcerts.Pair {
		p, err := ca.Issue(l)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	first, second := issue(testcerts.Loopback("agent")), issue(testcerts.Loopback("agent"))
	clientPair := issue(testcerts.Leaf{CommonName: "terraform", Client: true})
	dir := t.TempDir()
	certFile, keyFile := keyPairFiles(t, dir, first, time.Now().Add(-time.Hour))
	caFile := writeFile(t, dir, "ca.pem", string(ca.CertPEM), 0o600)
	oldToken, newToken := strings.Repeat("o", 40), strings.Repeat("n", 40)
	tokenFile := writeFile(t, dir, "tokens", oldToken+"\n"+newToken+"\n", 0o644)

	p := start(t, []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"),
		"--token-file", tokenFile, "--tls-cert", certFile, "--tls-key", keyFile, "--tls-client-ca", caFile, "--log-level", "debug"})
	url := p.waitFor(t, listeningTLSRE)

	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	clientCert, err := tls.X509KeyPair(clientPair.CertPEM, clientPair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	var served *x509.Certificate
	call := func(certs []tls.Certificate, path, token string) (int, error) {
		hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
			TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs}}}
		resp, err := request(t, hc, url+path, token)
		if err != nil {
			return 0, err
		}
		served = resp.TLS.PeerCertificates[0]
		return resp.StatusCode, nil
	}
	withCert := []tls.Certificate{clientCert}
	for _, tok := range []string{oldToken, newToken} {
		if code, err := call(withCert, "/v1/pipelines", tok); err != nil || code != http.StatusOK {
			t.Fatalf("GET over HTTPS with a client certificate: %d, %v", code, err)
		}
	}
	if _, err := call(nil, "/healthz", ""); err == nil {
		t.Error("a client without a certificate was answered")
	}

	// Rotation: the new key pair, only the new token and only a new client
	// CA, then SIGHUP.
	clientCA, newClientCert := newClientCA(t, "client CA")
	oldCert := withCert
	withCert = newClientCert
	keyPairFiles(t, dir, second, time.Now())
	writeFile(t, dir, "tokens", "# "+time.Now().Format(time.DateOnly)+"\n"+newToken+"\n", 0o600)
	writeFile(t, dir, "ca.pem", string(clientCA.CertPEM), 0o600)
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, err := call(withCert, "/v1/pipelines", oldToken)
		if err == nil && code == http.StatusUnauthorized && served.SerialNumber.Cmp(second.Cert.SerialNumber) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10s after SIGHUP: old token %d (%v), serving certificate %v; want 401 and the second certificate",
				code, err, served.SerialNumber)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, err := call(withCert, "/v1/pipelines", newToken); err != nil || code != http.StatusOK {
		t.Fatalf("the new token after the rotation: %d, %v", code, err)
	}
	if _, err := call(oldCert, "/healthz", ""); err == nil {
		t.Error("a client certificate of the old client CA was accepted after the rotation")
	}

	// The client CA file is read again when it changes, without a signal.
	thirdCA, thirdCert := newClientCA(t, "third client CA")
	writeFile(t, dir, "ca.pem", string(thirdCA.CertPEM), 0o600)
	waitUntil(t, "a client certificate of the third client CA accepted", func() bool {
		_, err := call(thirdCert, "/healthz", "")
		return err == nil
	})
	if _, err := call(withCert, "/healthz", ""); err == nil {
		t.Error("a client certificate of the second client CA was accepted after the file changed")
	}
	p.stop(t, syscall.SIGTERM)

	logs := p.stderr.String()
	for _, want := range []string{
		"the token file is readable by other users",
		"reloaded the TLS key pair",
		"reloaded the client CAs",
		"reloaded the API tokens",
		"token_sha256=" + server.TokenFingerprint(newToken),
		"url=" + url,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %q:\n%s", want, logs)
		}
	}
	for _, tok := range []string{oldToken, newToken} {
		if strings.Contains(logs, tok) {
			t.Errorf("the log contains a token:\n%s", logs)
		}
	}
}

// A watched file changed when its time or size differs, or when its path
// leads to another file, even of the same time and size: a file renamed
// over it, or a link moved to a new target.
func TestFileWatch(t *testing.T) {
	dir := t.TempDir()
	at := time.Now().Add(-time.Hour)
	write := func(name, data string) string {
		t.Helper()
		f := writeFile(t, dir, name, data, 0o600)
		if err := os.Chtimes(f, at, at); err != nil {
			t.Fatal(err)
		}
		return f
	}
	file := write("file", "one\n")
	w := newFileWatch(file)
	check := func(step string, want bool) {
		t.Helper()
		if got := w.changed(); got != want {
			t.Fatalf("%s: changed() = %v, want %v", step, got, want)
		}
		w.mark()
	}
	check("untouched", false)
	write("file", "two\n")
	check("rewritten in place with the same time and size", false)
	if err := os.Chtimes(file, at, at.Add(time.Nanosecond)); err != nil {
		t.Fatal(err)
	}
	check("a newer modification time", true)
	write("file", "three\n")
	check("another size", true)
	if err := os.Rename(write("new", "four!\n"), file); err != nil {
		t.Fatal(err)
	}
	check("replaced by a rename, same time and size", true)

	link := filepath.Join(dir, "link")
	if err := os.Symlink("file", link); err != nil {
		t.Fatal(err)
	}
	write("other", "five!\n")
	w = newFileWatch(link)
	if err := os.Rename(symlinkTo(t, dir, "other"), link); err != nil {
		t.Fatal(err)
	}
	check("a link moved to a file of the same time and size", true)
	if err := os.Remove(filepath.Join(dir, "other")); err != nil {
		t.Fatal(err)
	}
	check("its target removed", true)
	check("still missing", false)
}

// symlinkTo makes a new link in dir to target and returns its path.
func symlinkTo(t *testing.T, dir, target string) string {
	t.Helper()
	link := filepath.Join(dir, "..link_tmp")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// secretVersion writes tokens, dated at, as a new version of a folder laid
// out as the kubelet lays out a mounted Secret (tokens -> ..data/tokens,
// ..data -> ..<version>), and moves ..data to it as the kubelet does: a new
// link renamed over the old one.
func secretVersion(t *testing.T, dir, version, tokens string, at time.Time) {
	t.Helper()
	folder := filepath.Join(dir, ".."+version)
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(writeFile(t, folder, "tokens", tokens, 0o600), at, at); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(symlinkTo(t, dir, ".."+version), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

// waitUntil fails when ok is still false after 20 seconds.
func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("20s on, still not: %s", what)
		}
	}
}

// serve reads its token file again when it changes, without a signal, also
// as the kubelet updates a mounted Secret; a file that became invalid or
// was removed keeps the tokens in force and logs why, and SIGHUP still
// reloads.
func TestServeReloadsTokenFile(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.Mkdir(secret, 0o755); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(secret, "tokens")
	if err := os.Symlink("..data/tokens", tokenFile); err != nil {
		t.Fatal(err)
	}
	// Three tokens and a file of comments only, all 41 bytes long.
	first, second, third := strings.Repeat("1", 40), strings.Repeat("2", 40), strings.Repeat("3", 40)
	invalid := "#" + strings.Repeat("-", 39)
	at := time.Now().Add(-time.Hour)
	secretVersion(t, secret, "v1", first+"\n", at)

	p := start(t, []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"), "--token-file", tokenFile})
	url := p.waitFor(t, listeningRE) + "/v1/pipelines"
	if code := get(t, url, first); code != http.StatusOK {
		t.Fatalf("GET with the first token: %d", code)
	}

	// The new version has the same time and size: only the file differs.
	secretVersion(t, secret, "v2", second+"\n", at)
	waitUntil(t, "the second token accepted and the first refused", func() bool {
		return get(t, url, second) == http.StatusOK && get(t, url, first) == http.StatusUnauthorized
	})

	secretVersion(t, secret, "v3", invalid+"\n", at)
	waitUntil(t, "the log says the token file did not reload", func() bool {
		return strings.Contains(p.stderr.String(), "the token file did not reload; still accepting the previous tokens")
	})
	if code := get(t, url, second); code != http.StatusOK {
		t.Fatalf("GET with the second token after the file became invalid: %d, want it still accepted", code)
	}

	// Rewritten in place with its time kept, the file looks unchanged: only
	// SIGHUP reads it.
	v3 := filepath.Join(secret, "..v3", "tokens")
	if err := os.WriteFile(v3, []byte(third+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(v3, at, at); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the third token accepted after SIGHUP and the second refused", func() bool {
		return get(t, url, third) == http.StatusOK && get(t, url, second) == http.StatusUnauthorized
	})

	// A file gone is a file that does not read: the tokens stay.
	if err := os.Remove(filepath.Join(secret, "..data")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the log says the token file is gone", func() bool {
		return strings.Contains(p.stderr.String(), "reading the token file: open "+tokenFile+": no such file or directory")
	})
	if code := get(t, url, third); code != http.StatusOK {
		t.Fatalf("GET with the third token after the file was removed: %d, want it still accepted", code)
	}
	p.stop(t, syscall.SIGTERM)

	logs := p.stderr.String()
	for _, want := range []string{
		"token file " + tokenFile + " is empty",
		`msg="reloaded the API tokens" tokens=[` + server.TokenFingerprint(second) + "]",
		`msg="reloaded the API tokens" tokens=[` + server.TokenFingerprint(third) + "]",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %q:\n%s", want, logs)
		}
	}
	for _, secret := range []string{first, second, third, invalid} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log contains the token file's content:\n%s", logs)
		}
	}
}

// dev replaces an existing token file, whatever its mode, with one only its
// owner reads.
func TestWritePrivateFile(t *testing.T) {
	file := writeFile(t, t.TempDir(), "token", "old\n", 0o644)
	if err := writePrivateFile(file, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil || string(data) != "new\n" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %q, mode %v (%v); want the new content, mode 0600", data, fi.Mode().Perm(), err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 1 {
		t.Errorf("%d files left in the folder, want the token file only", len(entries))
	}
}
