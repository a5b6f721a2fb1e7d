package kafka

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"

	kafkago "github.com/segmentio/kafka-go"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// ConnectionError is a failure to connect or authenticate to the brokers
// of a connection whose cause is known: credentials the brokers refused,
// a broker certificate the agent does not trust, a client certificate the
// broker does not trust, a listener that does not speak what the
// connection's security_protocol says. Its message names the connection,
// the cause and the attribute to check; it never holds a secret. It wraps
// the error it explains.
type ConnectionError struct {
	// Connection is the name of the connection.
	Connection string
	// Err is the error explained.
	Err error
	// msg explains Err.
	msg string
}

// Error returns the explanation followed by the error explained.
func (e *ConnectionError) Error() string { return e.msg + ": " + e.Err.Error() }

// Unwrap returns the error explained.
func (e *ConnectionError) Unwrap() error { return e.Err }

// explain returns err as a [*ConnectionError] when its cause is one the
// agent can name, else err itself. addr is the broker the error came from,
// "" when unknown. An err that already is one is returned as it is.
func (c *Client) explain(addr string, err error) error {
	var (
		ce       *ConnectionError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		record   tls.RecordHeaderError
	)
	if err == nil || errors.As(err, &ce) {
		return err
	}
	broker, brokerAt := "the broker", "the broker's certificate"
	if addr != "" {
		broker, brokerAt = "the broker at "+addr, "the broker's certificate at "+addr
	}
	var msg string
	switch {
	case errors.Is(err, kafkago.SASLAuthenticationFailed):
		msg = c.refusedCredentials()
	case errors.Is(err, kafkago.UnsupportedSASLMechanism):
		msg = fmt.Sprintf("the brokers do not enable the SASL mechanism %s (check sasl.mechanism against the listener's sasl.enabled.mechanisms)",
			c.sasl.Name())
	case errors.As(err, &unknown):
		msg = brokerAt + " is not signed by a trusted CA (set tls.ca_pem to the CA that signed it)"
	case errors.As(err, &hostname):
		msg = fmt.Sprintf("%s is not valid for the name %q (set tls.server_name to a name the certificate holds, "+
			"or use the brokers' advertised host names)", brokerAt, hostname.Host)
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		msg = brokerAt + " has expired or is not valid yet (renew the broker's certificate, or check the agent's clock)"
	case errors.As(err, &record):
		msg = broker + " does not answer TLS (check security_protocol: the listener may be PLAINTEXT or SASL_PLAINTEXT)"
	default:
		switch alert := remoteAlert(err); {
		case !certificateAlerts[alert]:
			return err
		case alert == "certificate required" || c.tls == nil || c.tls.GetClientCertificate == nil:
			// Some brokers tell a missing certificate as a bad one.
			msg = broker + " requires a client certificate (set tls.cert_pem and tls.key_pem, or tls.keystore_p12_base64)"
		default:
			msg = broker + " refused the client certificate (expired or not signed by a CA it trusts): check tls.cert_pem"
		}
	}
	return c.connError(err, "%s", msg)
}

// connError returns err explained by format and args, after the
// connection's name.
func (c *Client) connError(err error, format string, args ...any) *ConnectionError {
	return &ConnectionError{Connection: c.name, Err: err, msg: fmt.Sprintf("connection %q: ", c.name) + fmt.Sprintf(format, args...)}
}

// refusedCredentials explains an authentication the brokers refused.
func (c *Client) refusedCredentials() string {
	switch c.mechanism {
	case spec.SASLOAuthBearer:
		return "the brokers refused the SASL OAUTHBEARER token (check sasl.oauth and the token's audience, scope and expiry)"
	case spec.SASLAWSMSKIAM:
		return "the brokers refused the AWS_MSK_IAM signature (check the credentials the agent's AWS credential chain finds, " +
			"their IAM policy's kafka-cluster:Connect, and sasl.aws_region)"
	case spec.SASLAzureEntraID:
		return "the brokers refused the AZURE_EVENT_HUBS_ENTRA_ID token (check the identity the agent's Azure credential chain finds, " +
			"its Azure Event Hubs Data Receiver or Data Owner role on the namespace, and sasl.azure_scope)"
	case spec.SASLGCPIAM:
		return "the brokers refused the GCP_MANAGED_KAFKA_IAM token (check the principal of the agent's Google application default " +
			"credentials and its Managed Kafka Client role on the cluster's project)"
	}
	return fmt.Sprintf("the brokers refused the SASL %s credentials of user %q (check sasl.username and sasl.password)",
		c.mechanism, c.username)
}

// certificateAlerts are the TLS alerts (see remoteAlert) a server sends
// about the client's certificate.
var certificateAlerts = map[string]bool{
	"bad certificate": true, "unsupported certificate": true, "revoked certificate": true, "expired certificate": true,
	"unknown certificate": true, "unknown certificate authority": true, "certificate required": true,
}

// remoteAlert returns the description of the TLS alert the peer sent, as
// Go's tls package words it ("bad certificate"), or "" when err is not
// one. A broker that refuses the client certificate sends such an alert:
// during the handshake with TLS 1.2, on the first read with TLS 1.3.
func remoteAlert(err error) string {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "remote error" || op.Err == nil {
		return ""
	}
	return strings.TrimPrefix(op.Err.Error(), "tls: ")
}

// fail returns err, from the broker at addr ("" when unknown), as a
// [*ConnectionError] when its cause is known (see [Client.explain]), else
// wrapped with what failed, as format and args say.
func (c *Client) fail(addr string, err error, format string, args ...any) error {
	var ce *ConnectionError
	if errors.As(c.explain(addr, err), &ce) {
		return ce
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}
