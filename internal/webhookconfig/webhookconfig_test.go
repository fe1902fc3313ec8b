package webhookconfig

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/karpgate/karpgate/internal/deploy"
)

// TestConfigurationsFollowTheServeContract checks the parts of the
// configurations the serve contract fixes, for both kinds of endpoint.
func TestConfigurationsFollowTheServeContract(t *testing.T) {
	ca := []byte("CA")
	tests := []struct {
		name      string
		endpoint  Endpoint
		wantURL   string
		wantSvc   string
		wantConvt string
	}{
		{"url", URLEndpoint("https://127.0.0.1:9443", ca), "https://127.0.0.1:9443/validate", "", "https://127.0.0.1:9443/convert"},
		{"service", ServiceEndpoint(deploy.Namespace, ca), "", "karpgate/karpgate:443/validate", "karpgate/karpgate:443/convert"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Validating(tt.endpoint, DefaultValidatingPolicy).Webhooks[0]
			m := Mutating(tt.endpoint, DefaultMutatingPolicy).Webhooks[0]
			if v.Name != deploy.ValidatingWebhookName || m.Name != deploy.MutatingWebhookName {
				t.Fatalf("names %s %s", v.Name, m.Name)
			}
			if *v.FailurePolicy != "Fail" || *m.FailurePolicy != "Ignore" || *v.SideEffects != "None" || *m.SideEffects != "None" {
				t.Fatalf("failure policies %s %s, side effects %s %s", *v.FailurePolicy, *m.FailurePolicy, *v.SideEffects, *m.SideEffects)
			}
			if *v.TimeoutSeconds != deploy.WebhookTimeoutSeconds || len(v.AdmissionReviewVersions) != 1 || v.AdmissionReviewVersions[0] != "v1" {
				t.Fatalf("timeout %d, review versions %v", *v.TimeoutSeconds, v.AdmissionReviewVersions)
			}
			rules, _ := json.Marshal(v.Rules)
			want := `[{"operations":["CREATE","UPDATE"],"apiGroups":["karpenter.sh"],"apiVersions":["*"],"resources":["nodepools"],"scope":"Cluster"},` +
				`{"operations":["CREATE","UPDATE"],"apiGroups":["karpenter.k8s.aws"],"apiVersions":["*"],"resources":["ec2nodeclasses"],"scope":"Cluster"},` +
				`{"operations":["CREATE","UPDATE"],"apiGroups":["karpenter.sh"],"apiVersions":["*"],"resources":["nodeoverlays"],"scope":"Cluster"}`
			// Deleting a NodePool is judged (a freeze refuses it), at v1:
			// matchPolicy Equivalent converts a v1beta1 DELETE to it.
			deleteRule := `{"operations":["DELETE"],"apiGroups":["karpenter.sh"],"apiVersions":["v1"],"resources":["nodepools"],"scope":"Cluster"}`
			if string(rules) != want+","+deleteRule+"]" || *v.MatchPolicy != admissionregistrationv1.Equivalent {
				t.Fatalf("rules %s (match policy %s)\nwant %s", rules, *v.MatchPolicy, want+","+deleteRule+"]")
			}
			names := func(mcs []admissionregistrationv1.MatchCondition) (out []string) {
				for _, mc := range mcs {
					out = append(out, mc.Name)
				}
				return out
			}
			if got := fmt.Sprint(names(v.MatchConditions), names(m.MatchConditions)); got != "[judged-change held-delete] [judged-change held-delete]" {
				t.Fatalf("match conditions %s; both webhooks must skip what karpgate does not judge", got)
			}
			mrules, _ := json.Marshal(m.Rules)
			if string(mrules) != want+"]" {
				t.Fatalf("mutating rules %s: the mutating webhook has nothing to do on a DELETE", mrules)
			}
			if got := address(v.ClientConfig); got != tt.wantURL+tt.wantSvc {
				t.Fatalf("validating endpoint %s", got)
			}
			conv := Conversion(tt.endpoint, []string{"v1beta1", "v1"}).Webhook
			cc := conv.ClientConfig
			got := ""
			if cc.URL != nil {
				got = *cc.URL
			} else {
				got = fmt.Sprintf("%s/%s:%d%s", cc.Service.Namespace, cc.Service.Name, *cc.Service.Port, *cc.Service.Path)
			}
			if got != tt.wantConvt || string(cc.CABundle) != "CA" || len(conv.ConversionReviewVersions) != 2 {
				t.Fatalf("conversion %s %+v", got, conv)
			}
		})
	}
}

// TestWhatEachConfigurationMatches: both webhooks match NodeOverlays, for
// the rules for every kind (users' own) and the waiver record; the
// ValidatingAdmissionPolicy, whose twins are of built-in rules, does not;
// only the validating webhook matches a DELETE (of a NodePool, at v1).
func TestWhatEachConfigurationMatches(t *testing.T) {
	e := URLEndpoint("https://127.0.0.1:9443", nil)
	describe := func(rules []admissionregistrationv1.RuleWithOperations) (out []string) {
		for _, r := range rules {
			out = append(out, fmt.Sprintf("%v %v/%v %v %s", r.Operations, r.APIGroups, r.APIVersions, r.Resources, *r.Scope))
		}
		return out
	}
	policyRules := func() (out []admissionregistrationv1.RuleWithOperations) {
		for _, r := range AdmissionPolicy(PolicyCEL{}).Spec.MatchConstraints.ResourceRules {
			out = append(out, r.RuleWithOperations)
		}
		return out
	}
	const (
		pools    = "[CREATE UPDATE] [karpenter.sh]/[*] [nodepools] Cluster"
		classes  = "[CREATE UPDATE] [karpenter.k8s.aws]/[*] [ec2nodeclasses] Cluster"
		overlays = "[CREATE UPDATE] [karpenter.sh]/[*] [nodeoverlays] Cluster"
		deletes  = "[DELETE] [karpenter.sh]/[v1] [nodepools] Cluster"
	)
	tests := []struct {
		name  string
		rules []admissionregistrationv1.RuleWithOperations
		want  []string
	}{
		{"validating webhook", Validating(e, DefaultValidatingPolicy).Webhooks[0].Rules, []string{pools, classes, overlays, deletes}},
		{"mutating webhook", Mutating(e, DefaultMutatingPolicy).Webhooks[0].Rules, []string{pools, classes, overlays}},
		{"admission policy", policyRules(), []string{
			"[CREATE UPDATE] [karpenter.sh]/[v1] [nodepools] Cluster",
			"[CREATE UPDATE] [karpenter.k8s.aws]/[v1] [ec2nodeclasses] Cluster",
		}},
		{"RuleOnlyRules", RuleOnlyRules(), []string{overlays}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describe(tt.rules); !slices.Equal(got, tt.want) {
				t.Errorf("rules\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// address is a client config's URL, or namespace/name:port/path.
func address(cc admissionregistrationv1.WebhookClientConfig) string {
	if cc.URL != nil {
		return *cc.URL
	}
	return fmt.Sprintf("%s/%s:%d%s", cc.Service.Namespace, cc.Service.Name, *cc.Service.Port, *cc.Service.Path)
}

func TestConversionPatch(t *testing.T) {
	patch, err := ConversionPatch(URLEndpoint("https://127.0.0.1:1", []byte("CA")), []string{"v1"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"spec":{"conversion":{"strategy":"Webhook","webhook":{"clientConfig":{"url":"https://127.0.0.1:1/convert","caBundle":"Q0E="},"conversionReviewVersions":["v1"]}}}}`
	if string(patch) != want {
		t.Fatalf("got %s\nwant %s", patch, want)
	}
}
