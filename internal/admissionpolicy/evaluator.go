package admissionpolicy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/warning"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Evaluator judges requests by a fixed set of policies, bindings and
// parameter objects. It is safe for concurrent use.
type Evaluator struct {
	hooks      []validating.PolicyHook
	dispatcher generic.Dispatcher[validating.PolicyHook]
	objects    admission.ObjectInterfaces
}

// Params are the objects bindings may name in paramRef, as unstructured
// objects with apiVersion, kind and metadata.
type Params []map[string]any

// New compiles policies and pairs each with its bindings. A binding of a
// policy that is not given is ignored, as the API server ignores it.
func New(policies []*admissionregistrationv1.ValidatingAdmissionPolicy, bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding, params Params) (*Evaluator, error) {
	e := &Evaluator{objects: admission.NewObjectInterfacesFromScheme(runtime.NewScheme())}
	informers := map[schema.GroupVersionKind]*paramInformer{}
	for _, p := range policies {
		hook := validating.PolicyHook{Policy: p, Evaluator: compile(p)}
		for _, b := range bindings {
			if b.Spec.PolicyName == p.Name {
				hook.Bindings = append(hook.Bindings, b)
			}
		}
		if pk := p.Spec.ParamKind; pk != nil {
			gv, err := schema.ParseGroupVersion(pk.APIVersion)
			if err != nil {
				return nil, fmt.Errorf("policy %s: paramKind.apiVersion: %w", p.Name, err)
			}
			gvk := gv.WithKind(pk.Kind)
			inf, ok := informers[gvk]
			if !ok {
				if inf, err = newParamInformer(gvk, params); err != nil {
					return nil, err
				}
				informers[gvk] = inf
			}
			hook.ParamInformer, hook.ParamScope = inf, inf.scope
		}
		e.hooks = append(e.hooks, hook)
	}
	namespaces := corelisters.NewNamespaceLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}))
	e.dispatcher = validating.NewDispatcher(allowAll{}, generic.NewPolicyMatcher(matching.NewMatcher(namespaces, nil)))
	if err := e.dispatcher.Start(context.Background()); err != nil {
		return nil, err
	}
	return e, nil
}

// Request is one admission request, as the API server would make it.
type Request struct {
	// Object and OldObject (UPDATE) at the version the policies match.
	Object, OldObject map[string]any
	// Resource is the object's plural resource (nodepools).
	Resource  string
	Operation admission.Operation
	User      user.Info
	DryRun    bool
}

// Verdict is what the API server would answer and record.
type Verdict struct {
	// Denied: the request is refused, with Message, the API server's text
	// ("ValidatingAdmissionPolicy 'karpgate' with binding ... denied
	// request: ...") and Reason.
	Denied  bool
	Message string
	Reason  metav1.StatusReason
	// Warnings are what kubectl would print as "Warning: ...".
	Warnings []string
	// Annotations are the audit annotations of the request, by key.
	Annotations map[string]string
	// Failures are the failed validations of Audit bindings, as the API
	// server records them in the audit annotation
	// validation.policy.admission.k8s.io/validation_failure.
	Failures []validating.ValidationFailureValue
}

// FailureAnnotation is the audit annotation the API server writes for the
// validations failed under bindings with the Audit action.
const FailureAnnotation = "validation.policy.admission.k8s.io/validation_failure"

// Validate judges one request.
func (e *Evaluator) Validate(ctx context.Context, r Request) (Verdict, error) {
	obj := &unstructured.Unstructured{Object: r.Object}
	var old runtime.Object
	if r.OldObject != nil {
		old = &unstructured.Unstructured{Object: r.OldObject}
	}
	gvk := obj.GroupVersionKind()
	options := runtime.Object(&metav1.CreateOptions{})
	if r.Operation == admission.Update {
		options = &metav1.UpdateOptions{}
	}
	u := r.User
	if u == nil {
		u = &user.DefaultInfo{}
	}
	attrs := &annotated{Attributes: admission.NewAttributesRecord(obj, old, gvk, obj.GetNamespace(), obj.GetName(),
		gvk.GroupVersion().WithResource(r.Resource), "", r.Operation, options, r.DryRun, u)}
	warnings := &recorder{}
	err := e.dispatcher.Dispatch(warning.WithWarningRecorder(ctx, warnings), attrs, e.objects, e.hooks)
	v := Verdict{Warnings: warnings.texts, Annotations: attrs.annotations}
	if raw, ok := v.Annotations[FailureAnnotation]; ok {
		if jerr := json.Unmarshal([]byte(raw), &v.Failures); jerr != nil {
			return v, fmt.Errorf("reading %s: %w", FailureAnnotation, jerr)
		}
	}
	if err != nil {
		var status apierrors.APIStatus
		if !errors.As(err, &status) {
			return v, err
		}
		v.Denied, v.Reason = true, status.Status().Reason
		v.Message = deniedMessage(status.Status())
	}
	return v, nil
}

