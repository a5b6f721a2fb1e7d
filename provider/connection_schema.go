package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// connectionResourceSchema is the schema of tributary_connection, version 0.
func connectionResourceSchema() schema.Schema {
	return schema.Schema{
		Version: 0,
		MarkdownDescription: "A connection is how the agent reaches one Kafka cluster and, optionally, its " +
			"Confluent-compatible schema registry. Pipelines refer to it by `name`. Without `security_protocol`, " +
			"`sasl` or `tls` the agent connects with PLAINTEXT. Secrets are write-only on the agent: its API never " +
			"returns them, so Terraform keeps the values it last sent (or, with the `_wo` attributes, none), and " +
			"after an import they must be set in the configuration and applied.",
		Attributes: withAttributes(securityAttributes(), map[string]schema.Attribute{
			"id":   idAttribute(),
			"name": nameAttribute("connection", ""),
			"bootstrap_servers": schema.ListAttribute{
				MarkdownDescription: "`host:port` addresses of the brokers to bootstrap from, like Kafka's " +
					"`bootstrap.servers`, e.g. `[\"broker1:9092\", \"broker2:9092\"]`. At least one.",
				Required:    true,
				ElementType: types.StringType,
			},
			"schema_registry": schema.SingleNestedAttribute{
				MarkdownDescription: "The cluster's Confluent-compatible schema registry (Confluent Schema Registry, " +
					"Redpanda, Karapace, Apicurio's Confluent API), which Avro and Protobuf transformers with a " +
					"`schema_registry` use. Not set: no registry.",
				Optional: true,
				Attributes: withAttributes(map[string]schema.Attribute{
					"url": schema.StringAttribute{
						MarkdownDescription: "Base URL of the registry, `http` or `https`, without credentials, query or " +
							"fragment, e.g. `\"https://registry.example.com\"` or, for Apicurio, " +
							"`\"http://apicurio:8080/apis/ccompat/v7\"`.",
						Required: true,
					},
					"api_key": schema.StringAttribute{
						MarkdownDescription: "API key (user name) sent with the API secret as HTTP Basic credentials. " +
							"Set both or neither.",
						Optional: true,
					},
					"ca_pem": schema.StringAttribute{
						MarkdownDescription: "PEM certificate(s) of the CA(s) that sign an `https` registry's " +
							"certificate, instead of the system's trusted CAs.",
						Optional: true,
					},
				}, secretAttributes("api_secret", "the API secret (password) sent with `api_key`")),
			},
		}),
	}
}
