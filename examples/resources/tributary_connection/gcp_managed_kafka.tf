# Google Cloud Managed Service for Apache Kafka: the agent gets OAUTHBEARER
# tokens from its Google application default credentials (its VM's or GKE
# workload identity's service account, GOOGLE_APPLICATION_CREDENTIALS, or
# gcloud's application default login), so the configuration holds no
# secret. The principal needs the Managed Kafka Client role.
resource "tributary_connection" "gcp" {
  name              = "gcp-managed-kafka"
  bootstrap_servers = ["bootstrap.ingest.europe-west1.managedkafka.my-project.cloud.goog:9092"]
  security_protocol = "SASL_SSL"

  sasl = {
    mechanism = "GCP_MANAGED_KAFKA_IAM"
  }
}
