package provider_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/tributary-io/terraform-provider-tributary/provider"
)

// writeOnlyCLI skips a test on a CLI without write-only attributes
// (Terraform and OpenTofu before 1.11, such as the Terraform 1.5.7 of
// tools/); make test runs the provider tests under OpenTofu too.
type writeOnlyCLI struct{}

// CheckTerraformVersion implements tfversion.TerraformVersionCheck.
func (writeOnlyCLI) CheckTerraformVersion(_ context.Context, req tfversion.CheckTerraformVersionRequest, resp *tfversion.CheckTerraformVersionResponse) {
	if req.TerraformVersion.LessThan(tfversion.Version1_11_0) {
		resp.Skip = fmt.Sprintf("write-only attributes need Terraform or OpenTofu 1.11 or later, and this CLI is %s: "+
			"the test runs in the OpenTofu pass of make test (TF_ACC_TERRAFORM_PATH=.tools/bin/tofu)", req.TerraformVersion)
	}
}

// secureConnectionHCL is a connection "c" named name with the given
// attributes (HCL) besides name and bootstrap_servers.
func secureConnectionHCL(name, attrs string) string {
	return fmt.Sprintf(`resource "tributary_connection" "c" {
  name              = %s
  bootstrap_servers = [%s]
%s
}
`, hclString(name), hclString(kafkaBootstrap()), attrs)
}

// scramConnectionHCL is a secureConnectionHCL "c1" on SASL_SSL with
// SCRAM-SHA-512 for the user ingest, with body (HCL) in its sasl block.
func scramConnectionHCL(body string) string {
	return secureConnectionHCL("c1", `  security_protocol = "SASL_SSL"
  sasl = {
    mechanism = "SCRAM-SHA-512"
    username  = "ingest"
    `+body+`
  }`)
}

// clientCredentialsConnectionHCL is a secureConnectionHCL "c1" on SASL_SSL
// with OAUTHBEARER and the client-credentials grant (client_secret "s"),
// with body (HCL) in its oauth block.
func clientCredentialsConnectionHCL(body string) string {
	return secureConnectionHCL("c1", `  security_protocol = "SASL_SSL"
  sasl = {
    mechanism = "OAUTHBEARER"
    oauth = {
      token_endpoint_url = "https://idp.example/token"
      client_id          = "tributary"
      client_secret      = "s"
      `+body+`
    }
  }`)
}

// TestAccConnectionSecurityValidation checks the provider's own plan-time
// rules of the write-only secrets that every CLI can plan.
func TestAccConnectionSecurityValidation(t *testing.T) {
	runValidationCases(t, []validationCase{
		{"password_wo_version without password_wo", scramConnectionHCL(`password = "p"
    password_wo_version = 1`), "sasl.password_wo_version",
			"password_wo_version versions password_wo, which is not set: set password_wo, or remove password_wo_version"},
		{"client_secret_wo_version without client_secret_wo", clientCredentialsConnectionHCL(`client_secret_wo_version = 2`),
			"sasl.oauth.client_secret_wo_version", "client_secret_wo_version versions client_secret_wo, which is not set"},
		{"api_secret_wo_version without api_secret_wo", secureConnectionHCL("c1", `  schema_registry = {
    url = "https://registry"
    api_key = "k"
    api_secret = "s"
    api_secret_wo_version = 1
  }`), "schema_registry.api_secret_wo_version", "api_secret_wo_version versions api_secret_wo, which is not set"},
	})
}

