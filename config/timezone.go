package config

import (
	"fmt"
	"time"
	// A timezone must load wherever karpgate runs, also in an image or on a
	// machine without /usr/share/zoneinfo: the tz database is embedded
	// (about 450 KB) and used only when the system has none.
	_ "time/tzdata"
)

// Location is the time zone karpgate displays times in (`timezone`), UTC
// when unset. It changes only how times are written: Karpenter computes
// every budget window in UTC, and so does karpgate.
func (c *Config) Location() *time.Location {
	if c == nil || c.location == nil {
		return time.UTC
	}
	return c.location
}

// ParseTimezone reads a `timezone` value or a --timezone flag: an IANA name
// such as Europe/Paris, or UTC. Empty means UTC.
func ParseTimezone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%q is not a time zone karpgate knows (%w); write an IANA name such as Europe/Paris or America/New_York, or UTC", name, err)
	}
	return loc, nil
}

func (c *Config) validateTimezone() error {
	loc, err := ParseTimezone(c.Timezone)
	if err != nil {
		return c.errorAt("timezone", err.Error())
	}
	c.location = loc
	return nil
}
