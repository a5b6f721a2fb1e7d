package provider_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
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
// they stay valid. The examples' folder is the working directory, as it is
// for Terraform, so that schema files resolve.
func TestAccExamples(t *testing.T) {
	for _, dir := range []string{
		"examples/resources/tributary_connection",
		"examples/resources/tributary_pipeline",
		"examples/quickstart",
	} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			abs := filepath.Join("..", dir)
			files, err := filepath.Glob(filepath.Join(abs, "*.tf"))
			if err != nil || len(files) == 0 {
				t.Fatalf("no .tf files in %s: %v", dir, err)
			}
			var config strings.Builder
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				config.WriteString(withoutTerraformBlock(t, "\n"+string(b)))
			}
			t.Chdir(abs)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:             config.String(),
					PlanOnly:           true,
					ExpectNonEmptyPlan: true,
				}},
			})
		})
	}
}