// TestAccConnectionSecurityRules checks that the agent's rules of
// security_protocol, sasl and tls (spec.Connection.Validate) fail the plan
// on the attribute to fix.
func TestAccConnectionSecurityRules(t *testing.T) {
	conn := func(protocol, blocks string) string {
		return secureConnectionHCL("c1", "  security_protocol = "+hclString(protocol)+"\n"+blocks)
	}
	scram := func(body string) string {
		return conn("SASL_SSL", "  sasl = { mechanism = \"SCRAM-SHA-512\"\n "+body+" }")
	}
	oauth := func(body string) string {
		return conn("SASL_SSL", "  sasl = {\n mechanism = \"OAUTHBEARER\"\n oauth = { "+body+" }\n }")
	}
	tlsBlock := func(body string) string { return conn("SSL", "  tls = { "+body+" }") }
	runValidationCases(t, []validationCase{
		{"unknown protocol", conn("TLS", ""), "security_protocol", `"TLS" is not a security protocol; use PLAINTEXT (the default), SSL, SASL_PLAINTEXT or SASL_SSL`},
		{"SASL_SSL without sasl", conn("SASL_SSL", ""), "sasl", "security_protocol SASL_SSL needs a sasl block"},
		{"sasl with PLAINTEXT", secureConnectionHCL("c1", `  sasl = { mechanism = "PLAIN", username = "u", password = "p" }`), "sasl",
			"a sasl block needs security_protocol SASL_SSL or SASL_PLAINTEXT (it is PLAINTEXT)"},
		{"tls with SASL_PLAINTEXT", conn("SASL_PLAINTEXT", `  sasl = { mechanism = "PLAIN", username = "u", password = "p" }
  tls = { server_name = "kafka" }`), "tls", "tls settings need security_protocol SSL or SASL_SSL (it is SASL_PLAINTEXT)"},
		{"unknown mechanism", conn("SASL_SSL", `  sasl = { mechanism = "GSSAPI" }`), "sasl.mechanism", `"GSSAPI" is not a SASL mechanism`},
		{"username without password", scram(`username = "u"`), "sasl.password", "username is set without password; set both"},
		{"password without username", scram(`password = "p"`), "sasl.username", "password is set without username; set both"},
		{"SCRAM without credentials", scram(""), "sasl.username", "SASL SCRAM-SHA-512 needs username and password"},
		{"oauth with SCRAM", scram(`username = "u", password = "p", oauth = { token = "t" }`), "sasl.oauth",
			"oauth is only for mechanism OAUTHBEARER (it is SCRAM-SHA-512)"},
		{"OAUTHBEARER without oauth", conn("SASL_SSL", `  sasl = { mechanism = "OAUTHBEARER" }`), "sasl.oauth",
			"mechanism OAUTHBEARER needs an oauth block"},
		{"OAUTHBEARER with a password", conn("SASL_SSL", `  sasl = { mechanism = "OAUTHBEARER", password = "p", oauth = { token = "t" } }`),
			"sasl.password", "password is only for PLAIN and SCRAM mechanisms (it is OAUTHBEARER)"},
		{"oauth without a token source", oauth(`scope = null`), "sasl.oauth",
			"set token_endpoint_url, client_id and client_secret (the client-credentials grant), or token, or token_file"},
		{"oauth with two token sources", oauth(`token = "t", token_file = "/run/token"`), "sasl.oauth",
			"set only one token source: token, token_file are all set"},
		{"client credentials without client_secret", oauth(`token_endpoint_url = "https://idp/token", client_id = "c"`),
			"sasl.oauth.client_secret", "the client-credentials grant needs token_endpoint_url, client_id and client_secret; client_secret is missing"},
		{"token_endpoint_url not a URL", oauth(`token_endpoint_url = "idp/token", client_id = "c", client_secret = "s"`),
			"sasl.oauth.token_endpoint_url", "the value is not an http or https URL"},
		{"AWS_MSK_IAM without TLS", conn("SASL_PLAINTEXT", `  sasl = { mechanism = "AWS_MSK_IAM" }`), "sasl.mechanism",
			"AWS_MSK_IAM needs security_protocol SASL_SSL"},
		{"aws_region with SCRAM", scram(`username = "u", password = "p", aws_region = "eu-west-1"`), "sasl.aws_region",
			"aws_region is only for mechanism AWS_MSK_IAM (it is SCRAM-SHA-512)"},
		{"AZURE_EVENT_HUBS_ENTRA_ID without TLS", conn("SASL_PLAINTEXT", `  sasl = { mechanism = "AZURE_EVENT_HUBS_ENTRA_ID", azure_scope = "https://ns.servicebus.windows.net/.default" }`),
			"sasl.mechanism", "AZURE_EVENT_HUBS_ENTRA_ID needs security_protocol SASL_SSL"},
		{"AZURE_EVENT_HUBS_ENTRA_ID with oauth", conn("SASL_SSL",
			`  sasl = { mechanism = "AZURE_EVENT_HUBS_ENTRA_ID", azure_scope = "https://ns.servicebus.windows.net/.default", oauth = { token = "t" } }`),
			"sasl.oauth", "oauth is only for mechanism OAUTHBEARER; AZURE_EVENT_HUBS_ENTRA_ID takes the agent's Azure credentials"},
		{"AZURE_EVENT_HUBS_ENTRA_ID on an IP address without azure_scope", conn("SASL_SSL", `  sasl = { mechanism = "AZURE_EVENT_HUBS_ENTRA_ID" }`),
			"sasl.azure_scope", "AZURE_EVENT_HUBS_ENTRA_ID needs azure_scope when the first bootstrap server is not a host name"},
		{"azure_scope not https", conn("SASL_SSL", `  sasl = { mechanism = "AZURE_EVENT_HUBS_ENTRA_ID", azure_scope = "ns/.default" }`),
			"sasl.azure_scope", "the value is not an https URL"},
		{"azure_scope with GCP_MANAGED_KAFKA_IAM", conn("SASL_SSL",
			`  sasl = { mechanism = "GCP_MANAGED_KAFKA_IAM", azure_scope = "https://ns.servicebus.windows.net/.default" }`),
			"sasl.azure_scope", "azure_scope is only for mechanism AZURE_EVENT_HUBS_ENTRA_ID (it is GCP_MANAGED_KAFKA_IAM)"},
		{"GCP_MANAGED_KAFKA_IAM without TLS", conn("SASL_PLAINTEXT", `  sasl = { mechanism = "GCP_MANAGED_KAFKA_IAM" }`),
			"sasl.mechanism", "GCP_MANAGED_KAFKA_IAM needs security_protocol SASL_SSL"},
		{"GCP_MANAGED_KAFKA_IAM with a password", conn("SASL_SSL", `  sasl = { mechanism = "GCP_MANAGED_KAFKA_IAM", password = "p" }`),
			"sasl.password", "password is only for PLAIN and SCRAM mechanisms (it is GCP_MANAGED_KAFKA_IAM)"},
		{"ca_pem not PEM", tlsBlock(`ca_pem = "not a certificate"`), "tls.ca_pem", "no PEM certificate found"},
		{"cert_pem without key_pem", tlsBlock(`cert_pem = "x"`), "tls.key_pem", "cert_pem is set without key_pem; set both"},
		{"key_pem without cert_pem", tlsBlock(`key_pem = "x"`), "tls.cert_pem", "key_pem is set without cert_pem; set both"},
		{"key store and PEM pair", tlsBlock(`keystore_p12_base64 = "eA==", cert_pem = "x", key_pem = "y"`), "tls.keystore_p12_base64",
			"set either keystore_p12_base64 or cert_pem and key_pem, not both"},
		{"keystore_password without a key store", tlsBlock(`keystore_password = "p"`), "tls.keystore_password",
			"keystore_password is set without keystore_p12_base64"},
		{"key store not base64", tlsBlock(`keystore_p12_base64 = "not base64!", keystore_password = "p"`), "tls.keystore_p12_base64",
			"the value is not base64"},
		{"registry ca_pem not PEM", secureConnectionHCL("c1", `  schema_registry = { url = "https://registry", ca_pem = "x" }`),
			"schema_registry.ca_pem", "no PEM certificate found"},
	})
}

