package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// saslModel is sasl of a connection. The secrets Password and, in
// oauthModel, ClientSecret have write-only variants (secretAttributes).
type saslModel struct {
	Mechanism         types.String `tfsdk:"mechanism"`
	Username          types.String `tfsdk:"username"`
	Password          types.String `tfsdk:"password"`
	PasswordWO        types.String `tfsdk:"password_wo"`
	PasswordWOVersion types.Int64  `tfsdk:"password_wo_version"`
	OAuth             types.Object `tfsdk:"oauth"`
	AWSRegion         types.String `tfsdk:"aws_region"`
	AzureScope        types.String `tfsdk:"azure_scope"`
}

// oauthModel is sasl.oauth of a connection.
type oauthModel struct {
	TokenEndpointURL      types.String `tfsdk:"token_endpoint_url"`
	ClientID              types.String `tfsdk:"client_id"`
	ClientSecret          types.String `tfsdk:"client_secret"`
	ClientSecretWO        types.String `tfsdk:"client_secret_wo"`
	ClientSecretWOVersion types.Int64  `tfsdk:"client_secret_wo_version"`
	Scope                 types.String `tfsdk:"scope"`
	Token                 types.String `tfsdk:"token"`
	TokenFile             types.String `tfsdk:"token_file"`
}

// tlsModel is tls of a connection.
type tlsModel struct {
	CAPEM              types.String `tfsdk:"ca_pem"`
	CertPEM            types.String `tfsdk:"cert_pem"`
	KeyPEM             types.String `tfsdk:"key_pem"`
	KeystoreP12Base64  types.String `tfsdk:"keystore_p12_base64"`
	KeystorePassword   types.String `tfsdk:"keystore_password"`
	ServerName         types.String `tfsdk:"server_name"`
	InsecureSkipVerify types.Bool   `tfsdk:"insecure_skip_verify"`
}

// saslToSpec converts the sasl object v, recording unknown paths in c.
func saslToSpec(c *specConverter, v types.Object) *spec.SASL {
	return convertObject(c, "sasl", v, func(m *saslModel) *spec.SASL {
		return &spec.SASL{
			Mechanism:  c.str("sasl.mechanism", m.Mechanism),
			Username:   c.str("sasl.username", m.Username),
			Password:   c.secret("sasl.password", m.Password, m.PasswordWO),
			AWSRegion:  c.str("sasl.aws_region", m.AWSRegion),
			AzureScope: c.str("sasl.azure_scope", m.AzureScope),
			OAuth: convertObject(c, "sasl.oauth", m.OAuth, func(o *oauthModel) *spec.OAuth {
				return &spec.OAuth{
					TokenEndpointURL: c.str("sasl.oauth.token_endpoint_url", o.TokenEndpointURL),
					ClientID:         c.str("sasl.oauth.client_id", o.ClientID),
					ClientSecret:     c.secret("sasl.oauth.client_secret", o.ClientSecret, o.ClientSecretWO),
					Scope:            c.str("sasl.oauth.scope", o.Scope),
					Token:            c.str("sasl.oauth.token", o.Token),
					TokenFile:        c.str("sasl.oauth.token_file", o.TokenFile),
				}
			}),
		}
	})
}

// tlsToSpec converts the tls object v, recording unknown paths in c.
func tlsToSpec(c *specConverter, v types.Object) *spec.TLS {
	return convertObject(c, "tls", v, func(m *tlsModel) *spec.TLS {
		insecure := c.boolPtr("tls.insecure_skip_verify", m.InsecureSkipVerify)
		return &spec.TLS{
			CAPEM:              c.str("tls.ca_pem", m.CAPEM),
			CertPEM:            c.str("tls.cert_pem", m.CertPEM),
			KeyPEM:             c.str("tls.key_pem", m.KeyPEM),
			KeystoreP12Base64:  c.str("tls.keystore_p12_base64", m.KeystoreP12Base64),
			KeystorePassword:   c.str("tls.keystore_password", m.KeystorePassword),
			ServerName:         c.str("tls.server_name", m.ServerName),
			InsecureSkipVerify: insecure != nil && *insecure,
		}
	})
}

// saslModelFromSpec is the sasl model of s as the agent stores it, with the
// values the agent does not return from prior; the write-only variants are
// null, as in every state.
func saslModelFromSpec(s *spec.SASL, prior *priorValues) (saslModel, *oauthModel) {
	m := saslModel{
		Mechanism:         types.StringValue(s.Mechanism),
		Username:          stringOrNull(s.Username),
		Password:          prior.secret("sasl.password", s.Password),
		PasswordWO:        types.StringNull(),
		PasswordWOVersion: prior.woVersion("sasl.password"),
		AWSRegion:         stringOrNull(s.AWSRegion),
		AzureScope:        stringOrNull(s.AzureScope),
	}
	o := s.OAuth
	if o == nil {
		return m, nil
	}
	return m, &oauthModel{
		TokenEndpointURL:      stringOrNull(o.TokenEndpointURL),
		ClientID:              stringOrNull(o.ClientID),
		ClientSecret:          prior.secret("sasl.oauth.client_secret", o.ClientSecret),
		ClientSecretWO:        types.StringNull(),
		ClientSecretWOVersion: prior.woVersion("sasl.oauth.client_secret"),
		Scope:                 stringOrNull(o.Scope),
		Token:                 prior.secret("sasl.oauth.token", o.Token),
		TokenFile:             stringOrNull(o.TokenFile),
	}
}

// tlsModelFromSpec is the tls model of t as the agent stores it, with its
// secrets from prior.
func tlsModelFromSpec(t *spec.TLS, prior *priorValues) tlsModel {
	return tlsModel{
		CAPEM:              stringOrNull(t.CAPEM),
		CertPEM:            stringOrNull(t.CertPEM),
		KeyPEM:             prior.secret("tls.key_pem", t.KeyPEM),
		KeystoreP12Base64:  prior.secret("tls.keystore_p12_base64", t.KeystoreP12Base64),
		KeystorePassword:   prior.secret("tls.keystore_password", t.KeystorePassword),
		ServerName:         stringOrNull(t.ServerName),
		InsecureSkipVerify: types.BoolValue(t.InsecureSkipVerify),
	}
}
