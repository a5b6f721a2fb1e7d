package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"syscall"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/saslauthenticate"
	"github.com/segmentio/kafka-go/protocol/saslhandshake"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/aws_msk_iam_v2"
	"github.com/segmentio/kafka-go/sasl/plain"
	"github.com/segmentio/kafka-go/sasl/scram"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// This file is how the agent proves who it is to the brokers and checks
// who they are: the TLS of SSL and SASL_SSL connections and the SASL
// mechanisms. NewClient builds both once per connection; every connection
// the agent opens to a broker goes through dial, both those of kafka-go's
// Transport (admin requests) and those the agent speaks Kafka's protocol
// over itself (metadata, fetch).

// handshakeTimeout bounds the TLS handshake and the SASL exchange of one
// connection (which may include getting an OAuth token).
const handshakeTimeout = 15 * time.Second

// dialTimeout bounds a whole dial of kafka-go's Transport: the TCP
// connection, the TLS handshake and the SASL exchange, each bounded
// itself, and the ApiVersions request.
const dialTimeout = 45 * time.Second

// newMechanism returns the SASL mechanism of the connection c, nil for
// none. AWS_MSK_IAM loads the agent's default AWS configuration
// (environment, shared files; credentials are fetched at each
// authentication); AZURE_EVENT_HUBS_ENTRA_ID and GCP_MANAGED_KAFKA_IAM
// are OAUTHBEARER with tokens of the agent's Azure or Google identity.
func newMechanism(ctx context.Context, c *spec.Connection) (sasl.Mechanism, error) {
	s := c.SASL
	if s == nil {
		return nil, nil
	}
	switch s.Mechanism {
	case spec.SASLPlain:
		return plain.Mechanism{Username: s.Username, Password: s.Password}, nil
	case spec.SASLScram256, spec.SASLScram512:
		algo := scram.SHA256
		if s.Mechanism == spec.SASLScram512 {
			algo = scram.SHA512
		}
		m, err := scram.Mechanism(algo, s.Username, s.Password)
		if err != nil {
			return nil, fmt.Errorf("sasl: set up %s: %w", s.Mechanism, err)
		}
		return m, nil
	case spec.SASLOAuthBearer:
		src, err := newTokenSource(s.OAuth)
		if err != nil {
			return nil, err
		}
		return &oauthBearer{src: src}, nil
	case spec.SASLAzureEntraID:
		src, err := newEntraIDToken(c)
		if err != nil {
			return nil, err
		}
		return &oauthBearer{src: src}, nil
	case spec.SASLGCPIAM:
		src, err := newGoogleToken(ctx)
		if err != nil {
			return nil, err
		}
		return &oauthBearer{src: src}, nil
	case spec.SASLAWSMSKIAM:
		cfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("sasl: AWS_MSK_IAM: load the agent's AWS configuration: %w", err)
		}
		m := aws_msk_iam_v2.NewMechanism(cfg)
		if s.AWSRegion != "" {
			m.Region = s.AWSRegion
		}
		if m.Region == "" {
			return nil, errors.New("sasl: AWS_MSK_IAM needs a region: set sasl.aws_region, or AWS_REGION in the agent's environment")
		}
		return m, nil
	}
	return nil, fmt.Errorf("sasl.mechanism: %q is not a SASL mechanism", s.Mechanism)
}

// dialTLS opens a connection to the broker at addr and, for SSL and
// SASL_SSL, completes its TLS handshake. Its errors are explained (see
// [Client.explain]).
func (c *Client) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	raw, err := c.dialer.DialContext(ctx, network, addr)
	if err != nil || c.tls == nil {
		return raw, err
	}
	cfg := c.tls
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	conn := tls.Client(raw, cfg)
	hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	if err := conn.HandshakeContext(hctx); err != nil {
		_ = raw.Close() // the handshake failed: its error is the one that matters
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
			errors.Is(err, context.DeadlineExceeded) {
			// A listener without TLS takes the ClientHello for the start of
			// a huge request: it waits for the rest, or closes.
			return nil, c.connError(err, "the broker at %s did not complete the TLS handshake "+
				"(check security_protocol: the listener may be PLAINTEXT or SASL_PLAINTEXT)", addr)
		}
		return nil, c.fail(addr, err, "TLS handshake with %s", addr)
	}
	return &tlsConn{Conn: conn, addr: addr, client: c}, nil
}