// TestAccConnectionCertificateRules checks the rules that read real
// certificates and key stores: a key that is not the certificate's, and a
// PKCS#12 store opened with the wrong password.
func TestAccConnectionCertificateRules(t *testing.T) {
	dir := provider.CertsForTest(t)
	file := func(name string) string { return hclString(filepath.Join(dir, name)) }
	tlsBlock := func(body string) string {
		return secureConnectionHCL("c1", "  security_protocol = \"SSL\"\n  tls = { "+body+" }")
	}
	runValidationCases(t, []validationCase{
		{"key of another certificate", tlsBlock(`cert_pem = file(` + file("client.pem") + `), key_pem = file(` + file("expired-key.pem") + `)`),
			"tls.key_pem", "the key does not parse or does not match cert_pem"},
		{"wrong key store password", tlsBlock(`keystore_p12_base64 = filebase64(` + file("client.p12") + `), keystore_password = "wrong"`),
			"tls.keystore_password", "the password does not open the PKCS#12 key store"},
		{"registry ca_pem with http", secureConnectionHCL("c1", `  schema_registry = { url = "http://registry", ca_pem = file(`+file("ca.pem")+`) }`),
			"schema_registry.ca_pem", "ca_pem is only used by an https registry; the url is http (use https, or remove ca_pem)"},
	})
}

