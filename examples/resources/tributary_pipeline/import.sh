# A pipeline is imported by its name.
terraform import tributary_pipeline.orders orders
