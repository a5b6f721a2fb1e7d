# The columns schema inference gave the table "signups" of the pipeline
# "signups" (see the tributary_pipeline examples).
data "tributary_table" "signups" {
  pipeline_name     = tributary_pipeline.signups.name
  destination_table = "signups"
}

output "signups_columns" {
  value = { for c in data.tributary_table.signups.columns : c.name => c.type }
}

# A column inference must have produced, checked in every plan and apply.
check "signups_have_email" {
  assert {
    condition     = contains([for c in data.tributary_table.signups.columns : c.name], "email")
    error_message = "Table signups has no email column yet; its columns are ${join(", ", [for c in data.tributary_table.signups.columns : c.name])}."
  }
}
