# The progress of the pipeline "orders" (see the tributary_pipeline example).
data "tributary_pipeline_status" "orders" {
  name = tributary_pipeline.orders.name
}

output "orders_rows" {
  value = { for t in data.tributary_pipeline_status.orders.tables : t.destination_table => t.rows }
}

# A failed table shows as a failed check in every plan and apply, and in
# Terraform Cloud's health assessments, rather than as drift of the pipeline.
# A data source scoped to the check block turns an unreachable agent into a
# warning.
check "orders_not_failed" {
  data "tributary_pipeline_status" "orders_check" {
    name = tributary_pipeline.orders.name
  }

  assert {
    condition = data.tributary_pipeline_status.orders_check.state != "FAILED"
    error_message = join("\n", [
      for t in data.tributary_pipeline_status.orders_check.tables :
      "table ${t.destination_table}: ${t.last_error}" if t.state == "FAILED"
    ])
  }
}
