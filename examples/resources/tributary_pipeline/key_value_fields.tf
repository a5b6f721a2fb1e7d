# Keys and values both parsed into columns, where both declare "id".
resource "tributary_pipeline" "shipments" {
  name                = "shipments"
  connection_name     = tributary_connection.main.name
  destination_catalog = "main"
  destination_schema  = "logistics"

  # With a prefix the key's fields are the columns key_id and key_region,
  # beside the value's id, region and weight_kg.
  table {
    destination_table = "shipments"
    connector_options = {
      kafka_options = {
        topics = ["shipments"]
        key_transformer = {
          format       = "JSON"
          json_options = { schema = "id BIGINT, region STRING" }
        }
        value_transformer = {
          format       = "JSON"
          json_options = { schema = "id BIGINT, region STRING, weight_kg DOUBLE" }
        }
        key_fields_prefix = "key_"
      }
    }
  }

  # Without a prefix the names collide; the value's id and region win and
  # the key's are not decoded. The default, EXCEPTION, fails the plan.
  table {
    destination_table = "shipments_flat"
    connector_options = {
      kafka_options = {
        topics = ["shipments"]
        key_transformer = {
          format       = "JSON"
          json_options = { schema = "id BIGINT, region STRING" }
        }
        value_transformer = {
          format       = "JSON"
          json_options = { schema = "id BIGINT, region STRING, weight_kg DOUBLE" }
        }
        duplicate_field_strategy = "PREFER_VALUE"
      }
    }
  }
}
