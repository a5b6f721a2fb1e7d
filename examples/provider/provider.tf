# The agent's URL and token. Both can come from the environment instead:
#   export TRIBUTARY_ENDPOINT=http://127.0.0.1:8470
#   export TRIBUTARY_TOKEN="$(cat /var/lib/tributary/token)"
provider "tributary" {
  endpoint = "http://127.0.0.1:8470"
  token    = var.tributary_token
}

variable "tributary_token" {
  type      = string
  sensitive = true
}
