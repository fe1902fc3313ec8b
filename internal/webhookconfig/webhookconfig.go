package webhookconfig

import (
	"encoding/json"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/internal/karpenter"
)

// Endpoint is where the API server reaches karpgate, and the CA that signed
// karpgate's serving certificate.
type Endpoint struct {
	// URL is the base of a URL endpoint, like https://127.0.0.1:9443.
	URL string
	// Service is used when URL is empty.
	Service  *admissionregistrationv1.ServiceReference
	CABundle []byte
}

// URLEndpoint is karpgate listening at base, outside the cluster.
func URLEndpoint(base string, caBundle []byte) Endpoint {
	return Endpoint{URL: base, CABundle: caBundle}
}

// ServiceEndpoint is karpgate behind the install manifests' Service in
// namespace. A nil caBundle is for cert-manager's cainjector to fill.
func ServiceEndpoint(namespace string, caBundle []byte) Endpoint {
	return Endpoint{
		Service:  &admissionregistrationv1.ServiceReference{Namespace: namespace, Name: deploy.Name, Port: ptr.To(int32(deploy.ServicePort))},
		CABundle: caBundle,
	}
}

// Policy is what the API server does around one webhook call.
type Policy struct {
	FailurePolicy  admissionregistrationv1.FailurePolicyType
	TimeoutSeconds int32
}

// The default policies. The validating webhook fails closed: a policy gate
// that opens when karpgate is down is no gate (to recover from an outage:
// kubectl delete validatingwebhookconfiguration karpgate). The mutating
// webhook fails open: mutations are conveniences, and the validating
// webhook still judges the object.
var (
	DefaultValidatingPolicy = Policy{FailurePolicy: admissionregistrationv1.Fail, TimeoutSeconds: deploy.WebhookTimeoutSeconds}
	DefaultMutatingPolicy   = Policy{FailurePolicy: admissionregistrationv1.Ignore, TimeoutSeconds: deploy.WebhookTimeoutSeconds}
)

func (e Endpoint) admission(path string) admissionregistrationv1.WebhookClientConfig {
	if e.URL != "" {
		return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(e.URL + path), CABundle: e.CABundle}
	}
	svc := *e.Service
	svc.Path = ptr.To(path)
	return admissionregistrationv1.WebhookClientConfig{Service: &svc, CABundle: e.CABundle}
}

func (e Endpoint) conversion(path string) *apiextensionsv1.WebhookClientConfig {
	if e.URL != "" {
		return &apiextensionsv1.WebhookClientConfig{URL: ptr.To(e.URL + path), CABundle: e.CABundle}
	}
	return &apiextensionsv1.WebhookClientConfig{
		Service:  &apiextensionsv1.ServiceReference{Namespace: e.Service.Namespace, Name: e.Service.Name, Port: e.Service.Port, Path: ptr.To(path)},
		CABundle: e.CABundle,
	}
}

// AdmissionRules match NodePools and EC2NodeClasses at every version, on
// CREATE and UPDATE: karpgate's rules read both API versions. NodeClaims are
// written by Karpenter itself and carry nothing an operator chose; status
// subresources are not matched, so Karpenter's status writes never wait for
// karpgate. They are what the ValidatingAdmissionPolicy matches (at v1);
// the webhooks match RuleOnlyRules too (WebhookRules).
func AdmissionRules() []admissionregistrationv1.RuleWithOperations {
	var out []admissionregistrationv1.RuleWithOperations
	for _, k := range karpenter.Kinds {
		if k.Kind == karpenter.KindNodePool || k.Kind == karpenter.KindEC2NodeClass {
			out = append(out, createUpdate(k))
		}
	}
	return out
}

// RuleOnlyRules match NodeOverlays (karpenter.RuleOnlyKinds) at every
// version, on CREATE and UPDATE, for the webhooks only:
//
//   - The validating webhook judges them by the rules for every kind, users'
//     own among them, so that a rule about NodeOverlays that denies in
//     `karpgate lint` denies at admission too: one rule set. It fails
//     closed, so a karpgate outage blocks NodeOverlay creates and judged
//     updates as it blocks NodePool ones (docs/install.md's table);
//     the judged-change condition still lets Karpenter's own metadata
//     writes and the removal of finalizers through.
//   - The mutating webhook keeps the record of who set each waiver
//     (karpgate.io/waivers-set-by), which the validating webhook requires
//     of every waiver a write adds: without it, no NodeOverlay could carry
//     a waiver. It fails open, so an outage costs NodeOverlay writes at most
//     its timeout.
//   - The ValidatingAdmissionPolicy does not match them: its twins are of
//     built-in rules, and none is about NodeOverlays but the waiver rules'
//     (KG002, KG005, KG006). Users' rules have no twins, so while the
//     webhook fails open (the outage mode) a NodeOverlay is stored
//     unjudged whatever the policy holds; twins judging only its waivers
//     would cost every NodeOverlay write their CEL for that alone.
func RuleOnlyRules() []admissionregistrationv1.RuleWithOperations {
	out := make([]admissionregistrationv1.RuleWithOperations, 0, len(karpenter.RuleOnlyKinds))
	for _, k := range karpenter.RuleOnlyKinds {
		out = append(out, createUpdate(k))
	}
	return out
}