// TestAccConnectionWriteOnlyValidation checks the plan-time rules that need
// a write-only value in the configuration, so a CLI that supports them.
func TestAccConnectionWriteOnlyValidation(t *testing.T) {
	runValidationCases(t, []validationCase{
		{"password and password_wo", scramConnectionHCL(`password = "p"
    password_wo = "p"
    password_wo_version = 1`), "sasl.password_wo",
			"password_wo and password are mutually exclusive: set password_wo (write-only, kept out of the state; " +
				"Terraform or OpenTofu 1.11 or later) or password (sensitive, kept in the state), not both"},
		{"client_secret and client_secret_wo", clientCredentialsConnectionHCL(`client_secret_wo = "s"`),
			"sasl.oauth.client_secret_wo", "client_secret_wo and client_secret are mutually exclusive"},
		{"api_secret and api_secret_wo", secureConnectionHCL("c1", `  schema_registry = {
    url = "https://registry"
    api_key = "k"
    api_secret = "s"
    api_secret_wo = "s"
  }`), "schema_registry.api_secret_wo", "api_secret_wo and api_secret are mutually exclusive"},
		// A problem with a secret set through its write-only variant is
		// reported on the variant.
		{"password_wo with OAUTHBEARER", secureConnectionHCL("c1", `  security_protocol = "SASL_SSL"
  sasl = {
    mechanism           = "OAUTHBEARER"
    password_wo         = "p"
    password_wo_version = 1
    oauth               = { token = "t" }
  }`), "sasl.password_wo", "password is only for PLAIN and SCRAM mechanisms (it is OAUTHBEARER)"},
		// The write-only value is the secret for the agent's rules.
		{"api_secret_wo without api_key", secureConnectionHCL("c1", `  schema_registry = {
    url = "https://registry"
    api_secret_wo = "s"
    api_secret_wo_version = 1
  }`), "schema_registry.api_key", "api_secret is set without api_key; set both or neither"},
	}, writeOnlyCLI{})
}

