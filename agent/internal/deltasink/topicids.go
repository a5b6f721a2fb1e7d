package deltasink

import "github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"

// CheckTopicIDs compares the ids of topics, looked up, with those a log's
// configuration, recorded, holds: it returns the configuration keys and
// ids of the topics it does not hold yet, or a
// [*kafka.TopicRecreatedError] for a topic whose id differs from the
// recorded one (it was re-created).
func CheckTopicIDs(recorded, ids map[string]string) (map[string]string, error) {
	unrecorded := map[string]string{}
	for topic, id := range ids {
		switch was := recorded[TopicIDKey(topic)]; was {
		case id:
		case "":
			unrecorded[TopicIDKey(topic)] = id
		default:
			return nil, &kafka.TopicRecreatedError{Topic: topic, Was: was, Now: id}
		}
	}
	return unrecorded, nil
}
