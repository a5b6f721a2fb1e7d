# SASL/OAUTHBEARER with the OAuth 2.0 client-credentials grant: the agent
# gets a token from the identity provider and refreshes it before it
# expires, so no long-lived password reaches Kafka.
resource "tributary_connection" "oauth" {
  name              = "oauth-cluster"
  bootstrap_servers = ["broker1:9093"]
  security_protocol = "SASL_SSL"

  sasl = {
    mechanism = "OAUTHBEARER"
    oauth = {
      token_endpoint_url = "https://login.example.com/oauth2/token"
      client_id          = "tributary-ingest"
      client_secret      = var.oauth_client_secret
      scope              = "kafka"
    }
  }
}
