package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/karpgate/karpgate/internal/karpenter"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/internal/manifest"
)

// APIVersion and Kind optionally head a karpgate.yaml.
const (
	APIVersion = "karpgate.io/v1alpha1"
	Kind       = "Config"
)

// Config is karpgate.yaml. The zero value is valid and means the defaults.
type Config struct {
	APIVersion string `yaml:"apiVersion,omitempty" json:"apiVersion,omitempty"`
	Kind       string `yaml:"kind,omitempty" json:"kind,omitempty"`
	// Environment, when set, is the environment of every object checked
	// (the whole cluster, or the whole CI run); it wins over labels and tags.
	Environment string     `yaml:"environment,omitempty" json:"environment,omitempty"`
	Production  Production `yaml:"production,omitempty" json:"production"`
	// KubernetesVersion is the cluster's target version, "1.33" for
	// example; rules about AMIs that stop at a version read it.
	KubernetesVersion string `yaml:"kubernetesVersion,omitempty" json:"kubernetesVersion,omitempty"`
	// KarpenterVersion, when set ("v1.15"), is the Karpenter release
	// karpgate serve judges objects by, instead of the one the cluster's
	// installed CRDs belong to.
	KarpenterVersion string `yaml:"karpenterVersion,omitempty" json:"karpenterVersion,omitempty"`
	AMIs             AMIs   `yaml:"amis,omitempty" json:"amis"`
	// Mutations switches the admission webhook's built-in mutations.
	Mutations Mutations `yaml:"mutations,omitempty" json:"mutations"`
	// Rules holds per-rule settings keyed by rule ID.
	Rules map[string]RuleSettings `yaml:"rules,omitempty" json:"rules,omitempty"`
	// Waivers governs the karpgate.io/waive-<rule> annotations: who may add
	// or change one, and whether one excuses the write that adds it. Which
	// rules can be waived at all is per rule (rules[ID].waivable).
	Waivers Waivers `yaml:"waivers,omitempty" json:"waivers"`
	// Timezone is the IANA time zone karpgate shows times in (`karpgate
	// status`, `budgets`, `explain`, the SVG chart, Events, /explain).
	// Display only: Karpenter computes budget windows in UTC. Default: UTC.
	Timezone string `yaml:"timezone,omitempty" json:"timezone,omitempty"`

	source   string
	root     *yaml.Node
	location *time.Location
}

// Production says which environment values mean production and where an
// object carries its environment.
type Production struct {
	// Values are the environment values that mean production, compared
	// case-insensitively. Default: prod, production.
	Values []string `yaml:"values,omitempty" json:"values"`
	// Labels are object label keys holding the environment.
	// Default: karpgate.io/environment.
	Labels []string `yaml:"labels,omitempty" json:"labels"`
	// Tags are EC2NodeClass spec.tags keys holding the environment.
	// Default: environment.
	Tags []string `yaml:"tags,omitempty" json:"tags"`
}

// AMIs configures the AMI rules.
type AMIs struct {
	// ApprovedAliasVersions lists per alias family (al2023, bottlerocket,
	// ...) the versions a production EC2NodeClass may pin. A family with no
	// entry is not restricted.
	ApprovedAliasVersions map[string][]string `yaml:"approvedAliasVersions,omitempty" json:"approvedAliasVersions,omitempty"`
}

// Mutations switches the built-in mutations of the admission webhook. Each
// mutation is reported to the user as an admission warning, so nothing
// changes silently.
type Mutations struct {
	// NodeClassRefDefaults fills a missing nodeClassRef group
	// (karpenter.k8s.aws) and kind (EC2NodeClass) on v1 NodePools, which v1
	// requires. Default: true.
	NodeClassRefDefaults *bool `yaml:"nodeClassRefDefaults,omitempty" json:"nodeClassRefDefaults"`
	// PinLatestAlias replaces @latest in the alias of a production
	// EC2NodeClass with the first version amis.approvedAliasVersions lists
	// for its family. Default: false.
	PinLatestAlias bool `yaml:"pinLatestAlias,omitempty" json:"pinLatestAlias"`
}

