package membership

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
)

// userDataVersion is the version of the user data this agent writes. A
// leader reading a later version than it knows gives that member nothing
// (it cannot tell what the member can read) and says so in its log; a
// rolling upgrade goes old to new, so the newest agents lead soon.
const userDataVersion = 1

// userData is what a member adds to the consumer protocol's subscription
// for the leader: the partitions it can read (the protocol carries topics
// only, and members may briefly see different partitions while topics are
// discovered) and the generation its owned partitions were assigned in.
type userData struct {
	Version    int              `json:"v"`
	Generation int              `json:"generation"`
	Readable   map[string][]int `json:"readable"`
}

// encodeUserData returns the user data of a member that can read readable
// and owns partitions assigned in generation.
func encodeUserData(readable []kafka.TopicPartition, generation int) ([]byte, error) {
	ud := userData{Version: userDataVersion, Generation: generation, Readable: map[string][]int{}}
	for _, tp := range readable {
		ud.Readable[tp.Topic] = append(ud.Readable[tp.Topic], tp.Partition)
	}
	b, err := json.Marshal(ud)
	if err != nil {
		return nil, fmt.Errorf("encode the member's user data: %w", err)
	}
	return b, nil
}

// decodeClaim returns what member m said in its subscription. When its
// user data cannot be read, the claim has its id and owned partitions but
// nothing readable (so it is assigned nothing), with the error.
func decodeClaim(m kafka.JoinedMember) (claim, error) {
	c := claim{id: m.ID, owned: m.Subscription.Owned}
	var ud userData
	if err := json.Unmarshal(m.Subscription.UserData, &ud); err != nil {
		return c, fmt.Errorf("member %s: decode its user data: %w", m.ID, err)
	}
	if ud.Version != userDataVersion {
		return c, fmt.Errorf("member %s writes user data version %d, this agent knows version %d (upgrade this agent)",
			m.ID, ud.Version, userDataVersion)
	}
	c.generation = ud.Generation
	for topic, parts := range ud.Readable {
		for _, p := range parts {
			c.readable = append(c.readable, kafka.TopicPartition{Topic: topic, Partition: p})
		}
	}
	slices.SortFunc(c.readable, kafka.CompareTopicPartitions)
	return c, nil
}
