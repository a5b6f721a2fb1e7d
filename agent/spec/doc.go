// Package spec is the single source of truth for what Tributary's objects
// are: a Kafka [Connection], an ingestion [Pipeline] and its [Table]s. The
// types double as the JSON wire format of the agent API, and their Validate
// methods hold every validation rule.
//
// The Terraform provider converts its configuration into these values and
// runs the same Validate at plan time; the agent runs it again on every PUT.
// Every problem is a [FieldError] whose Path names the attribute in Terraform
// syntax (for example `table[0].connector_options.kafka_options.topics`), so
// both sides can point the user at the exact attribute to fix. JSON field names
// are the Terraform attribute names, so a path reads the same in both worlds.
package spec
