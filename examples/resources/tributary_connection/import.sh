# A connection is imported by its name.
terraform import tributary_connection.main main-cluster
