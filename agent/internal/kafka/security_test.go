package kafka_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
	"github.com/tributary-io/terraform-provider-tributary/agent/internal/testcerts"
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// These tests run the agent's client against kfake clusters that require
// SASL, TLS or both, as the real brokers of the end-to-end tests do: the
// admin requests (kafka-go's Transport) and the agent's own metadata and
// fetch requests must authenticate alike, and failures must come back as
// *kafka.ConnectionError naming the cause.

const (
	saslUser     = "ingest"
	saslPassword = "ingest-Secret-pw"
)

// secureCluster starts a kfake cluster with opts and a topic "t" holding
// one record, produced by a franz-go client with produceOpts.
func secureCluster(t *testing.T, opts []kfake.Opt, produceOpts ...kgo.Opt) []string {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(1, "t")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	p, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("t")}, produceOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return c.ListenAddrs()
}

// readBack checks that cl reaches the cluster through both of its paths:
// it lists the partitions of "t" (kafka-go's Transport) and fetches the
// record (the agent's own requests). It returns the first error.
func readBack(t *testing.T, cl *kafka.Client) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tps, err := cl.Partitions(ctx, &spec.KafkaOptions{Topics: []string{"t"}})
	if err != nil {
		return err
	}
	if len(tps) != 1 {
		t.Fatalf("partitions = %v", tps)
	}
	return fetchOne(ctx, cl)
}

// fetchOne fetches the first record of t/0; an error the fetcher retries
// ends it.
func fetchOne(ctx context.Context, cl *kafka.Client) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	retried := make(chan error, 1)
	f := &kafka.Fetcher{Client: cl, TP: kafka.TopicPartition{Topic: "t"}, Until: 1, OnRetry: func(err error) {
		select {
		case retried <- err:
		default:
		}
	}}
	out := make(chan kafka.Batch, 4)
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx, 0, out) }()
	for {
		select {
		case b := <-out:
			b.Release()
		case err := <-retried:
			cancel()
			<-done //nolint:errcheck // the run ends with the cancel above; the retried error is the one returned
			return err
		case err := <-done:
			return err
		}
	}
}

