# Tables of this pipeline go to S3 instead of the agent's warehouse, under
# s3://acme-lake/raw/main/web/<table>/. The agent allows that root, with the
# bucket's options, and takes credentials from its own environment:
#
#   AWS_PROFILE=ingest tributary-agent serve --data-dir /var/lib/tributary \
#     --warehouse-allow 's3://acme-lake/raw?region=eu-west-1'
resource "tributary_pipeline" "page_views" {
  name                = "page-views"
  connection_name     = tributary_connection.main.name
  destination_catalog = "main"
  destination_schema  = "web"
  storage_location    = "s3://acme-lake/raw"

  table {
    destination_table = "page_views"
    connector_options = {
      kafka_options = {
        topics            = ["page-views"]
        value_transformer = { format = "STRING" }
      }
    }
  }
}
