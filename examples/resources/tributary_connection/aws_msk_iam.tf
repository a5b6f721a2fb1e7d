# Amazon MSK with IAM access control: the agent signs with the credentials of
# its default AWS credential chain (environment, shared files, an instance or
# task role), so the configuration holds no secret.
resource "tributary_connection" "msk" {
  name              = "msk-cluster"
  bootstrap_servers = ["b-1.ingest.abc123.c2.kafka.eu-west-1.amazonaws.com:9098"]
  security_protocol = "SASL_SSL"

  sasl = {
    mechanism  = "AWS_MSK_IAM"
    aws_region = "eu-west-1"
  }
}
