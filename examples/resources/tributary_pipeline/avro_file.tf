# Plain binary Avro values (no registry framing) written with the schema in
# click.avsc, next to this module. Its top-level fields become columns; a
# record that does not decode goes to _corrupt_record (PERMISSIVE, the
# default).
resource "tributary_pipeline" "clicks" {
  name                = "clicks"
  connection_name     = tributary_connection.main.name
  destination_catalog = "main"
  destination_schema  = "web"

  table {
    destination_table = "clicks"
    connector_options = {
      kafka_options = {
        topics = ["clicks"]
        value_transformer = {
          format       = "AVRO"
          avro_options = { schema_file_path = "${path.module}/click.avsc" }
        }
      }
    }
  }
}