// TestAccConnectionWriteOnly applies a connection whose SASL password and
// registry secret are write-only: the agent receives both (it lists them
// as set), the state holds neither, and bumping a _wo_version sends a new
// value in an update.
func TestAccConnectionWriteOnly(t *testing.T) {
	a := sharedAgent(t)
	name := uniqueName("conn")
	getConn := func(ctx context.Context, n string) error { _, err := a.Client.GetConnection(ctx, n); return err }
	config := func(password string, version int) string {
		return a.providerHCL() + secureConnectionHCL(name, fmt.Sprintf(`  security_protocol = "SASL_SSL"
  sasl = {
    mechanism           = "SCRAM-SHA-512"
    username            = "ingest"
    password_wo         = %s
    password_wo_version = %d
  }
  schema_registry = {
    url                   = "https://registry.example:8081"
    api_key               = "SRKEY"
    api_secret_wo         = "registry-secret-wo"
    api_secret_wo_version = 1
  }`, hclString(password), version))
	}
	// secretsOut checks that the state holds none of secrets, and that the
	// agent has the write-only secrets.
	secretsOut := func(secrets ...string) resource.TestCheckFunc {
		return func(s *terraform.State) error {
			for _, rs := range s.RootModule().Resources {
				for k, v := range rs.Primary.Attributes {
					for _, secret := range secrets {
						if strings.Contains(v, secret) {
							return fmt.Errorf("the state holds a write-only secret in %s.%s", rs.Type, k)
						}
					}
				}
			}
			c, err := a.Client.GetConnection(context.Background(), name)
			if err != nil {
				return err
			}
			for _, p := range []string{"sasl.password", "schema_registry.api_secret"} {
				if !slices.Contains(c.SecretsSet, p) {
					return fmt.Errorf("the agent lists the secrets %v as set; want %s among them", c.SecretsSet, p)
				}
			}
			return nil
		}
	}
	const res = "tributary_connection.c"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{writeOnlyCLI{}},
		CheckDestroy:             checkGone("connection", getConn, name),
		Steps: []resource.TestStep{
			{
				Config: config("first-password-wo", 1),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(res, "sasl.username", "ingest"),
					resource.TestCheckNoResourceAttr(res, "sasl.password_wo"),
					resource.TestCheckNoResourceAttr(res, "sasl.password"),
					resource.TestCheckResourceAttr(res, "sasl.password_wo_version", "1"),
					resource.TestCheckResourceAttr(res, "schema_registry.api_secret_wo_version", "1"),
					secretsOut("first-password-wo", "registry-secret-wo"),
				),
			},
			// A new value alone plans nothing; with a new version it is an update.
			{Config: config("second-password-wo", 1), PlanOnly: true},
			{
				Config:           config("second-password-wo", 2),
				ConfigPlanChecks: expectUpdate(res),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr(res, "sasl.password_wo_version", "2"),
					secretsOut("first-password-wo", "second-password-wo", "registry-secret-wo"),
				),
			},
			importStep(res, name, "sasl.password_wo_version", "schema_registry.api_secret_wo_version"),
		},
	})
}

// TestAccConnectionCloudIdentity creates a connection with the agent's
// Azure identity and a scope of its own, imports it, and switches it to
// the agent's Google identity: the agent keeps sasl.azure_scope, and drops
// it with the mechanism that takes none.
func TestAccConnectionCloudIdentity(t *testing.T) {
	a := sharedAgent(t)
	name := uniqueName("conn")
	getConn := func(ctx context.Context, n string) error { _, err := a.Client.GetConnection(ctx, n); return err }
	cloud := func(sasl string) string {
		return a.providerHCL() + secureConnectionHCL(name, "  security_protocol = \"SASL_SSL\"\n  sasl = { "+sasl+" }")
	}
	const scope = "https://ingest-ns.servicebus.windows.net/.default"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkGone("connection", getConn, name),
		Steps: []resource.TestStep{
			{
				Config: cloud(`mechanism = "AZURE_EVENT_HUBS_ENTRA_ID", azure_scope = "` + scope + `"`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("tributary_connection.c", "sasl.mechanism", "AZURE_EVENT_HUBS_ENTRA_ID"),
					resource.TestCheckResourceAttr("tributary_connection.c", "sasl.azure_scope", scope),
				),
			},
			importStep("tributary_connection.c", name),
			{
				Config:           cloud(`mechanism = "GCP_MANAGED_KAFKA_IAM"`),
				ConfigPlanChecks: expectUpdate("tributary_connection.c"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("tributary_connection.c", "sasl.mechanism", "GCP_MANAGED_KAFKA_IAM"),
					resource.TestCheckNoResourceAttr("tributary_connection.c", "sasl.azure_scope"),
				),
			},
		},
	})
}
