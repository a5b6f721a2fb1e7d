package membership

import (
	"slices"
	"strings"
	"testing"

	"github.com/tributary-io/terraform-provider-tributary/agent/internal/kafka"
)

// TestUserData: what a member can read goes as runs of partitions, and
// comes back as it was with its pressure; user data of version 1 (before
// pressure) is read as not pressed; user data the leader cannot read, or
// of a later version, leaves the member with nothing readable but what it
// owns.
func TestUserData(t *testing.T) {
	readable := append(append(parts("a", 0, 300), parts("b", 2, 4)...), parts("b", 7, 8)...)
	owned := parts("a", 0, 2)
	b, err := encodeUserData(readable, 7, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"readable":{"a":[[0,299]],"b":[[2,3],[7,7]]}`; !strings.Contains(string(b), want) {
		t.Errorf("user data %s, want it to hold %s", b, want)
	}
	c, err := decodeClaim(kafka.JoinedMember{ID: "m", Subscription: kafka.Subscription{Owned: owned, UserData: b}})
	if err != nil {
		t.Fatal(err)
	}
	if c.id != "m" || c.generation != 7 || !slices.Equal(c.readable, readable) || !slices.Equal(c.owned, owned) || !c.pressed {
		t.Errorf("claim %+v, want member m of generation 7 reading %v, owning %v, pressed", c, readable, owned)
	}
	old, err := decodeClaim(kafka.JoinedMember{ID: "m", Subscription: kafka.Subscription{Owned: owned,
		UserData: []byte(`{"v":1,"generation":3,"readable":{"a":[[0,1]]}}`)}})
	if err != nil || old.pressed || old.generation != 3 || !slices.Equal(old.readable, parts("a", 0, 2)) {
		t.Errorf("version 1: claim %+v, error %v; want generation 3 reading a/0 and a/1, not pressed", old, err)
	}
	for _, bad := range []string{`not json`, `{"v":3,"readable":{"a":[[0,1]]}}`, `{"v":0,"readable":{"a":[[0,1]]}}`, `{"v":2,"readable":{"a":[[5,1]]}}`,
		`{"v":1,"readable":{"a":[[0,2000000000]]}}`, `{"v":1,"readable":{"a":[[-1,0]]}}`} {
		c, err := decodeClaim(kafka.JoinedMember{ID: "m", Subscription: kafka.Subscription{Owned: owned, UserData: []byte(bad)}})
		if err == nil || len(c.readable) != 0 || !slices.Equal(c.owned, owned) {
			t.Errorf("%s: claim %+v, error %v; want an error, nothing readable, the owned partitions", bad, c, err)
		}
	}
}
