package provider_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/tributary-io/terraform-provider-tributary/provider"
)

// withoutTerraformBlock removes a top-level `terraform { ... }` block: the
// test harness installs the provider under its own source address.
func withoutTerraformBlock(t *testing.T, hcl string) string {
	t.Helper()
	start := strings.Index(hcl, "\nterraform {")
	if start < 0 {
		return hcl
	}
	depth := 0
	for i := start + 1; i < len(hcl); i++ {
		switch hcl[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return hcl[:start] + hcl[i+1:]
			}
		}
	}
	t.Fatalf("unbalanced terraform block")
	return ""
}

// TestAccExamples plans every example configuration of the docs, so that
// they stay valid. Each case is one or more example folders planned as one
// configuration (a data source example refers to the resource example's
// pipeline); the first folder is the working directory, as it is for
// Terraform, so that schema files resolve.
func TestAccExamples(t *testing.T) {
	// The examples take their secrets from sensitive variables.
	t.Setenv("TF_VAR_schema_registry_api_secret", "example-secret")
	t.Setenv("TF_VAR_kafka_password", "example-password")
	t.Setenv("TF_VAR_oauth_client_secret", "example-client-secret")
	t.Setenv("TF_VAR_iceberg_token", "example-token")
	for _, dirs := range [][]string{
		{"examples/resources/tributary_connection"},
		{"examples/resources/tributary_pipeline"},
		{"examples/resources/tributary_fanout_schema"},
		{"examples/resources/tributary_kafka_sink"},
		{"examples/resources/tributary_catalog"},
		{"examples/resources/tributary_pipeline", "examples/data-sources/tributary_pipeline_status"},
		{"examples/resources/tributary_pipeline", "examples/data-sources/tributary_table"},
		{"examples/quickstart"},
	} {
		t.Run(filepath.Base(dirs[len(dirs)-1]), func(t *testing.T) {
			if dirs[0] == "examples/resources/tributary_connection" {
				certificateVariables(t)
			}
			var config strings.Builder
			for _, dir := range dirs {
				files, err := filepath.Glob(filepath.Join("..", dir, "*.tf"))
				if err != nil || len(files) == 0 {
					t.Fatalf("no .tf files in %s: %v", dir, err)
				}
				for _, f := range files {
					b, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					config.WriteString(withoutTerraformBlock(t, "\n"+string(b)))
				}
			}
			t.Chdir(filepath.Join("..", dirs[0]))
			testPlans(t, config.String())
		})
	}
	// Write-only attributes and ephemeral variables need a recent CLI.
	for _, example := range []string{"tributary_connection/write_only", "tributary_catalog/write_only"} {
		t.Run(example, func(t *testing.T) {
			b, err := os.ReadFile("../examples/resources/" + example + "/main.tf")
			if err != nil {
				t.Fatal(err)
			}
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				TerraformVersionChecks:   []tfversion.TerraformVersionCheck{writeOnlyCLI{}},
				Steps:                    []resource.TestStep{planDiffStep(nil, string(b))},
			})
		})
	}
}

// certificateVariables points the certificate variables of the connection
// examples at test certificates.
func certificateVariables(t *testing.T) {
	t.Helper()
	dir := provider.CertsForTest(t)
	for name, file := range map[string]string{
		"kafka_ca_file": "ca.pem", "kafka_client_cert_file": "client.pem",
		"kafka_client_key_file": "client-key.pem", "kafka_keystore_file": "client.p12",
	} {
		t.Setenv("TF_VAR_"+name, filepath.Join(dir, file))
	}
	t.Setenv("TF_VAR_kafka_keystore_password", provider.P12PasswordForTest)
}
