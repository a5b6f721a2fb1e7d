package runner

import (
	"github.com/tributary-io/terraform-provider-tributary/agent/spec"
)

// ClientSettings returns the client_properties of ko as the fetchers take
// them (the Kafka client properties a connection or its kafka_options
// give). The spec was validated, so an error is a bug, which
// fails the table.
func ClientSettings(ko *spec.KafkaOptions) (spec.ClientSettings, error) {
	cs, err := ko.ClientSettings()
	if err != nil {
		return cs, Fatal(err)
	}
	return cs, nil
}