// WebhookRules are what both admission webhooks match on CREATE and
// UPDATE: AdmissionRules and RuleOnlyRules.
func WebhookRules() []admissionregistrationv1.RuleWithOperations {
	return append(AdmissionRules(), RuleOnlyRules()...)
}

// createUpdate matches CREATE and UPDATE of kind k, cluster-scoped, at
// every version (the API server sends each as written).
func createUpdate(k karpenter.Kind) admissionregistrationv1.RuleWithOperations {
	return admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule: admissionregistrationv1.Rule{
			APIGroups: []string{k.Group}, APIVersions: []string{"*"}, Resources: []string{k.Resource},
			Scope: ptr.To(admissionregistrationv1.ClusterScope),
		},
	}
}

// DeleteRules match the DELETE of NodePools, for the validating webhook
// only: it refuses deleting a NodePool a freeze holds. Only v1 is named:
// with matchPolicy Equivalent the API server converts a DELETE made at
// v1beta1 to v1 before it calls karpgate, so the hold record and budgets
// are judged as stored. EC2NodeClasses hold no freeze; deleting one that
// NodePools use is Karpenter's to stop (its termination finalizer).
func DeleteRules() []admissionregistrationv1.RuleWithOperations {
	for _, k := range karpenter.Kinds {
		if k.Kind == karpenter.KindNodePool {
			return []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
				Rule: admissionregistrationv1.Rule{
					APIGroups: []string{k.Group}, APIVersions: []string{karpenter.V1}, Resources: []string{k.Resource},
					Scope: ptr.To(admissionregistrationv1.ClusterScope),
				},
			}}
		}
	}
	return nil
}

// MatchConditions keep from karpgate the writes it has nothing to judge, so
// that a karpgate outage never blocks them: the API server evaluates them
// (CEL) before calling the webhook, and a request that fails one is
// admitted without the call, whatever the failure policy.
//
// judged-change: a CREATE always reaches karpgate; an UPDATE does unless
// all it changes is Karpenter's own keys (the hash annotations,
// karpenter.OwnAnnotations, and its finalizers, karpenter.OwnFinalizers),
// the removal of finalizers, or the fields the API server manages
// (resourceVersion, generation, managedFields). Every other annotation
// counts, because rules read them (KG406 and KG407 read Karpenter's
// compatibility and legacy annotations, user rules anything), and so does
// a write to an object being deleted: an EC2NodeClass held by Karpenter's
// finalizer after `kubectl delete --wait=false` is judged like any other;
// removing finalizers, which deletion waits for, never waits for karpgate.
//
// held-delete: a DELETE reaches karpgate only when the NodePool carries a
// karpgate.io/rollout-guard record, so that deleting any other NodePool
// (or any EC2NodeClass) never waits for karpgate, and a karpgate outage
// blocks no deletion but that of a held NodePool, which the fail-closed
// webhook then refuses as it refuses a freeze's own write.
func MatchConditions() []admissionregistrationv1.MatchCondition {
	return []admissionregistrationv1.MatchCondition{
		{Name: "judged-change", Expression: judgedChange()},
		{Name: "held-delete", Expression: heldDelete()},
	}
}

// heldDelete is true for every operation but a DELETE, and for a DELETE
// of an object with a hold record.
func heldDelete() string {
	return "request.operation != 'DELETE' || (has(oldObject.metadata.annotations) && '" + karpenter.RolloutGuardAnnotation + "' in oldObject.metadata.annotations)"
}

// celList writes strings as a CEL list literal.
func celList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = "'" + s + "'"
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// judgedChange is true for every operation but an UPDATE, and for an
// UPDATE that changes the spec, the labels, an annotation that is not
// Karpenter's own, the owner references, or adds a finalizer that is not
// Karpenter's.
func judgedChange() string {
	annotations := func(o string) string {
		return "(has(" + o + ".metadata.annotations) ? " + o + ".metadata.annotations : {})"
	}
	finalizers := func(o string) string {
		return "(has(" + o + ".metadata.finalizers) ? " + o + ".metadata.finalizers : [])"
	}
	field := func(path string) string {
		return "has(object." + path + ") != has(oldObject." + path + ") || (has(object." + path + ") && object." + path + " != oldObject." + path + ")"
	}
	own, ownFinalizers := celList(karpenter.OwnAnnotations), celList(karpenter.OwnFinalizers)
	return `request.operation != 'UPDATE' ||
` + field("spec") + ` ||
` + field("metadata.labels") + ` ||
` + field("metadata.ownerReferences") + ` ||
` + annotations("object") + `.exists(k, !(k in ` + own + `) && (!(k in ` + annotations("oldObject") + `) || ` + annotations("oldObject") + `[k] != ` + annotations("object") + `[k])) ||
` + annotations("oldObject") + `.exists(k, !(k in ` + own + `) && !(k in ` + annotations("object") + `)) ||
` + finalizers("object") + `.exists(f, !(f in ` + ownFinalizers + `) && !(f in ` + finalizers("oldObject") + `))`
}

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: kind}
}

