# A catalog is imported by its name. The agent never returns the token: set
# it in the configuration and apply.
terraform import tributary_catalog.lake lake