// deniedMessage is the policy's part of a denial: the API server wraps it
// as `<resource> "<name>" is forbidden: ValidatingAdmissionPolicy ...`,
// and the cause holds it alone.
func deniedMessage(s metav1.Status) string {
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			if c.Message != "" {
				return c.Message
			}
		}
	}
	return s.Message
}

// annotated keeps the audit annotations the dispatcher adds, which the
// API server's record keeps for its audit handler alone.
type annotated struct {
	admission.Attributes
	mu          sync.Mutex
	annotations map[string]string
}

func (a *annotated) AddAnnotation(key, value string) error {
	return a.AddAnnotationWithLevel(key, value, auditinternal.LevelMetadata)
}

func (a *annotated) AddAnnotationWithLevel(key, value string, level auditinternal.Level) error {
	if err := a.Attributes.AddAnnotationWithLevel(key, value, level); err != nil {
		return err // the record's checks: key format, no overwrite
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.annotations == nil {
		a.annotations = map[string]string{}
	}
	a.annotations[key] = value
	return nil
}

// recorder collects the warnings the dispatcher adds.
type recorder struct {
	mu    sync.Mutex
	texts []string
}

func (r *recorder) AddWarning(_, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.texts, text) {
		r.texts = append(r.texts, text)
	}
}

// allowAll answers the CEL authorizer variable; karpgate's policies do
// not read it.
type allowAll struct{}

func (allowAll) Authorize(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
	return authorizer.DecisionAllow, "", nil
}

// paramInformer serves parameter objects of one kind from memory, as the
// API server's informer would. The dispatcher asks an informer only
// whether it has synced (generic.CollectParams) and reads through its
// lister, so a full informer, which would run a reflector, is not needed:
// synced embeds the interface for its type and answers HasSynced alone.
type paramInformer struct {
	indexer  cache.Indexer
	resource schema.GroupResource
	scope    meta.RESTScope
}

func (p *paramInformer) Informer() cache.SharedIndexInformer { return synced{} }
func (p *paramInformer) Lister() cache.GenericLister {
	return cache.NewGenericLister(p.indexer, p.resource)
}

// synced is an informer whose objects are all there from the start.
type synced struct{ cache.SharedIndexInformer }

func (synced) HasSynced() bool { return true }

// paramScopes are the scopes of the parameter kinds karpgate uses.
var paramScopes = map[schema.GroupVersionKind]meta.RESTScope{
	corev1.SchemeGroupVersion.WithKind("ConfigMap"): meta.RESTScopeNamespace,
}

func newParamInformer(gvk schema.GroupVersionKind, params Params) (*paramInformer, error) {
	scope, ok := paramScopes[gvk]
	if !ok {
		return nil, fmt.Errorf("paramKind %s: the offline evaluator knows the scope of %v only", gvk, kindsOf(paramScopes))
	}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range params {
		u := &unstructured.Unstructured{Object: p}
		if u.GroupVersionKind() != gvk {
			continue
		}
		if err := indexer.Add(u.DeepCopy()); err != nil {
			return nil, err
		}
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return &paramInformer{indexer: indexer, resource: plural.GroupResource(), scope: scope}, nil
}

func kindsOf(m map[schema.GroupVersionKind]meta.RESTScope) []string {
	var out []string
	for gvk := range m {
		out = append(out, gvk.Kind)
	}
	slices.Sort(out)
	return out
}
