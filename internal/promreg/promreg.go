// Package promreg registers collectors that replace an earlier one of the
// same shape: a disruption loop or an audit set up again in one process (a
// loop restarted by serve, tests that start several) takes over the
// metrics, where registering beside the old collector would fail as a
// duplicate and keep exporting a cache that is gone.
package promreg

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Replace registers c in reg, unregistering first a collector that
// describes the same metrics. A different collector under a taken name is
// still an error.
func Replace(reg prometheus.Registerer, c prometheus.Collector) error {
	err := reg.Register(c)
	var existing prometheus.AlreadyRegisteredError
	if !errors.As(err, &existing) {
		return err
	}
	reg.Unregister(existing.ExistingCollector)
	return reg.Register(c)
}