func newSecureClient(t *testing.T, conn *spec.Connection) *kafka.Client {
	t.Helper()
	if errs := conn.Validate(); errs != nil {
		t.Fatalf("the test's connection is not valid: %v", errs)
	}
	cl, err := kafka.NewClient(conn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// wantConnectionError checks that err is a *kafka.ConnectionError whose
// message holds each of want and none of the secrets.
func wantConnectionError(t *testing.T, err error, want ...string) {
	t.Helper()
	var ce *kafka.ConnectionError
	if !errors.As(err, &ce) {
		t.Fatalf("error = %v (%T), want a *kafka.ConnectionError", err, err)
	}
	msg := err.Error()
	t.Log(msg)
	for _, w := range append([]string{`connection "c": `}, want...) {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not say %q", msg, w)
		}
	}
	if strings.Contains(msg, saslPassword) {
		t.Errorf("error %q quotes the password", msg)
	}
}

func TestSASL(t *testing.T) {
	for _, tc := range []struct {
		mechanism string
		franz     kgo.Opt
	}{
		{spec.SASLPlain, kgo.SASL(plain.Auth{User: saslUser, Pass: saslPassword}.AsMechanism())},
		{spec.SASLScram256, kgo.SASL(scram.Auth{User: saslUser, Pass: saslPassword}.AsSha256Mechanism())},
		{spec.SASLScram512, kgo.SASL(scram.Auth{User: saslUser, Pass: saslPassword}.AsSha512Mechanism())},
	} {
		t.Run(tc.mechanism, func(t *testing.T) {
			addrs := secureCluster(t, []kfake.Opt{kfake.EnableSASL(), kfake.Superuser(tc.mechanism, saslUser, saslPassword)}, tc.franz)
			conn := func(password string) *spec.Connection {
				return &spec.Connection{Name: "c", BootstrapServers: addrs, SecurityProtocol: spec.ProtocolSASLPlaintext,
					SASL: &spec.SASL{Mechanism: tc.mechanism, Username: saslUser, Password: password}}
			}
			if err := readBack(t, newSecureClient(t, conn(saslPassword))); err != nil {
				t.Fatalf("with the right password: %v", err)
			}
			wrong := newSecureClient(t, conn("not-"+saslPassword))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := wrong.Partitions(ctx, &spec.KafkaOptions{Topics: []string{"t"}})
			wantConnectionError(t, err, "the brokers refused the SASL "+tc.mechanism+` credentials of user "ingest"`,
				"check sasl.username and sasl.password")
			// The agent's own requests authenticate by themselves.
			_, err = wrong.TopicIDs(ctx, []string{"t"})
			wantConnectionError(t, err, "the brokers refused the SASL "+tc.mechanism)
		})
	}
}

func TestSASLUnsupportedMechanism(t *testing.T) {
	addrs := secureCluster(t, []kfake.Opt{kfake.EnableSASL(), kfake.Superuser(spec.SASLPlain, saslUser, saslPassword)},
		kgo.SASL(plain.Auth{User: saslUser, Pass: saslPassword}.AsMechanism()))
	cl := newSecureClient(t, &spec.Connection{Name: "c", BootstrapServers: addrs, SecurityProtocol: spec.ProtocolSASLPlaintext,
		SASL: &spec.SASL{Mechanism: spec.SASLOAuthBearer, OAuth: &spec.OAuth{Token: "t0k"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := cl.TopicIDs(ctx, []string{"t"})
	wantConnectionError(t, err, "do not enable the SASL mechanism OAUTHBEARER")
}

// tlsFixture is a CA, a broker certificate for the loopback addresses and
// client certificates.
type tlsFixture struct {
	ca, otherCA            *testcerts.CA
	broker, client         *testcerts.Pair
	expiredClient, foreign *testcerts.Pair
}

func newTLSFixture(t *testing.T) *tlsFixture {
	t.Helper()
	must := func(p *testcerts.Pair, err error) *testcerts.Pair {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	ca, err := testcerts.NewCA("kafka test CA")
	if err != nil {
		t.Fatal(err)
	}
	other, err := testcerts.NewCA("other CA")
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-48 * time.Hour)
	return &tlsFixture{
		ca: ca, otherCA: other,
		broker:        must(ca.Issue(testcerts.Loopback("broker"))),
		client:        must(ca.Issue(testcerts.Leaf{CommonName: "agent", Client: true})),
		expiredClient: must(ca.Issue(testcerts.Leaf{CommonName: "agent", Client: true, NotBefore: past, NotAfter: past.Add(time.Hour)})),
		foreign:       must(other.Issue(testcerts.Leaf{CommonName: "agent", Client: true})),
	}
}

// serverConfig is the brokers' TLS configuration; mTLS requires a client
// certificate signed by the CA.
func (f *tlsFixture) serverConfig(t *testing.T, mTLS bool) *tls.Config {
	t.Helper()
	cert, err := tls.X509KeyPair(f.broker.CertPEM, f.broker.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	if mTLS {
		pool := x509.NewCertPool()
		pool.AddCert(f.ca.Cert)
		cfg.ClientAuth, cfg.ClientCAs = tls.RequireAndVerifyClientCert, pool
	}
	return cfg
}

// producerTLS is the franz-go producer's TLS configuration.
func (f *tlsFixture) producerTLS(t *testing.T) kgo.Opt {
	t.Helper()
	cert, err := tls.X509KeyPair(f.client.CertPEM, f.client.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(f.ca.Cert)
	return kgo.DialTLSConfig(&tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}})
}

func TestTLS(t *testing.T) {
	f := newTLSFixture(t)
	addrs := secureCluster(t, []kfake.Opt{kfake.TLS(f.serverConfig(t, false))}, f.producerTLS(t))
	conn := func(tc *spec.TLS) *spec.Connection {
		return &spec.Connection{Name: "c", BootstrapServers: addrs, SecurityProtocol: spec.ProtocolSSL, TLS: tc}
	}
	if err := readBack(t, newSecureClient(t, conn(&spec.TLS{CAPEM: string(f.ca.CertPEM)}))); err != nil {
		t.Fatalf("trusting the CA: %v", err)
	}
	err := readBack(t, newSecureClient(t, conn(&spec.TLS{CAPEM: string(f.otherCA.CertPEM)})))
	wantConnectionError(t, err, "the broker's certificate at "+addrs[0]+" is not signed by a trusted CA", "set tls.ca_pem")
	err = readBack(t, newSecureClient(t, conn(&spec.TLS{CAPEM: string(f.ca.CertPEM), ServerName: "kafka.example.com"})))
	wantConnectionError(t, err, `is not valid for the name "kafka.example.com"`, "set tls.server_name")
	// A broker whose certificate expired.
	past := time.Now().Add(-48 * time.Hour)
	leaf := testcerts.Loopback("broker")
	leaf.NotBefore, leaf.NotAfter = past, past.Add(time.Hour)
	expired, err := f.ca.Issue(leaf)
	if err != nil {
		t.Fatal(err)
	}
	expiredCert, err := tls.X509KeyPair(expired.CertPEM, expired.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	stale := listen(t, func(c net.Conn) {
		_ = tls.Server(c, &tls.Config{Certificates: []tls.Certificate{expiredCert}}).Handshake()
	})
	err = readBack(t, newSecureClient(t, &spec.Connection{Name: "c", BootstrapServers: []string{stale}, SecurityProtocol: spec.ProtocolSSL,
		TLS: &spec.TLS{CAPEM: string(f.ca.CertPEM)}}))
	wantConnectionError(t, err, "the broker's certificate at "+stale+" has expired")
	// A PLAINTEXT listener takes the ClientHello for the start of a
	// request too large to take, and closes; something else answers in
	// clear.
	closing := listen(t, func(c net.Conn) { _, _ = io.ReadFull(c, make([]byte, 4)) })
	err = readBack(t, newSecureClient(t, &spec.Connection{Name: "c", BootstrapServers: []string{closing}, SecurityProtocol: spec.ProtocolSSL}))
	wantConnectionError(t, err, "did not complete the TLS handshake", "check security_protocol")
	answering := listen(t, func(c net.Conn) { _, _ = io.WriteString(c, "HTTP/1.1 400 Bad Request\r\n\r\n") })
	err = readBack(t, newSecureClient(t, &spec.Connection{Name: "c", BootstrapServers: []string{answering}, SecurityProtocol: spec.ProtocolSSL}))
	wantConnectionError(t, err, "does not answer TLS", "check security_protocol")
}

// listen returns the address of a listener that runs serve on each
// connection, then closes it.
func listen(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			serve(c)
			c.Close()
		}
	}()
	return ln.Addr().String()
}

func TestMutualTLS(t *testing.T) {
	f := newTLSFixture(t)
	addrs := secureCluster(t, []kfake.Opt{kfake.TLS(f.serverConfig(t, true))}, f.producerTLS(t))
	conn := func(pair *testcerts.Pair) *spec.Connection {
		tc := &spec.TLS{CAPEM: string(f.ca.CertPEM)}
		if pair != nil {
			tc.CertPEM, tc.KeyPEM = string(pair.CertPEM), string(pair.KeyPEM)
		}
		return &spec.Connection{Name: "c", BootstrapServers: addrs, SecurityProtocol: spec.ProtocolSSL, TLS: tc}
	}
	if err := readBack(t, newSecureClient(t, conn(f.client))); err != nil {
		t.Fatalf("with the client certificate: %v", err)
	}
	for name, pair := range map[string]*testcerts.Pair{"expired": f.expiredClient, "other CA": f.foreign} {
		err := readBack(t, newSecureClient(t, conn(pair)))
		wantConnectionError(t, err, "the broker at "+addrs[0]+" refused the client certificate", "check tls.cert_pem")
		if t.Failed() {
			t.Fatalf("%s client certificate", name)
		}
	}
	err := readBack(t, newSecureClient(t, conn(nil)))
	wantConnectionError(t, err, "requires a client certificate")
}

func TestSASLSSL(t *testing.T) {
	f := newTLSFixture(t)
	addrs := secureCluster(t, []kfake.Opt{kfake.TLS(f.serverConfig(t, false)), kfake.EnableSASL(),
		kfake.Superuser(spec.SASLScram512, saslUser, saslPassword)},
		f.producerTLS(t), kgo.SASL(scram.Auth{User: saslUser, Pass: saslPassword}.AsSha512Mechanism()))
	cl := newSecureClient(t, &spec.Connection{Name: "c", BootstrapServers: addrs, SecurityProtocol: spec.ProtocolSASLSSL,
		SASL: &spec.SASL{Mechanism: spec.SASLScram512, Username: saslUser, Password: saslPassword},
		TLS:  &spec.TLS{CAPEM: string(f.ca.CertPEM)}})
	if err := readBack(t, cl); err != nil {
		t.Fatal(err)
	}
}
