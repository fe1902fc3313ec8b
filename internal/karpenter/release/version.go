package release

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a Karpenter release version. Patch is -1 when only a minor was
// named ("v1.15").
type Version struct {
	Major, Minor, Patch int
}

// ParseVersion reads "v1.15.1", "1.15.1", "v1.15" or "1.15".
func ParseVersion(s string) (Version, error) {
	trimmed := strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.Split(trimmed, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("%q is not a Karpenter version: want vMAJOR.MINOR or vMAJOR.MINOR.PATCH, such as v1.15 or v1.15.1", s)
	}
	nums := []int{0, 0, -1}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || p == "" || (len(p) > 1 && p[0] == '0') {
			return Version{}, fmt.Errorf("%q is not a Karpenter version: %q is not a number; want vMAJOR.MINOR or vMAJOR.MINOR.PATCH, such as v1.15 or v1.15.1", s, p)
		}
		nums[i] = n
	}
	return Version{Major: nums[0], Minor: nums[1], Patch: nums[2]}, nil
}

// MustParseVersion is ParseVersion for constants; it panics on a typo.
func MustParseVersion(s string) Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// String spells the version as Karpenter tags it: v1.15.1, or v1.15.
func (v Version) String() string {
	if v.Patch < 0 {
		return fmt.Sprintf("v%d.%d", v.Major, v.Minor)
	}
	return fmt.Sprintf("v%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// MinorString is the release line, such as v1.15.
func (v Version) MinorString() string { return fmt.Sprintf("v%d.%d", v.Major, v.Minor) }

// Compare orders versions: -1, 0 or 1. A version without a patch sorts
// before every patch of its minor.
func (v Version) Compare(w Version) int {
	for _, d := range [][2]int{{v.Major, w.Major}, {v.Minor, w.Minor}, {v.Patch, w.Patch}} {
		switch {
		case d[0] < d[1]:
			return -1
		case d[0] > d[1]:
			return 1
		}
	}
	return 0
}

// AtLeast reports whether v is the release line or patch s or later, for
// questions such as "does this release serve only v1" (AtLeast("v1.1")).
func (v Version) AtLeast(s string) bool {
	w := MustParseVersion(s)
	if w.Patch < 0 {
		return v.Compare(Version{Major: w.Major, Minor: w.Minor, Patch: 0}) >= 0 || (v.Major == w.Major && v.Minor == w.Minor)
	}
	return v.Compare(w) >= 0
}

// MarshalText writes the version as String does.
func (v Version) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText reads the version as ParseVersion does.
func (v *Version) UnmarshalText(b []byte) error {
	parsed, err := ParseVersion(string(b))
	if err != nil {
		return err
	}
	*v = parsed
	return nil
}
