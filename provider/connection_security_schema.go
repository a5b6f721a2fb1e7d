package provider

import (
	"maps"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
)

// secretAttributes returns the attributes of a secret that has a
// write-only variant: name (sensitive, kept in the state), name_wo
// (write-only) and name_wo_version; their rules are in writeOnlyRules.
// what describes the secret ("the SASL password").
func secretAttributes(name, what string) map[string]schema.Attribute {
	wo, version := name+"_wo", name+"_wo_version"
	return map[string]schema.Attribute{
		name: schema.StringAttribute{
			MarkdownDescription: capitalize(what) + ". Sensitive, and write-only on the agent: its API never returns it, " +
				"so the state keeps the value Terraform last sent, and a change made outside Terraform does not show " +
				"as drift. With Terraform or OpenTofu 1.11 or later prefer `" + wo + "`, which stays out of the state. " +
				"Conflicts with `" + wo + "`.",
			Optional:  true,
			Sensitive: true,
		},
		wo: schema.StringAttribute{
			MarkdownDescription: capitalize(what) + ", write-only (Terraform and OpenTofu 1.11 or later): sent to the " +
				"agent on create and update, never stored in the plan or the state. Terraform cannot see it change: " +
				"bump `" + version + "` to send a new value. Conflicts with `" + name + "`.",
			Optional:  true,
			Sensitive: true,
			WriteOnly: true,
		},
		version: schema.Int64Attribute{
			MarkdownDescription: "Any number, changed (e.g. incremented) whenever `" + wo + "` changes, so that " +
				"Terraform sends the new value. Requires `" + wo + "`.",
			Optional: true,
		},
	}
}

// capitalize upper-cases the first letter of an ASCII description.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// withAttributes merges attribute maps into one.
func withAttributes(parts ...map[string]schema.Attribute) map[string]schema.Attribute {
	out := map[string]schema.Attribute{}
	for _, p := range parts {
		maps.Copy(out, p)
	}
	return out
}

