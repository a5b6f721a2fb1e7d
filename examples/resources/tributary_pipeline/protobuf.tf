# Plain Protobuf values (no registry framing) of message
# example.web.v1.PageView, described by page_view.desc, the descriptor set
# protoc compiles from page_view.proto next to this module:
#   protoc --include_imports --descriptor_set_out=page_view.desc page_view.proto
resource "tributary_pipeline" "page_view_events" {
  name                = "page-view-events"
  connection_name     = tributary_connection.main.name
  destination_catalog = "main"
  destination_schema  = "web"

  table {
    destination_table = "page_view_events"
    connector_options = {
      kafka_options = {
        topics = ["page-view-events"]
        value_transformer = {
          format = "PROTOBUF"
          protobuf_options = {
            desc_file_path = "${path.module}/page_view.desc"
            message_name   = "example.web.v1.PageView"
          }
        }
      }
    }
  }

  # Protobuf values framed by Confluent's serializer, with the schema in the
  # registry of another connection.
  table {
    destination_table = "checkout_events"
    connector_options = {
      kafka_options = {
        topics = ["checkout-events"]
        value_transformer = {
          format = "PROTOBUF"
          protobuf_options = {
            schema_registry = {
              confluent_options     = { subject = "checkout-events-value" }
              connection_name       = tributary_connection.confluent.name
              protobuf_message_name = "CheckoutEvent" # the subject defines several messages
            }
            recursive_fields_max_depth = 2 # expand recursive fields two levels
          }
        }
      }
    }
  }
}
