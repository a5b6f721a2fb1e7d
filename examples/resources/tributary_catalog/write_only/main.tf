# Terraform or OpenTofu 1.11 and later: the token is write-only, sent to the
# agent on create and update but never stored in the plan or the state.
# Increment token_wo_version to send a new token.
resource "tributary_catalog" "write_only" {
  name = "lake_write_only"

  iceberg_rest = {
    uri              = "https://iceberg.example.com/api/catalog"
    token_wo         = var.iceberg_token
    token_wo_version = 1
  }
}

variable "iceberg_token" {
  type      = string
  sensitive = true
  ephemeral = true
}
