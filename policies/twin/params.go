package twin

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/karpgate/karpgate/budget"
	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/karpenter/release"
	"github.com/karpgate/karpgate/policies"
)

// Actions are the validation actions karpgate's policy is bound with, one
// binding and one parameter object each. A twin applies through the
// binding whose action its rule has at admission.
var Actions = []config.Action{config.Deny, config.Warn, config.Audit}

// Params is the data of the parameter object (a ConfigMap) of the binding
// with action: what the twins need of karpgate.yaml and of the Karpenter
// release judged, as strings, since a ConfigMap holds nothing else. Lists
// are one key per item (production.label.0, production.label.1) unless
// the items cannot hold the separator (@ in alias versions). Keys:
//
//	action                          deny, warn or audit: this binding's action
//	rule.<ID>                       the twin's action at admission; absent when the rule is off
//	known.<ID>                      "true" for every rule of the engine, user rules included
//	unwaivable.<ID>                 why no annotation can waive the rule (policies.Unwaivable)
//	clusterProduction               "true" or "false": karpgate.yaml's environment (or
//	                                --environment) decides for every object; absent otherwise
//	production.valuesFold           the production values as an anchored, case-folding regexp
//	production.valueLower.<n>       each production value, lower case
//	production.label.<n>            each label key holding the environment
//	production.tag.<n>              each EC2NodeClass spec.tags key holding it
//	amis.approved.<family>          amis.approvedAliasVersions[family], joined by @
//	amis.approvedLower.<family>     the same, lower case
//	kubernetes.version              karpgate.yaml's kubernetesVersion; kubernetes.minor its minor
//	approvers.user.<n>              waivers.approvers.users; approvers.group.<n> the groups
//	waivers.sameWrite               "true": a waiver added or changed by a write excuses its
//	                                denials on a production object (waivers.allowSameWrite)
//	karpenter.version               the release judged, for people
//	karpenter.latestOnly.<family>   "true": the release accepts only family@latest
//	karpenter.ssmParameterUnknown   "true": the release's terms have no ssmParameter
//	karpenter.reasons               the budget reasons of the release, space-separated
//	karpenter.reasonIntroduced.<r>  the release line that introduced budget reason r, for
//	                                every reason some release added (v1.15 for Unhealthy)
//	karpenter.resolutionDrift.<f>   the drift reason of EC2NodeClass spec.<f>, which the release
//	                                resolves (AMIDrift for amiSelectorTerms)
//
// Data derived here (the regexp, the lower case copies) is what CEL cannot
// compute the way Go does: strings.EqualFold and strings.ToLower beyond
// ASCII.
func Params(cfg *config.Config, judged release.Judged, catalog policies.Catalog, twins []Twin, action config.Action) map[string]string {
	d := map[string]string{"action": string(action), "karpenter.version": judged.Release.Version.String()}
	for _, t := range twins {
		r := t.Rule
		if cfg.Enabled(r.ID) && r.RunsAt(config.Admission) {
			d["rule."+r.ID] = string(cfg.ActionFor(r.ID, r.DefaultAction(config.Admission), config.Admission))
		}
	}
	var rules policies.Catalog // the engine's own rules: not conftest's (data.karpgate.engine.rule_ids)
	for _, r := range catalog {
		if r.Namespace == "" {
			rules = append(rules, r)
			d["known."+r.ID] = "true"
		}
	}
	for id, why := range policies.Unwaivable(rules, cfg.Waivable) {
		d["unwaivable."+id] = why
	}
	if cfg.Environment != "" {
		d["clusterProduction"] = fmt.Sprint(cfg.IsProduction(map[string]any{}))
	}
	d["production.valuesFold"] = foldPattern(cfg.Production.Values)
	list := func(prefix string, items []string) {
		for i, s := range dedupe(items) {
			d[fmt.Sprintf("%s.%d", prefix, i)] = s
		}
	}
	lower := make([]string, len(cfg.Production.Values))
	for i, v := range cfg.Production.Values {
		lower[i] = strings.ToLower(v)
	}
	list("production.valueLower", lower)
	list("production.label", cfg.Production.Labels)
	list("production.tag", cfg.Production.Tags)
	for family, versions := range cfg.AMIs.ApprovedAliasVersions {
		if len(versions) == 0 {
			continue
		}
		d["amis.approved."+family] = strings.Join(versions, "@")
		d["amis.approvedLower."+family] = strings.ToLower(strings.Join(versions, "@"))
	}
	for _, f := range judged.Facts.Schema.AliasFamilies {
		if f.LatestOnly {
			d["karpenter.latestOnly."+f.Family] = "true"
		}
	}
	if cfg.KubernetesVersion != "" {
		_, minorText, _ := strings.Cut(strings.TrimPrefix(cfg.KubernetesVersion, "v"), ".")
		if minor, err := strconv.Atoi(minorText); err == nil {
			d["kubernetes.version"], d["kubernetes.minor"] = cfg.KubernetesVersion, strconv.Itoa(minor)
		}
	}
	if cfg.SameWriteWaivesDenials() {
		d["waivers.sameWrite"] = "true"
	}
	list("approvers.user", cfg.Waivers.Approvers.Users)
	list("approvers.group", cfg.Waivers.Approvers.Groups)
	reasons := budget.ReasonsNamed(judged.Facts.Schema.BudgetReasons)
	names := make([]string, len(reasons))
	for i, r := range reasons {
		names[i] = string(r)
	}
	d["karpenter.reasons"] = strings.Join(names, " ")
	for reason, line := range release.Introduced()["budgetReasons"] {
		d["karpenter.reasonIntroduced."+reason] = line
	}
	for path, reason := range judged.Facts.ResolutionDrift() {
		if field, ok := strings.CutPrefix(path, "spec."); ok && !strings.Contains(field, ".") {
			d["karpenter.resolutionDrift."+field] = reason
		}
	}
	if fields := judged.Facts.Schema.AMISelectorTermFields; len(fields) > 0 && !slices.Contains(fields, "ssmParameter") {
		d["karpenter.ssmParameterUnknown"] = "true"
	}
	return d
}

// foldPattern matches the strings equal to one of values under
// strings.EqualFold: Go's regexp (?i) folds case with the same Unicode
// tables, rune by rune. No values match nothing.
func foldPattern(values []string) string {
	if len(values) == 0 {
		return `[^\x00-\x{10FFFF}]`
	}
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = regexp.QuoteMeta(v)
	}
	return "(?i)^(?:" + strings.Join(quoted, "|") + ")$"
}

func dedupe(items []string) []string {
	var out []string
	for _, s := range items {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
