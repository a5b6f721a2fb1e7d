package provider

import (
	"crypto/tls"
	"crypto/x509"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

// agentTLSConfig is the TLS configuration of the connection to an https://
// agent: cfg's ca_certificate added to the system's trusted CAs, and the
// client certificate of client_certificate and client_key (or their
// environment variables). It is nil when cfg sets none of them, and nil
// with an error in diags when one is invalid.
func agentTLSConfig(cfg *tributaryProviderModel, diags *diag.Diagnostics) *tls.Config {
	caPEM := cfg.CACertificate.ValueString()
	certPEM := valueOrEnv(cfg.ClientCertificate, EnvClientCertificate, "")
	keyPEM := valueOrEnv(cfg.ClientKey, EnvClientKey, "")
	if caPEM == "" && certPEM == "" && keyPEM == "" {
		return nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if caPEM != "" {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM([]byte(caPEM)) {
			diags.AddAttributeError(path.Root("ca_certificate"), "Invalid CA certificate",
				"ca_certificate holds no PEM-encoded certificate; it must contain one or more "+
					"\"-----BEGIN CERTIFICATE-----\" blocks.")
			return nil
		}
		conf.RootCAs = pool
	}
	switch {
	case certPEM == "" && keyPEM == "":
	case keyPEM == "":
		diags.AddAttributeError(path.Root("client_key"), "Missing client key",
			"client_certificate is set without client_key (or "+EnvClientKey+"); set both to authenticate to the "+
				"agent with a client certificate, or neither.")
	case certPEM == "":
		diags.AddAttributeError(path.Root("client_certificate"), "Missing client certificate",
			"client_key is set without client_certificate (or "+EnvClientCertificate+"); set both to authenticate "+
				"to the agent with a client certificate, or neither.")
	default:
		// tls.X509KeyPair's errors name what is wrong, never the key.
		pair, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM))
		if err != nil {
			diags.AddAttributeError(path.Root("client_certificate"), "Invalid client certificate or key",
				"client_certificate and client_key (or "+EnvClientCertificate+" and "+EnvClientKey+") must be a "+
					"PEM certificate and its PEM private key: "+err.Error())
			return nil
		}
		conf.Certificates = []tls.Certificate{pair}
	}
	return conf
}
