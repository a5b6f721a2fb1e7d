package provider_test

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/tributary-io/terraform-provider-tributary/provider"
)

// protoV6ProviderFactories serves the provider in process to the Terraform
// (or OpenTofu) CLI that terraform-plugin-testing runs.
var protoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"tributary": providerserver.NewProtocol6WithError(provider.New("test")()),
}

func TestMain(m *testing.M) {
	code := m.Run()
	stopTestAgent()
	os.Exit(code)
}

// messageRE matches text as Terraform prints it: the CLI wraps long
// diagnostics, so any run of whitespace in text matches any other.
func messageRE(parts ...string) *regexp.Regexp {
	quoted := make([]string, len(parts))
	for i, p := range parts {
		words := strings.Fields(p)
		for j, w := range words {
			words[j] = regexp.QuoteMeta(w)
		}
		quoted[i] = strings.Join(words, `\s+`)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(quoted, `.*`))
}

// hclString quotes s as an HCL string literal.
func hclString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "${", "$${", "%{", "%%{")
	return `"` + r.Replace(s) + `"`
}

// pipelineHCL renders a tributary_pipeline "p" with the given top-level
// attributes (HCL expressions) over the defaults, and table blocks.
func pipelineHCL(attrs map[string]string, tables ...string) string {
	all := map[string]string{
		"name":                `"p1"`,
		"connection_name":     `"c1"`,
		"destination_catalog": `"main"`,
		"destination_schema":  `"demo"`,
	}
	maps.Copy(all, attrs)
	var b strings.Builder
	b.WriteString("resource \"tributary_pipeline\" \"p\" {\n")
	for _, k := range slices.Sorted(maps.Keys(all)) {
		fmt.Fprintf(&b, "  %s = %s\n", k, all[k])
	}
	for _, t := range tables {
		b.WriteString(t)
	}
	b.WriteString("}\n")
	return b.String()
}

// tableHCL renders a table block; kafka is the body of kafka_options and
// extra any more attributes of the block.
func tableHCL(destination, kafka, extra string) string {
	return fmt.Sprintf(`
  table {
    destination_table = %s
    connector_options = {
      kafka_options = {
        %s
      }
    }
    %s
  }
`, hclString(destination), kafka, extra)
}
