// Command terraform-provider-tributary is the Terraform provider for
// Tributary: it manages the connections and pipelines of a tributary-agent.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/tributary-io/terraform-provider-tributary/provider"
)

// version is set at build time with -ldflags "-X main.version=1.2.3"
// (goreleaser does this); "dev" marks a local build.
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/tributary-io/tributary",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
