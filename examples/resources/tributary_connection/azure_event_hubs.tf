# The Kafka endpoint of Azure Event Hubs with Microsoft Entra ID: the agent
# gets OAUTHBEARER tokens from its default Azure credential chain (the
# AZURE_* environment variables, workload identity, a managed identity, or
# the Azure CLI's login), so the configuration holds no secret. The token's
# scope is derived from the namespace host below:
# https://ingest-ns.servicebus.windows.net/.default (set azure_scope to
# override it).
resource "tributary_connection" "event_hubs" {
  name              = "event-hubs"
  bootstrap_servers = ["ingest-ns.servicebus.windows.net:9093"]
  security_protocol = "SASL_SSL"

  sasl = {
    mechanism = "AZURE_EVENT_HUBS_ENTRA_ID"
  }
}
