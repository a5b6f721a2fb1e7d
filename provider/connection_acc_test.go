package provider_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
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

// TestAccConnectionSecurityValidation checks the provider's own plan-time
// rules of the write-only secrets that every CLI can plan.
func TestAccConnectionSecurityValidation(t *testing.T) {
	sasl := func(body string) string {
		return secureConnectionHCL("c1", `  security_protocol = "SASL_SSL"
  sasl = {
    mechanism = "SCRAM-SHA-512"
    username  = "ingest"
    `+body+`
  }`)
	}
	runValidationCases(t, []validationCase{
		{"password_wo_version without password_wo", sasl(`password = "p"
    password_wo_version = 1`), "sasl.password_wo_version",
			"password_wo_version versions password_wo, which is not set: set password_wo, or remove password_wo_version"},
		{"client_secret_wo_version without client_secret_wo", secureConnectionHCL("c1", `  security_protocol = "SASL_SSL"
  sasl = {
    mechanism = "OAUTHBEARER"
    oauth = {
      token_endpoint_url       = "https://idp.example/token"
      client_id                = "tributary"
      client_secret            = "s"
      client_secret_wo_version = 2
    }
  }`), "sasl.oauth.client_secret_wo_version", "client_secret_wo_version versions client_secret_wo, which is not set"},
		{"api_secret_wo_version without api_secret_wo", secureConnectionHCL("c1", `  schema_registry = {
    url = "https://registry"
    api_key = "k"
    api_secret = "s"
    api_secret_wo_version = 1
  }`), "schema_registry.api_secret_wo_version", "api_secret_wo_version versions api_secret_wo, which is not set"},
	})
}

// TestAccConnectionWriteOnlyValidation checks the plan-time rules that need
// a write-only value in the configuration, so a CLI that supports them.
func TestAccConnectionWriteOnlyValidation(t *testing.T) {
	sasl := func(body string) string {
		return secureConnectionHCL("c1", `  security_protocol = "SASL_SSL"
  sasl = {
    mechanism = "SCRAM-SHA-512"
    username  = "ingest"
    `+body+`
  }`)
	}
	runValidationCases(t, []validationCase{
		{"password and password_wo", sasl(`password = "p"
    password_wo = "p"
    password_wo_version = 1`), "sasl.password_wo",
			"password_wo and password are mutually exclusive: set password_wo (write-only, kept out of the state; " +
				"Terraform or OpenTofu 1.11 or later) or password (sensitive, kept in the state), not both"},
		{"client_secret and client_secret_wo", secureConnectionHCL("c1", `  security_protocol = "SASL_SSL"
  sasl = {
    mechanism = "OAUTHBEARER"
    oauth = {
      token_endpoint_url = "https://idp.example/token"
      client_id          = "tributary"
      client_secret      = "s"
      client_secret_wo   = "s"
    }
  }`), "sasl.oauth.client_secret_wo", "client_secret_wo and client_secret are mutually exclusive"},
		{"api_secret and api_secret_wo", secureConnectionHCL("c1", `  schema_registry = {
    url = "https://registry"
    api_key = "k"
    api_secret = "s"
    api_secret_wo = "s"
  }`), "schema_registry.api_secret_wo", "api_secret_wo and api_secret are mutually exclusive"},
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
	resource.Test(t, resource.TestCase{
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
