# A fanout schema is imported by its name.
terraform import tributary_fanout_schema.events events-by-type
