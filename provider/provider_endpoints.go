package provider

import (
	"os"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/tributary-io/terraform-provider-tributary/agent/client"
)

// endpointSetting is the agent URLs the provider talks to and where they
// come from, for the diagnostics: the attribute endpoint or endpoints, or
// the environment variable env when the provider block sets neither.
type endpointSetting struct {
	attr string
	env  string
	list []string
}

// listSetting returns the setting of the endpoints attribute l (attr is
// "" when l is null), and whether it is known, with every element.
func listSetting(l types.List) (setting endpointSetting, known bool) {
	if l.IsUnknown() {
		return setting, false
	}
	if l.IsNull() {
		return setting, true
	}
	setting.attr = "endpoints"
	for _, e := range l.Elements() {
		s, _ := e.(types.String)
		if s.IsUnknown() {
			return setting, false
		}
		setting.list = append(setting.list, s.ValueString())
	}
	return setting, true
}

// resolveEndpoints returns the endpoints of a known cfg: its attributes,
// else the environment variable TRIBUTARY_ENDPOINTS (comma-separated) or
// TRIBUTARY_ENDPOINT, else the default endpoint.
func resolveEndpoints(cfg *tributaryProviderModel, diags *diag.Diagnostics) endpointSetting {
	if setting, _ := listSetting(cfg.Endpoints); setting.attr != "" {
		return setting
	}
	if e := cfg.Endpoint.ValueString(); e != "" {
		return endpointSetting{attr: "endpoint", list: []string{e}}
	}
	one, many := os.Getenv(EnvEndpoint), os.Getenv(EnvEndpoints)
	switch {
	case one != "" && many != "":
		diags.AddError("Conflicting endpoint environment variables",
			EnvEndpoint+" and "+EnvEndpoints+" are both set, and the provider block sets neither endpoint nor endpoints: "+
				"unset one of them, or set endpoint or endpoints in the provider block.")
		return endpointSetting{}
	case many != "":
		var list []string
		for e := range strings.SplitSeq(many, ",") {
			if e = strings.TrimSpace(e); e != "" {
				list = append(list, e)
			}
		}
		return endpointSetting{attr: "endpoints", env: EnvEndpoints, list: list}
	case one != "":
		return endpointSetting{attr: "endpoint", env: EnvEndpoint, list: []string{one}}
	}
	return endpointSetting{attr: "endpoint", list: []string{DefaultEndpoint}}
}

// check adds an error for every problem of the endpoints, on the attribute
// that set them (on the element of endpoints at fault), and reports
// whether there was none.
func (s endpointSetting) check(diags *diag.Diagnostics) bool {
	_, problems := client.ParseEndpoints(s.list)
	for _, p := range problems {
		at := path.Root(s.attr)
		detail := p.Error()
		switch {
		case s.env != "":
			detail += " (from the environment variable " + s.env + ", as the provider block sets neither endpoint nor endpoints)"
		case p.Index >= 0 && s.attr == "endpoints":
			at = at.AtListIndex(p.Index)
		}
		if s.attr == "endpoints" {
			detail += ". endpoints lists the URLs of the agents of one cluster, tried in order, e.g. " +
				"[\"https://agent-1:8470\", \"https://agent-2:8470\"]."
		}
		summary := "Invalid provider attribute " + at.String()
		if s.env != "" {
			summary = "Invalid environment variable " + s.env
		}
		diags.AddAttributeError(at, summary, detail)
	}
	return len(problems) == 0
}

// validateEndpoints checks the endpoint attributes of cfg, as far as they
// are known: not both set, and every URL valid.
func validateEndpoints(cfg *tributaryProviderModel, diags *diag.Diagnostics) {
	if !cfg.Endpoint.IsNull() && !cfg.Endpoints.IsNull() {
		diags.AddAttributeError(path.Root("endpoints"), "Invalid provider attribute endpoints",
			"endpoint and endpoints are both set: set endpoint to one agent or to a load balancer in front of the agents, "+
				"or endpoints to the agents of a cluster (tried in order), not both.")
	}
	if e := cfg.Endpoint; !e.IsUnknown() && e.ValueString() != "" {
		endpointSetting{attr: "endpoint", list: []string{e.ValueString()}}.check(diags)
	}
	if setting, known := listSetting(cfg.Endpoints); known && setting.attr != "" {
		setting.check(diags)
	}
}