// RuleSettings overrides one rule's defaults.
type RuleSettings struct {
	// Enabled false turns the rule off everywhere.
	Enabled *bool `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	// Severity replaces the rule's default action at every enforcement point.
	Severity Action `yaml:"severity,omitempty" json:"severity,omitempty"`
	// Actions sets the action at one enforcement point, winning over Severity.
	Actions map[EnforcementPoint]Action `yaml:"actions,omitempty" json:"actions,omitempty"`
	// Waivable false makes every karpgate.io/waive-<rule> annotation for
	// the rule waive nothing (and reports it). Rules that judge waivers
	// themselves are never waivable.
	Waivable *bool `yaml:"waivable,omitempty" json:"waivable,omitempty"`
}

// Default returns the configuration used when no file is given.
func Default() *Config {
	c := &Config{}
	c.applyDefaults()
	return c
}

func (c *Config) applyDefaults() {
	if c.Production.Values == nil {
		c.Production.Values = []string{"prod", "production"}
	}
	if c.Production.Labels == nil {
		c.Production.Labels = []string{karpenter.EnvironmentLabel}
	}
	if c.Production.Tags == nil {
		c.Production.Tags = []string{karpenter.EnvironmentTag}
	}
	if c.Mutations.NodeClassRefDefaults == nil {
		on := true
		c.Mutations.NodeClassRefDefaults = &on
	}
	// Empty lists, not null, so that rules read them without guards.
	if c.Waivers.Approvers.Users == nil {
		c.Waivers.Approvers.Users = []string{}
	}
	if c.Waivers.Approvers.Groups == nil {
		c.Waivers.Approvers.Groups = []string{}
	}
}

// Load reads and validates a karpgate.yaml file.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data)
}

// Parse reads and validates karpgate.yaml content; source names it in errors.
func Parse(source string, data []byte) (*Config, error) {
	c := &Config{source: source}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if len(doc.Content) == 0 {
		c.applyDefaults()
		return c, nil
	}
	c.root = doc.Content[0]
	if err := manifest.CheckAliases(&doc, 0); err != nil {
		e := &Error{Source: source, Message: err.Error()}
		if ae := (*manifest.AliasError)(nil); errors.As(err, &ae) {
			e.Position = ae.Position
		}
		return nil, e
	}
	if err := checkKnownKeys(c.root, configType, ""); err != nil {
		return nil, c.errorAt(err.path, err.msg)
	}
	if err := c.root.Decode(c); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	c.applyDefaults()
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// KubernetesVersionPattern is what kubernetesVersion must match; the JSON
// Schema of karpgate.yaml (config/jsonschema) carries it too.
var KubernetesVersionPattern = regexp.MustCompile(`^v?1\.[0-9]+$`)

func (c *Config) validate() error {
	if c.APIVersion != "" && c.APIVersion != APIVersion {
		return c.errorAt("apiVersion", fmt.Sprintf("%q is not supported; use %s", c.APIVersion, APIVersion))
	}
	if c.Kind != "" && c.Kind != Kind {
		return c.errorAt("kind", fmt.Sprintf("%q is not supported; use %s", c.Kind, Kind))
	}
	if err := c.validateTimezone(); err != nil {
		return err
	}
	if c.KubernetesVersion != "" && !KubernetesVersionPattern.MatchString(c.KubernetesVersion) {
		return c.errorAt("kubernetesVersion", fmt.Sprintf("%q is not a Kubernetes minor version; write it like \"1.33\"", c.KubernetesVersion))
	}
	// Alias families are those of the Karpenter release configured, else
	// of the newest karpgate knows.
	facts := release.Newest().Facts
	if c.KarpenterVersion != "" {
		r, _, err := release.Lookup(c.KarpenterVersion)
		if err != nil {
			return c.errorAt("karpenterVersion", err.Error())
		}
		facts = r.Facts
	}
	for _, family := range sortedKeys(c.AMIs.ApprovedAliasVersions) {
		path := "amis.approvedAliasVersions[" + family + "]"
		alias, ok := facts.AliasFamily(family)
		if !ok {
			return c.errorAt(path, fmt.Sprintf("%q is not an alias family; use one of %s", family, strings.Join(facts.AliasFamilyNames(), ", ")))
		}
		if alias.LatestOnly {
			return c.errorAt(path, fmt.Sprintf("%s aliases can only be @latest, so they have no versions to approve; select %s AMIs by id to pin them", family, family))
		}
		for i, v := range c.AMIs.ApprovedAliasVersions[family] {
			if v == "" || v == "latest" || strings.Contains(v, "@") {
				return c.errorAt(fmt.Sprintf("%s[%d]", path, i), fmt.Sprintf("%q is not a pinned version; write only the part after @, like v20240807", v))
			}
		}
	}
	if c.Mutations.PinLatestAlias && len(c.AMIs.ApprovedAliasVersions) == 0 {
		return c.errorAt("mutations.pinLatestAlias", "there is no version to pin @latest to; list them under amis.approvedAliasVersions, the one to pin first")
	}
	if err := c.validateApprovers(); err != nil {
		return err
	}
	for _, id := range sortedKeys(c.Rules) {
		r := c.Rules[id]
		path := "rules[" + id + "]"
		if r.Severity != "" {
			if _, err := ParseAction(string(r.Severity)); err != nil {
				return c.errorAt(path+".severity", err.Error())
			}
		}
		for _, point := range sortedKeys(r.Actions) {
			if _, err := ParseEnforcementPoint(string(point)); err != nil {
				return c.errorAt(path+".actions["+string(point)+"]", err.Error())
			}
			if _, err := ParseAction(string(r.Actions[point])); err != nil {
				return c.errorAt(path+".actions["+string(point)+"]", err.Error())
			}
		}
	}
	return nil
}

// CheckRuleIDs reports the first rules entry that names no known rule, or
// that makes a rule waivable that can never be; the rule catalog lives with
// the policy engine, so the engine calls this.
func (c *Config) CheckRuleIDs(known func(id string) bool, waivable func(id string) bool) error {
	for _, id := range sortedKeys(c.Rules) {
		if !known(id) {
			return c.errorAt("rules["+id+"]", fmt.Sprintf("%q is not a rule; `karpgate lint --list-rules` shows them", id))
		}
		if w := c.Rules[id].Waivable; w != nil && *w && !waivable(id) {
			return c.errorAt("rules["+id+"].waivable", fmt.Sprintf("%s judges waivers themselves, so no annotation can waive it; remove the setting", id))
		}
	}
	return nil
}

// Error is a problem in karpgate.yaml at a key path.
type Error struct {
	Source string
	manifest.Position
	Path    string
	Message string
}

func (e *Error) Error() string {
	loc := e.Source
	if loc == "" {
		loc = "config"
	}
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", loc, e.Line, e.Column)
	}
	if e.Path == "" {
		return fmt.Sprintf("%s: %s", loc, e.Message)
	}
	return fmt.Sprintf("%s: %s: %s", loc, e.Path, e.Message)
}

func (c *Config) errorAt(path, msg string) error {
	e := &Error{Source: c.source, Path: path, Message: msg}
	if c.root != nil {
		e.Position = manifest.Locate(c.root, manifest.ParseFieldPath(path))
	}
	return e
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
