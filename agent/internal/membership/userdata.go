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
// rolling upgrade goes old to new, so the newest agents lead soon. Version
// 2 added pressed; a member writing version 1 is read as not pressed.
const userDataVersion = 2

// oldestUserDataVersion is the earliest version this agent reads.
const oldestUserDataVersion = 1

// userData is what a member adds to the consumer protocol's subscription
// for the leader: the partitions it can read (the protocol carries topics
// only, and members may briefly see different partitions while topics are
// discovered), the generation its owned partitions were assigned in, and
// whether its agent is under memory pressure (the leader then gives it no
// partition it does not own already).
// Kafka keeps every member's subscription in the group's metadata record,
// so the partitions go as runs of consecutive numbers, a few bytes a topic
// however many partitions it has.
type userData struct {
	Version    int                 `json:"v"`
	Generation int                 `json:"generation"`
	Readable   map[string][][2]int `json:"readable"`
	Pressed    bool                `json:"pressed,omitempty"`
}

// maxRun bounds a run of partitions a member's user data may say, so that
// a corrupt one cannot make the leader allocate without end (Kafka's own
// limit on a topic's partitions is far lower in practice).
const maxRun = 1 << 20

// encodeUserData returns the user data of a member that can read readable
// (sorted), owns partitions assigned in generation, and is pressed or not.
func encodeUserData(readable []kafka.TopicPartition, generation int, pressed bool) ([]byte, error) {
	ud := userData{Version: userDataVersion, Generation: generation, Readable: map[string][][2]int{}, Pressed: pressed}
	for _, tp := range readable {
		runs := ud.Readable[tp.Topic]
		if n := len(runs); n > 0 && runs[n-1][1] == tp.Partition-1 {
			runs[n-1][1] = tp.Partition
			continue
		}
		ud.Readable[tp.Topic] = append(runs, [2]int{tp.Partition, tp.Partition})
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
	if ud.Version < oldestUserDataVersion || ud.Version > userDataVersion {
		return c, fmt.Errorf("member %s writes user data version %d, this agent knows versions %d to %d (upgrade this agent)",
			m.ID, ud.Version, oldestUserDataVersion, userDataVersion)
	}
	c.generation, c.pressed = ud.Generation, ud.Pressed
	for topic, runs := range ud.Readable {
		for _, run := range runs {
			if run[0] < 0 || run[1] < run[0] || run[1]-run[0] >= maxRun {
				return claim{id: m.ID, owned: m.Subscription.Owned},
					fmt.Errorf("member %s: its user data has the partitions %d to %d of topic %q", m.ID, run[0], run[1], topic)
			}
			for p := run[0]; p <= run[1]; p++ {
				c.readable = append(c.readable, kafka.TopicPartition{Topic: topic, Partition: p})
			}
		}
	}
	slices.SortFunc(c.readable, kafka.CompareTopicPartitions)
	return c, nil
}