// Validating is karpgate's ValidatingWebhookConfiguration.
func Validating(e Endpoint, p Policy) *admissionregistrationv1.ValidatingWebhookConfiguration {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   typeMeta("ValidatingWebhookConfiguration"),
		ObjectMeta: metav1.ObjectMeta{Name: deploy.WebhookConfigurationName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    deploy.ValidatingWebhookName,
			ClientConfig:            e.admission(deploy.ValidatePath),
			Rules:                   append(WebhookRules(), DeleteRules()...),
			FailurePolicy:           ptr.To(p.FailurePolicy),
			MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			TimeoutSeconds:          ptr.To(p.TimeoutSeconds),
			AdmissionReviewVersions: []string{"v1"},
			MatchConditions:         MatchConditions(),
		}, {
			Name:         deploy.RolloutPlansWebhookName,
			ClientConfig: e.admission(deploy.ValidateRolloutPlansPath),
			Rules:        RolloutPlanRules(),
			// Ignore: an outage must not block NodePool writes a second
			// time, and a NodePool two plans select is still judged at
			// run time (the oldest plan has it; the other names it).
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
			MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			TimeoutSeconds:          ptr.To(p.TimeoutSeconds),
			AdmissionReviewVersions: []string{"v1"},
			MatchConditions:         []admissionregistrationv1.MatchCondition{{Name: "plan-or-nodepool-labels", Expression: planOrLabels()}},
		}},
	}
}

// RolloutPlanRules match RolloutPlans and NodePools on CREATE and UPDATE:
// the webhook refuses a NodePool in two plans, whichever write would make
// it so.
func RolloutPlanRules() []admissionregistrationv1.RuleWithOperations {
	ops := []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}
	return []admissionregistrationv1.RuleWithOperations{
		{Operations: ops, Rule: admissionregistrationv1.Rule{APIGroups: []string{"karpgate.io"}, APIVersions: []string{"v1alpha1"}, Resources: []string{"rolloutplans"}, Scope: ptr.To(admissionregistrationv1.ClusterScope)}},
		{Operations: ops, Rule: admissionregistrationv1.Rule{APIGroups: []string{karpenter.CoreGroup}, APIVersions: []string{"*"}, Resources: []string{"nodepools"}, Scope: ptr.To(admissionregistrationv1.ClusterScope)}},
	}
}

// planOrLabels calls the rollout plans' webhook for every plan write and
// only for the NodePool writes that can change which plan has it: a
// CREATE, or an UPDATE of its labels. Every other NodePool write (spec
// edits, Karpenter's annotations) never waits for it.
func planOrLabels() string {
	return `request.resource.resource == 'rolloutplans' || request.operation == 'CREATE' ||
has(object.metadata.labels) != has(oldObject.metadata.labels) ||
(has(object.metadata.labels) && object.metadata.labels != oldObject.metadata.labels)`
}

// Mutating is karpgate's MutatingWebhookConfiguration.
func Mutating(e Endpoint, p Policy) *admissionregistrationv1.MutatingWebhookConfiguration {
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta:   typeMeta("MutatingWebhookConfiguration"),
		ObjectMeta: metav1.ObjectMeta{Name: deploy.WebhookConfigurationName},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    deploy.MutatingWebhookName,
			ClientConfig:            e.admission(deploy.MutatePath),
			Rules:                   WebhookRules(),
			FailurePolicy:           ptr.To(p.FailurePolicy),
			MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			TimeoutSeconds:          ptr.To(p.TimeoutSeconds),
			AdmissionReviewVersions: []string{"v1"},
			// karpgate's mutations do not depend on other webhooks' output.
			ReinvocationPolicy: ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
			MatchConditions:    MatchConditions(),
		}},
	}
}

// Conversion is the conversion stanza pointing a Karpenter CRD at karpgate,
// with the review versions the CRD itself lists.
func Conversion(e Endpoint, reviewVersions []string) *apiextensionsv1.CustomResourceConversion {
	return &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             e.conversion(deploy.ConvertPath),
			ConversionReviewVersions: reviewVersions,
		},
	}
}

// ConversionPatch is a merge patch that sets a CRD's conversion stanza.
// envtest drops the conversion webhooks of CRDs it installs, so local runs
// and tests point them at karpgate once the API server is up.
func ConversionPatch(e Endpoint, reviewVersions []string) ([]byte, error) {
	return json.Marshal(map[string]any{"spec": map[string]any{"conversion": Conversion(e, reviewVersions)}})
}