// tlsConn explains the TLS alerts a broker sends after the handshake: with
// TLS 1.3 a broker refuses the client certificate on the first read.
type tlsConn struct {
	*tls.Conn
	addr   string
	client *Client
}

// Read reads from the TLS connection; an alert comes back explained.
func (t *tlsConn) Read(b []byte) (int, error) {
	n, err := t.Conn.Read(b)
	if err != nil && remoteAlert(err) != "" {
		err = t.client.explain(t.addr, err)
	}
	return n, err
}

// Write writes to the TLS connection; an alert comes back explained.
func (t *tlsConn) Write(b []byte) (int, error) {
	n, err := t.Conn.Write(b)
	if err != nil && remoteAlert(err) != "" {
		err = t.client.explain(t.addr, err)
	}
	return n, err
}

// dial opens a connection to the broker at addr ready for Kafka requests:
// TLS as dialTLS, then the SASL exchange of the connection's mechanism. It
// is also the Dial of the client's kafka-go Transport. Its errors are
// explained (see [Client.explain]).
func (c *Client) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := c.dialTLS(ctx, network, addr)
	if err != nil || c.sasl == nil {
		return conn, err
	}
	if err := c.authenticate(ctx, conn, addr); err != nil {
		_ = conn.Close() // authentication failed: its error is the one that matters
		return nil, c.fail(addr, err, "SASL %s authentication with %s", c.mechanism, addr)
	}
	return conn, nil
}

// authenticate runs the SASL exchange of the client's mechanism over conn
// to the broker at addr, as kafka-go's Transport would: a SaslHandshake v1
// request, then SaslAuthenticate v1 requests until the mechanism is done.
// A refusal wraps kafkago.SASLAuthenticationFailed, also when the broker
// tells it by closing the connection.
func (c *Client) authenticate(ctx context.Context, conn net.Conn, addr string) error {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("broker address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return fmt.Errorf("broker address %q: the port is not a number", addr)
	}
	ctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	ctx = sasl.WithMetadata(ctx, &sasl.Metadata{Host: host, Port: port})

	pc := protocol.NewConn(conn, clientID)
	pc.SetVersions(map[protocol.ApiKey]int16{protocol.SaslHandshake: 1, protocol.SaslAuthenticate: 1})
	msg, err := pc.RoundTrip(&saslhandshake.Request{Mechanism: c.sasl.Name()})
	if err != nil {
		return fmt.Errorf("SASL handshake: %w", err)
	}
	hs, ok := msg.(*saslhandshake.Response)
	if !ok {
		return fmt.Errorf("SASL handshake: unexpected response %T", msg)
	}
	if hs.ErrorCode != 0 {
		return fmt.Errorf("SASL handshake (the brokers enable %v): %w", hs.Mechanisms, kafkago.Error(hs.ErrorCode))
	}
	sess, state, err := c.sasl.Start(ctx)
	if err != nil {
		return fmt.Errorf("start SASL %s: %w", c.sasl.Name(), err)
	}
	for done := false; !done; {
		msg, err := pc.RoundTrip(&saslauthenticate.Request{AuthBytes: state})
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			// A broker may tell a failed exchange by closing the connection.
			return kafkago.SASLAuthenticationFailed
		}
		if err != nil {
			return fmt.Errorf("SASL authenticate: %w", err)
		}
		res, ok := msg.(*saslauthenticate.Response)
		if !ok {
			return fmt.Errorf("SASL authenticate: unexpected response %T", msg)
		}
		if res.ErrorCode != 0 {
			if res.ErrorMessage == "" {
				return kafkago.Error(res.ErrorCode)
			}
			return fmt.Errorf("%w: %s", kafkago.Error(res.ErrorCode), res.ErrorMessage)
		}
		if done, state, err = sess.Next(ctx, res.AuthBytes); err != nil {
			return fmt.Errorf("SASL %s: %w", c.sasl.Name(), err)
		}
	}
	return conn.SetDeadline(time.Time{})
}
