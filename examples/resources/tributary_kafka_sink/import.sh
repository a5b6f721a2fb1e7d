# A Kafka sink is imported by its name.
terraform import tributary_kafka_sink.inventory inventory-all
