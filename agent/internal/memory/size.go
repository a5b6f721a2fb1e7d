package memory

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Size is a number of bytes written as an integer with an optional unit:
// B, KiB, MiB, GiB or TiB (powers of 1024, as GOMEMLIMIT writes them; Ki,
// Mi, Gi and Ti as Kubernetes writes them), or kB, MB, GB or TB (powers of
// 1000). It is a [flag.TextVar] value.
type Size int64

// units are the suffixes a Size may carry, binary units first (String
// prints the largest that divides the size).
var units = []struct {
	suffix string
	factor int64
}{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"Ti", 1 << 40}, {"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}, {"KB", 1e3},
	{"B", 1},
}

// ParseSize reads a size such as "384MiB", "1GiB" or "1048576".
func ParseSize(s string) (Size, error) {
	digits, factor := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(digits, u.suffix); ok {
			digits, factor = strings.TrimSpace(rest), u.factor
			break
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	switch {
	case err != nil || n < 0:
		return 0, fmt.Errorf("size %q: want a whole number of bytes, optionally with a unit such as MiB or GiB", s)
	case n > math.MaxInt64/factor:
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return Size(n * factor), nil
}

// String writes the size in the largest binary unit that divides it, such
// as "384MiB".
func (s Size) String() string {
	for _, u := range units[:4] {
		if s != 0 && int64(s)%u.factor == 0 {
			return strconv.FormatInt(int64(s)/u.factor, 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(s), 10) + "B"
}

// MarshalText writes the size as String does.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a size as ParseSize does.
func (s *Size) UnmarshalText(text []byte) error {
	v, err := ParseSize(string(text))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
