// Package metrics exports the loop's per-NodePool status to Prometheus. It is
// a collector over the latest status of each NodePool rather than a set of
// gauges: values that depend on the time (seconds to the next change, age of
// the oldest drift) are computed from the injected clock at scrape time, so
// they stay right between reconciles without the loop polling.
//
// An unlimited allowance (no active budget covers the reason) is +Inf, as is
// the time to a change that does not come within the 7-day horizon.
package metrics
