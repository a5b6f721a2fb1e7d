module github.com/tributary-io/terraform-provider-tributary

go 1.26.8

require github.com/hashicorp/go-retryablehttp v0.7.8

require (
	github.com/fatih/color v1.18.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	golang.org/x/sys v0.43.0 // indirect
)
