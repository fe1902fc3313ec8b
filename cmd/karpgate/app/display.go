package app

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/spf13/pflag"

	"github.com/karpgate/karpgate/config"
)

// displayFlags choose the time zone a command shows times in: --timezone,
// else the timezone of karpgate.yaml (--config), else UTC. Display only:
// Karpenter computes budget windows in UTC, and so does karpgate.
type displayFlags struct {
	timezone string
	config   string
}

func (d *displayFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&d.timezone, "timezone", "", "IANA time zone to show times in, e.g. Europe/Paris (default: karpgate.yaml's timezone, else UTC); Karpenter computes in UTC")
	fs.StringVar(&d.config, "config", "", "karpgate.yaml to read the display timezone and karpenterVersion from")
}

// location resolves the display zone; errors name the flag or the file.
func (d *displayFlags) location() (*time.Location, error) {
	if d.timezone != "" {
		loc, err := config.ParseTimezone(d.timezone)
		if err != nil {
			return nil, fmt.Errorf("--timezone: %w", err)
		}
		return loc, nil
	}
	if d.config == "" {
		return time.UTC, nil
	}
	cfg, err := config.Load(d.config)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--config %s: no such file", d.config)
	}
	if err != nil {
		return nil, err
	}
	return cfg.Location(), nil
}
