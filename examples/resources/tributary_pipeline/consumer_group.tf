# The consumer group that mirrors a table's offsets for Kafka's lag tools.
resource "tributary_pipeline" "billing" {
  name                = "billing"
  connection_name     = tributary_connection.main.name
  destination_catalog = "main"
  destination_schema  = "billing"

  table {
    destination_table = "invoices"
    connector_options = {
      kafka_options = {
        topics = ["invoices"]
        # The group is "team-billing.billing.main.billing.invoices":
        # the prefix, then <pipeline>.<catalog>.<schema>.<table>.
        group_id_prefix = "team-billing."
        # Do not start while another consumer is a member of that group.
        check_duplicated_group_id = true
        value_transformer         = { format = "STRING" }
      }
    }
  }
}
