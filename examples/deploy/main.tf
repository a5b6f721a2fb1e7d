# Deploys the tributary-agent Helm chart into a Kubernetes cluster and
# configures the agent it runs, in one workspace: `terraform apply` installs
# the chart, waits until the agent answers /healthz, then creates a Kafka
# connection and a pipeline on it.
#
# The agent serves HTTPS with a certificate from a kubernetes.io/tls Secret
# (a cert-manager Certificate's, say), whose names must include
# <release_name>.<namespace>.svc. Terraform reaches it at that name, so the
# run must execute inside the cluster: a Terraform Cloud agent pool whose
# agent runs there, or a machine with the cluster's DNS. From outside, expose
# the Service (an Ingress or a LoadBalancer, with client certificates) and set
# the endpoint to that address instead.
#
# One token and one secrets key go to both sides: to the chart, which keeps
# them in a Secret the agent mounts, and to the provider (the token).

terraform {
  required_providers {
    # The blocks below are those of the helm provider 2.x; 3.x turned
    # `kubernetes` and `set_sensitive` into attributes
    # (`kubernetes = { ... }`, `set_sensitive = [{ ... }]`).
    helm = {
      source  = "hashicorp/helm"
      version = "~> 2.17"
    }
    tributary = {
      source = "tributary-io/tributary"
    }
  }
}

variable "namespace" {
  description = "Namespace of the release, created if missing."
  type        = string
  default     = "tributary"
}

variable "release_name" {
  description = "Name of the release, and of its Service and StatefulSet (the chart's fullnameOverride)."
  type        = string
  default     = "tributary-agent"
}

variable "kube_config_path" {
  description = "Kubernetes configuration file; null for the helm provider's default, or the service account of a run inside the cluster."
  type        = string
  default     = null
}

variable "tributary_token" {
  description = "The agent's API token, 32 bytes or more: `openssl rand -hex 32`."
  type        = string
  sensitive   = true
  validation {
    condition     = length(trimspace(var.tributary_token)) >= 32
    error_message = "The token must be at least 32 bytes long; make one with `openssl rand -hex 32`."
  }
}

variable "secrets_key" {
  description = "Key that encrypts the connections' secrets in the agent's state: 32 random bytes in base64, `openssl rand -base64 32`. Keep it: the stored connections cannot be read without it."
  type        = string
  sensitive   = true
  validation {
    condition     = can(regex("^[A-Za-z0-9+/]{43}=$", trimspace(var.secrets_key)))
    error_message = "The secrets key must be 32 random bytes in base64 (44 characters); make one with `openssl rand -base64 32`."
  }
}

variable "tls_secret_name" {
  description = "kubernetes.io/tls Secret (tls.crt, tls.key, ca.crt) the agent serves HTTPS with, such as a cert-manager Certificate's."
  type        = string
  default     = "tributary-agent-tls"
}

variable "agent_ca_certificate" {
  description = "PEM of the CA that signs the agent's certificate (the Secret's ca.crt), for the provider to trust."
  type        = string
}

variable "warehouse" {
  description = "Where the tables go: an object store URL such as s3://lake/raw?region=eu-west-1, or empty for the agent's volume."
  type        = string
  default     = ""
}

variable "object_store_secret" {
  description = "Secret whose keys become the agent's environment (AWS_ACCESS_KEY_ID, ...), or empty for workload identity."
  type        = string
  default     = ""
}

variable "runner_namespace" {
  description = "Namespace of the Terraform Cloud agent that runs this workspace: only it (and the release's own namespace) may reach the API. Empty: no NetworkPolicy."
  type        = string
  default     = ""
}

variable "memory" {
  description = "Memory of the agent's container; the chart gives the same to --memory-limit."
  type        = string
  default     = "1Gi"
}

variable "kafka_bootstrap_servers" {
  description = "Bootstrap servers of the Kafka cluster to read."
  type        = list(string)
}

locals {
  # The Service the chart makes is named after the release (fullnameOverride),
  # so the endpoint is known before anything exists and the provider below is
  # configured at plan time, in a single apply. On the first plan the agent
  # is not there yet: the provider's static checks run, and the pipeline's
  # dry run on the agent is skipped with a warning. An endpoint taken from a
  # resource instead (a LoadBalancer's address) is unknown until that resource
  # exists, and needs two applies: `terraform apply -target=helm_release.agent`,
  # then `terraform apply`.
  endpoint = "https://${var.release_name}.${var.namespace}.svc:8470"

  # The chart's values but the sensitive ones (set_sensitive below).
  chart_values = {
    fullnameOverride = var.release_name
    warehouse        = var.warehouse
    objectStore      = { existingSecret = var.object_store_secret }
    tls              = { enabled = true, secretName = var.tls_secret_name }
    networkPolicy = {
      enabled = var.runner_namespace != ""
      ingressFrom = [
        { podSelector = {} },
        { namespaceSelector = { matchLabels = { "kubernetes.io/metadata.name" = var.runner_namespace } } },
      ]
    }
    resources = {
      requests = { cpu = "250m", memory = var.memory }
      limits   = { memory = var.memory }
    }
  }
}

provider "helm" {
  kubernetes {
    config_path = var.kube_config_path
  }
}

resource "helm_release" "agent" {
  name             = var.release_name
  namespace        = var.namespace
  create_namespace = true
  # A local checkout of the chart; a packaged one works the same way
  # (repository, chart and version).
  chart = "${path.module}/../../deploy/helm/tributary-agent"
  # The release is ready once the agent's readiness probe (/healthz)
  # passes: the connection and pipeline below are created after that.
  wait    = true
  timeout = 600

  values = [yamlencode(local.chart_values)]

  # set_sensitive keeps them out of the plan's output; the chart writes them
  # to the Secret the agent mounts. Terraform's state holds them all the
  # same, as it holds every sensitive value: keep it where only the platform
  # team reads it (or make the Secret yourself and pass auth.existingSecret).
  set_sensitive {
    name  = "auth.token"
    value = var.tributary_token
  }
  set_sensitive {
    name  = "auth.secretsKey"
    value = var.secrets_key
  }
}

provider "tributary" {
  endpoint       = local.endpoint
  token          = var.tributary_token
  ca_certificate = var.agent_ca_certificate
}

resource "tributary_connection" "kafka" {
  name              = "kafka"
  bootstrap_servers = var.kafka_bootstrap_servers

  # The provider's configuration does not refer to the release, so the order
  # is said here: the agent must run before anything is sent to it (and, on
  # destroy, the pipelines go before the agent).
  depends_on = [helm_release.agent]
}

resource "tributary_pipeline" "orders" {
  name                = "orders"
  connection_name     = tributary_connection.kafka.name
  destination_catalog = "main"
  destination_schema  = "raw"

  table {
    destination_table = "orders"
    connector_options = {
      kafka_options = {
        topics          = ["orders"]
        starting_offset = "earliest"
        key_transformer = { format = "STRING" }
        value_transformer = {
          format = "JSON"
          json_options = {
            schema = "order_id BIGINT, customer STRING, amount DECIMAL(12,2), ts TIMESTAMP"
          }
        }
      }
    }
  }
}

output "endpoint" {
  description = "The agent's API, inside the cluster."
  value       = local.endpoint
}
