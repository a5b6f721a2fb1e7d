package provider_test

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// envTerraformPath names the CLI the acceptance tests run (make test sets
// it to Terraform in one pass, to OpenTofu in the other).
const envTerraformPath = "TF_ACC_TERRAFORM_PATH"

// helmProviderDir is where tools/tools.sh links the helm provider it builds
// (tools/tools.sh helm-provider), relative to this package.
const helmProviderDir = "../.tools/terraform-providers/helm"

// TestAccExampleDeploy runs `validate` and `fmt -check` of the CLI under
// test (Terraform or OpenTofu) on examples/deploy, the module that installs
// the agent's Helm chart with the helm provider and configures the agent
// with this one. Planning it would need a Kubernetes cluster, so the test
// stops at what the CLI and both providers check without one: the
// arguments of every block against the providers' schemas, and this
// provider's static rules (the pipeline's DDL schema, say); then it renders
// the chart with the values the module gives it (helm template, which
// checks them against the chart's values schema). Both providers are
// binaries, found through a dev_overrides CLI configuration, as
// tools/demo.sh does for this one.
func TestAccExampleDeploy(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1 (make test and make testacc do)", resource.EnvTfAcc)
	}
	// Parallel tests start once the sequential ones (some of which change
	// the folder) are over, so the relative paths below hold.
	t.Parallel()
	cli := os.Getenv(envTerraformPath)
	if cli == "" {
		t.Fatalf("%s names no Terraform or OpenTofu CLI", envTerraformPath)
	}
	helm, err := filepath.Abs(helmProviderDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(helm, "terraform-provider-helm")); err != nil {
		t.Fatalf("the helm provider is missing (%v): run tools/tools.sh helm-provider (make tools does)", err)
	}
	plugins := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(plugins, "terraform-provider-tributary"),
		"github.com/tributary-io/terraform-provider-tributary")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the provider: %v\n%s", err, out)
	}
	config := filepath.Join(t.TempDir(), "terraformrc")
	rc := "provider_installation {\n  dev_overrides {\n" +
		"    \"hashicorp/helm\" = " + hclString(helm) + "\n" +
		"    \"tributary-io/tributary\" = " + hclString(plugins) + "\n" +
		"  }\n  direct {}\n}\n"
	if err := os.WriteFile(config, []byte(rc), 0o600); err != nil {
		t.Fatal(err)
	}
	// A copy, so that nothing the CLI writes lands in the example folder.
	work := t.TempDir()
	files, err := filepath.Glob("../examples/deploy/*.tf")
	if err != nil || len(files) == 0 {
		t.Fatalf("no .tf files in examples/deploy: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, filepath.Base(f)), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	token, secretsKey := strings.Repeat("ab", 32), base64.StdEncoding.EncodeToString(make([]byte, 32))
	// run runs the CLI in the copy with input on its standard input, and
	// returns what it printed.
	run := func(input string, args ...string) string {
		t.Helper()
		cmd := exec.Command(cli, args...)
		cmd.Dir = work
		cmd.Stdin = strings.NewReader(input)
		cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+config, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1",
			"TF_VAR_tributary_token="+token, "TF_VAR_secrets_key="+secretsKey, "TF_VAR_agent_ca_certificate=unused",
			`TF_VAR_kafka_bootstrap_servers=["kafka:9092"]`, "TF_VAR_runner_namespace=tfc-agents")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s in examples/deploy: %v\n%s", filepath.Base(cli), strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("", "fmt", "-check", "-diff")
	if out := run("", "validate", "-no-color"); !strings.Contains(out, "Success!") {
		t.Fatalf("%s validate did not say the configuration is valid:\n%s", filepath.Base(cli), out)
	}

	// The values the module gives the chart, rendered by helm with the
	// chart's values schema, which refuses a misspelt or mistyped value.
	t.Run("chart renders", func(t *testing.T) {
		chart, err := filepath.Abs("../deploy/helm/tributary-agent")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(chart, "Chart.yaml")); err != nil {
			t.Skipf("no chart in %s yet: %v", chart, err)
		}
		helmCLI, err := filepath.Abs("../.tools/bin/helm")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(helmCLI); err != nil {
			t.Fatalf("helm is missing (%v): run tools/tools.sh helm (make tools does)", err)
		}
		out := strings.TrimSpace(run("jsonencode(local.chart_values)\n", "console"))
		values, err := strconv.Unquote(out[strings.LastIndex(out, "\n")+1:])
		if err != nil {
			t.Fatalf("console printed no string: %v\n%s", err, out)
		}
		valuesFile := filepath.Join(t.TempDir(), "values.json")
		if err := os.WriteFile(valuesFile, []byte(values), 0o600); err != nil {
			t.Fatal(err)
		}
		// The release and namespace of the module's defaults; the
		// sensitive values as set_sensitive gives them.
		rendered, err := exec.Command(helmCLI, "template", "tributary-agent", chart, "--namespace", "tributary",
			"-f", valuesFile, "--set", "auth.token="+token, "--set", "auth.secretsKey="+secretsKey).CombinedOutput()
		if err != nil {
			t.Fatalf("helm template with the module's values %s: %v\n%s", values, err, rendered)
		}
		// The provider's endpoint is this Service's name.
		if !regexp.MustCompile(`(?m)^kind: Service\nmetadata:\n  name: tributary-agent\n  namespace: tributary$`).Match(rendered) {
			t.Errorf("the chart rendered no Service tributary-agent in namespace tributary:\n%s", rendered)
		}
	})
}
