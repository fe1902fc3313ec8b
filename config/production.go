package config

import (
	"slices"
	"strings"
)

// IsProduction reports whether an object (unstructured, as decoded from
// YAML or an admission request) is production: the configured environment
// when set, otherwise any configured label or spec.tags entry whose value is
// a production value. The engine, the lint run and the webhook's mutations
// all ask here so they never disagree.
func (c *Config) IsProduction(object map[string]any) bool {
	if c.Environment != "" {
		return c.isProductionValue(c.Environment)
	}
	metadata, _ := object["metadata"].(map[string]any)
	labels, _ := metadata["labels"].(map[string]any)
	for _, key := range c.Production.Labels {
		if v, ok := labels[key].(string); ok && c.isProductionValue(v) {
			return true
		}
	}
	spec, _ := object["spec"].(map[string]any)
	tags, _ := spec["tags"].(map[string]any)
	for _, key := range c.Production.Tags {
		if v, ok := tags[key].(string); ok && c.isProductionValue(v) {
			return true
		}
	}
	return false
}

func (c *Config) isProductionValue(v string) bool {
	return slices.ContainsFunc(c.Production.Values, func(p string) bool { return strings.EqualFold(p, v) })
}

// WithEnvironment returns a copy of c whose cluster-wide environment is env
// (the --environment flag); an empty env keeps c's own.
func (c *Config) WithEnvironment(env string) *Config {
	out := *c
	if env != "" {
		out.Environment = env
	}
	return &out
}

// Enabled reports whether rule id runs.
func (c *Config) Enabled(id string) bool {
	r, ok := c.Rules[id]
	return !ok || r.Enabled == nil || *r.Enabled
}

// ActionFor is what a finding of rule id does at point, given the rule's
// default severity: the point's configured action, else the configured
// severity, else the default.
func (c *Config) ActionFor(id string, defaultSeverity Action, point EnforcementPoint) Action {
	r := c.Rules[id]
	if a, ok := r.Actions[point]; ok {
		return a
	}
	if r.Severity != "" {
		return r.Severity
	}
	return defaultSeverity
}

// SeverityFor is rule id's severity after configuration, before any
// enforcement point's action.
func (c *Config) SeverityFor(id string, defaultSeverity Action) Action {
	if s := c.Rules[id].Severity; s != "" {
		return s
	}
	return defaultSeverity
}
