resource "tributary_connection" "main" {
  name              = "main-cluster"
  bootstrap_servers = ["broker1:9092", "broker2:9092"]
}
