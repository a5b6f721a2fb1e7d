// Command testcerts writes the throw-away certificates of the secure test
// services (tools/kafka.sh, tools/registry.sh) and of the tests that talk
// to them into one directory, all from agent/internal/testcerts:
//
//	ca.pem                       the test CA every service certificate chains to
//	server.pem, server-key.pem   a server certificate for localhost, 127.0.0.1
//	                             and ::1 (the broker's and the registry's)
//	server-keystore.pem          its key and certificate in one file, a PEM
//	                             key store for Kafka (ssl.keystore.type=PEM)
//	client.pem, client-key.pem   a client certificate the CA signed (mTLS)
//	client.p12                   the same key and certificate as a PKCS#12
//	                             store, encrypted with -p12-password
//	expired.pem, expired-key.pem a client certificate that expired yesterday
//	ca-other.pem                 an unrelated CA that signed none of these
//
//	testcerts -dir DIR [-p12-password P]
//
// It is idempotent: when DIR holds every file it changes nothing (a running
// broker keeps the CA its clients trust); when one is missing it writes a
// fresh set. Keys are written 0600. Nothing here protects anything. It
// lives under agent/ because it uses the internal testcerts package.
package main

import (
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"time"

	"software.sslmate.com/src/go-pkcs12"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/testcerts"
)

// outputs lists every file of a set, in the order written; secret ones
// (private keys) are written 0600, the others 0644.
var outputs = []struct {
	name   string
	secret bool
}{
	{"ca.pem", false}, {"ca-other.pem", false},
	{"server.pem", false}, {"server-key.pem", true}, {"server-keystore.pem", true},
	{"client.pem", false}, {"client-key.pem", true}, {"client.p12", true},
	{"expired.pem", false}, {"expired-key.pem", true},
}

func main() {
	dir := flag.String("dir", "", "directory to write the certificates into (created if missing)")
	p12Password := flag.String("p12-password", "tributary-p12-secret", "password of client.p12")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("testcerts: ")
	if *dir == "" {
		log.Fatal("-dir is required")
	}
	if complete(*dir) {
		return
	}
	files, err := generate(*p12Password)
	if err != nil {
		log.Fatal(err)
	}
	if err := write(*dir, files); err != nil {
		log.Fatal(err)
	}
}

// complete reports whether dir already holds every file of a set.
func complete(dir string) bool {
	for _, o := range outputs {
		if _, err := os.Stat(filepath.Join(dir, o.name)); err != nil {
			return false
		}
	}
	return true
}

// generate makes a fresh set: a CA, its server, client and expired client
// certificates, the client's PKCS#12 store and an unrelated CA.
func generate(p12Password string) (map[string][]byte, error) {
	ca, err := testcerts.NewCA("tributary test CA")
	if err != nil {
		return nil, err
	}
	other, err := testcerts.NewCA("tributary untrusted CA")
	if err != nil {
		return nil, err
	}
	server, err := ca.Issue(testcerts.Loopback("tributary-test-server"))
	if err != nil {
		return nil, err
	}
	client, err := ca.Issue(testcerts.Leaf{CommonName: "tributary-client", Client: true})
	if err != nil {
		return nil, err
	}
	now := time.Now()
	expired, err := ca.Issue(testcerts.Leaf{CommonName: "tributary-expired-client", Client: true,
		NotBefore: now.AddDate(0, 0, -2), NotAfter: now.AddDate(0, 0, -1)})
	if err != nil {
		return nil, err
	}
	p12, err := pkcs12.Modern.Encode(client.Key, client.Cert, []*x509.Certificate{ca.Cert}, p12Password)
	if err != nil {
		return nil, fmt.Errorf("encode client.p12: %w", err)
	}
	keystore := append(append([]byte{}, server.KeyPEM...), server.CertPEM...)
	return map[string][]byte{
		"ca.pem": ca.CertPEM, "ca-other.pem": other.CertPEM,
		"server.pem": server.CertPEM, "server-key.pem": server.KeyPEM, "server-keystore.pem": keystore,
		"client.pem": client.CertPEM, "client-key.pem": client.KeyPEM, "client.p12": p12,
		"expired.pem": expired.CertPEM, "expired-key.pem": expired.KeyPEM,
	}, nil
}

// write puts the outputs' contents into dir, each through a temporary file
// and a rename so a reader never sees half of one.
func write(dir string, contents map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	for _, o := range outputs {
		mode := fs.FileMode(0o644)
		if o.secret {
			mode = 0o600
		}
		path := filepath.Join(dir, o.name)
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, contents[o.name], mode); err != nil {
			return fmt.Errorf("write %s: %w", tmp, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return errors.Join(fmt.Errorf("rename %s: %w", tmp, err), os.Remove(tmp))
		}
	}
	return nil
}