// securityAttributes returns the connection's security_protocol, sasl and
// tls attributes.
func securityAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"security_protocol": schema.StringAttribute{
			MarkdownDescription: "Kafka's `security.protocol`: `PLAINTEXT` (the default when not set), `SSL` (TLS), " +
				"`SASL_PLAINTEXT` (SASL without TLS: the credentials cross the network in the clear with PLAIN) or " +
				"`SASL_SSL` (SASL over TLS). `sasl` requires a `SASL_*` protocol, `tls` requires `SSL` or `SASL_SSL`.",
			Optional: true,
		},
		"sasl": schema.SingleNestedAttribute{
			MarkdownDescription: "How the agent authenticates to the brokers with SASL; requires `security_protocol` " +
				"`SASL_SSL` or `SASL_PLAINTEXT`.",
			Optional: true,
			Attributes: withAttributes(map[string]schema.Attribute{
				"mechanism": schema.StringAttribute{
					MarkdownDescription: "The SASL mechanism: `PLAIN`, `SCRAM-SHA-256`, `SCRAM-SHA-512` (with `username` " +
						"and a password), `OAUTHBEARER` (with `oauth`), or one of the agent's own cloud identities, which need " +
						"`SASL_SSL` and no secret in the configuration: `AWS_MSK_IAM` (Amazon MSK with IAM access control: " +
						"the agent signs with the credentials of its default AWS credential chain, e.g. an instance role), " +
						"`AZURE_EVENT_HUBS_ENTRA_ID` (the Kafka endpoint of Azure Event Hubs: `OAUTHBEARER` with Microsoft Entra " +
						"ID tokens of the agent's default Azure credential chain, e.g. a managed identity; see `azure_scope`) or " +
						"`GCP_MANAGED_KAFKA_IAM` (Google Cloud Managed Service for Apache Kafka: `OAUTHBEARER` with tokens of the " +
						"agent's Google application default credentials, e.g. the service account of its VM or of GKE workload " +
						"identity).",
					Required: true,
				},
				"username": schema.StringAttribute{
					MarkdownDescription: "User name of `PLAIN` and `SCRAM-*`; set with a password.",
					Optional:            true,
				},
				"oauth": schema.SingleNestedAttribute{
					MarkdownDescription: "Where the `OAUTHBEARER` tokens come from: the OAuth 2.0 client-credentials " +
						"grant (`token_endpoint_url`, `client_id`, a client secret, optionally `scope`; the agent " +
						"refreshes the token before it expires), or a static `token`, or a `token_file` on the agent. " +
						"Exactly one of the three.",
					Optional: true,
					Attributes: withAttributes(map[string]schema.Attribute{
						"token_endpoint_url": schema.StringAttribute{
							MarkdownDescription: "Token endpoint of the identity provider, e.g. " +
								"`\"https://login.example.com/oauth2/token\"`.",
							Optional: true,
						},
						"client_id": schema.StringAttribute{
							MarkdownDescription: "Client ID of the client-credentials grant.",
							Optional:            true,
						},
						"scope": schema.StringAttribute{
							MarkdownDescription: "Scope requested with the client-credentials grant, if the identity " +
								"provider needs one.",
							Optional: true,
						},
						"token": schema.StringAttribute{
							MarkdownDescription: "A static bearer token, sensitive; it is not refreshed, so it suits tests " +
								"more than production.",
							Optional:  true,
							Sensitive: true,
						},
						"token_file": schema.StringAttribute{
							MarkdownDescription: "Path, on the agent's machine, of a file holding the bearer token; the " +
								"agent reads it again before each authentication, so another process can rotate it. An absolute " +
								"path in a folder the agent was started with `--oauth-token-dir` for; the agent refuses others.",
							Optional: true,
						},
					}, secretAttributes("client_secret", "the client secret of the client-credentials grant")),
				},
				"aws_region": schema.StringAttribute{
					MarkdownDescription: "Region that `AWS_MSK_IAM` signs for, e.g. `\"eu-west-1\"`. Not set: the region " +
						"of the agent's AWS configuration (`AWS_REGION`).",
					Optional: true,
				},
				"azure_scope": schema.StringAttribute{
					MarkdownDescription: "OAuth scope of the `AZURE_EVENT_HUBS_ENTRA_ID` tokens, e.g. " +
						"`\"https://my-namespace.servicebus.windows.net/.default\"`. Not set: derived from the host of the first " +
						"bootstrap server (`my-namespace.servicebus.windows.net:9093` gives the example), as Event Hubs' own " +
						"Kafka samples do; required when that host is an IP address.",
					Optional: true,
				},
			}, secretAttributes("password", "the password of `PLAIN` and `SCRAM-*`")),
		},
		"tls": schema.SingleNestedAttribute{
			MarkdownDescription: "TLS settings of an `SSL` or `SASL_SSL` connection. Not set: the brokers' " +
				"certificates are checked against the system's trusted CAs and no client certificate is sent.",
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"ca_pem": schema.StringAttribute{
					MarkdownDescription: "PEM certificate(s) of the CA(s) that sign the brokers' certificates, instead " +
						"of the system's trusted CAs, e.g. `file(\"${path.module}/kafka-ca.pem\")`.",
					Optional: true,
				},
				"cert_pem": schema.StringAttribute{
					MarkdownDescription: "PEM client certificate (chain) for brokers that require client " +
						"certificates (mTLS), with `key_pem`.",
					Optional: true,
				},
				"key_pem": schema.StringAttribute{
					MarkdownDescription: "PEM private key of `cert_pem`. Sensitive, and write-only on the agent (kept " +
						"in the state as last sent).",
					Optional:  true,
					Sensitive: true,
				},
				"keystore_p12_base64": schema.StringAttribute{
					MarkdownDescription: "A PKCS#12 key store (`.p12`/`.pfx`) holding the client certificate and key, " +
						"base64-encoded: `filebase64(\"client.p12\")`. The alternative to `cert_pem` and `key_pem`. A " +
						"Java JKS store must be converted first: `keytool -importkeystore -srckeystore client.jks " +
						"-destkeystore client.p12 -deststoretype PKCS12`. Sensitive.",
					Optional:  true,
					Sensitive: true,
				},
				"keystore_password": schema.StringAttribute{
					MarkdownDescription: "Password of `keystore_p12_base64`. Sensitive.",
					Optional:            true,
					Sensitive:           true,
				},
				"server_name": schema.StringAttribute{
					MarkdownDescription: "Host name the brokers' certificates are checked against, instead of the " +
						"host of each broker address.",
					Optional: true,
				},
				"insecure_skip_verify": schema.BoolAttribute{
					MarkdownDescription: "Do not check the brokers' certificates. For tests only: anyone on the " +
						"network path can then read the traffic, credentials included. Default `false`.",
					Optional: true,
					Computed: true,
					Default:  booldefault.StaticBool(false),
				},
			},
		},
	}
}
