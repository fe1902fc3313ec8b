package twinsync

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/karpgate/karpgate/config"
	"github.com/karpgate/karpgate/internal/deploy"
	"github.com/karpgate/karpgate/policies"
	"github.com/karpgate/karpgate/policies/twin"
)

// Engines hands out the engine karpgate serve judges by (policywatch).
type Engines interface{ Engine() *policies.Engine }

// Options say where the parameters live and how often to look.
type Options struct {
	// Client reads the policy and its bindings and writes the parameter
	// ConfigMaps in Namespace.
	Client    client.Client
	Engines   Engines
	Namespace string
	// Interval is how often the engine in use is checked for a change;
	// every Resync the cluster's objects are read again even when it has
	// not changed, to repair parameters someone else edited. 0 means the
	// defaults.
	Interval, Resync time.Duration
	Log              logr.Logger
}

const (
	defaultInterval = time.Second
	defaultResync   = 30 * time.Second
)

// Syncer keeps the parameters in step and says which twins the API
// server enforces as generated. Each replica of karpgate runs one: they
// write the same content, and a replica that has not yet reloaded a new
// karpgate.yaml writes only when its own engine changes or at its resync.
type Syncer struct {
	opts Options
	// covered is the last reading: rule ID -> the action the API server
	// enforces it with, for rules whose policy, binding and parameters
	// are exactly what this replica would write.
	covered atomic.Pointer[map[string]config.Action]
	mu      sync.Mutex // serialises syncs
	built   *policies.Engine
	objs    twin.Objects
	twins   []twin.Twin
}

// New returns a syncer; Start runs it.
func New(opts Options) *Syncer {
	if opts.Interval <= 0 {
		opts.Interval = defaultInterval
	}
	if opts.Resync <= 0 {
		opts.Resync = defaultResync
	}
	if opts.Namespace == "" {
		opts.Namespace = deploy.Namespace
	}
	s := &Syncer{opts: opts}
	none := map[string]config.Action{}
	s.covered.Store(&none)
	return s
}

// NeedLeaderElection is false: every replica's webhook asks Covered.
func (s *Syncer) NeedLeaderElection() bool { return false }

// Start syncs at once, then whenever the engine changes and every Resync,
// until ctx ends.
func (s *Syncer) Start(ctx context.Context) error {
	tick := time.NewTicker(s.opts.Interval)
	defer tick.Stop()
	var last time.Time
	for {
		if e := s.opts.Engines.Engine(); e != nil && (e != s.builtFor() || time.Since(last) >= s.opts.Resync) {
			_ = s.Sync(ctx) // logged and counted inside
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func (s *Syncer) builtFor() *policies.Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.built
}

// Covered reports whether the API server enforces rule's twin with action
// exactly as this replica would: then the webhook need not say the same
// thing again.
func (s *Syncer) Covered(rule string, action config.Action) bool {
	a, ok := (*s.covered.Load())[rule]
	return ok && a == action
}

// Sync writes the parameters the engine in use calls for where they
// differ, then reads what the API server enforces.
func (s *Syncer) Sync(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	engine := s.opts.Engines.Engine()
	if engine != s.built {
		objs, twins, err := twin.ForEngine(engine, s.opts.Namespace)
		if err != nil {
			syncs.WithLabelValues("failed").Inc()
			s.opts.Log.Error(err, "building the twins' parameters")
			return err
		}
		s.built, s.objs, s.twins = engine, objs, twins
	}
	inSync := true
	for _, want := range s.objs.Params {
		same, err := s.writeParams(ctx, want)
		if err != nil {
			syncs.WithLabelValues("failed").Inc()
			s.opts.Log.Error(err, "writing the twins' parameters", "configMap", want.Namespace+"/"+want.Name)
			inSync = false
			continue
		}
		inSync = inSync && same
	}
	covered := s.readCovered(ctx)
	s.covered.Store(&covered)
	s.publish(covered)
	if inSync {
		syncs.WithLabelValues("unchanged").Inc()
	}
	return nil
}

// writeParams makes the ConfigMap hold want's data: it creates it when it
// is missing and replaces its data when it differs. same: it already did.
func (s *Syncer) writeParams(ctx context.Context, want *corev1.ConfigMap) (same bool, err error) {
	var live corev1.ConfigMap
	err = s.opts.Client.Get(ctx, client.ObjectKeyFromObject(want), &live)
	switch {
	case apierrors.IsNotFound(err):
		if err := s.opts.Client.Create(ctx, want.DeepCopy(), client.FieldOwner(fieldOwner)); err != nil {
			return false, err
		}
		syncs.WithLabelValues("created").Inc()
		s.opts.Log.Info("created the twins' parameters", "configMap", want.Namespace+"/"+want.Name)
		return false, nil
	case err != nil:
		return false, err
	case maps.Equal(live.Data, want.Data):
		return true, nil
	}
	live.Data = maps.Clone(want.Data)
	if err := s.opts.Client.Update(ctx, &live, client.FieldOwner(fieldOwner)); err != nil {
		return false, err
	}
	syncs.WithLabelValues("updated").Inc()
	s.opts.Log.Info("updated the twins' parameters to karpgate.yaml and the Karpenter release judged", "configMap", want.Namespace+"/"+want.Name,
		"karpenter", want.Data["karpenter.version"])
	return false, nil
}

// fieldOwner names karpgate serve's writes in managedFields.
const fieldOwner = "karpgate"

// readCovered reads the policy, its bindings and the parameters, and
// returns the rules the API server enforces as generated, with their
// action.
func (s *Syncer) readCovered(ctx context.Context) map[string]config.Action {
	out := map[string]config.Action{}
	var policy admissionregistrationv1.ValidatingAdmissionPolicy
	if err := s.opts.Client.Get(ctx, client.ObjectKeyFromObject(s.objs.Policy), &policy); err != nil {
		if !apierrors.IsNotFound(err) {
			s.opts.Log.Error(err, "reading the twins' policy")
		}
		return out
	}
	if !samePolicy(policy.Spec, s.objs.Policy.Spec) {
		return out
	}
	for i, want := range s.objs.Bindings {
		var binding admissionregistrationv1.ValidatingAdmissionPolicyBinding
		if err := s.opts.Client.Get(ctx, client.ObjectKeyFromObject(want), &binding); err != nil {
			continue
		}
		if binding.Spec.PolicyName != want.Spec.PolicyName || !slices.Equal(binding.Spec.ValidationActions, want.Spec.ValidationActions) ||
			binding.Spec.ParamRef == nil || binding.Spec.ParamRef.Name != want.Spec.ParamRef.Name || binding.Spec.ParamRef.Namespace != want.Spec.ParamRef.Namespace {
			continue
		}
		params := s.objs.Params[i]
		var live corev1.ConfigMap
		if err := s.opts.Client.Get(ctx, client.ObjectKeyFromObject(params), &live); err != nil || !maps.Equal(live.Data, params.Data) {
			continue
		}
		action := config.Action(params.Data["action"])
		for _, t := range s.twins {
			if params.Data["rule."+t.ID()] == string(action) {
				out[t.ID()] = action
			}
		}
	}
	return out
}

// samePolicy reports whether a policy in the cluster is the one karpgate
// would write, in every field that decides what it enforces: its CEL
// (variables, validations, match conditions, audit annotations), its
// parameter kind, failure policy and what it matches. karpgate sets the
// fields the API server would default, so a live policy equals it.
func samePolicy(live, want admissionregistrationv1.ValidatingAdmissionPolicySpec) bool {
	return slices.Equal(live.Variables, want.Variables) &&
		slices.EqualFunc(live.Validations, want.Validations, func(a, b admissionregistrationv1.Validation) bool {
			return a.Expression == b.Expression && a.MessageExpression == b.MessageExpression && a.Message == b.Message
		}) &&
		slices.Equal(live.MatchConditions, want.MatchConditions) &&
		slices.Equal(live.AuditAnnotations, want.AuditAnnotations) &&
		equality.Semantic.DeepEqual(live.ParamKind, want.ParamKind) &&
		(want.FailurePolicy == nil || live.FailurePolicy != nil && *live.FailurePolicy == *want.FailurePolicy) &&
		sameMatch(live.MatchConstraints, want.MatchConstraints)
}

// sameMatch compares what a policy matches: its resource rules (karpgate
// sets every field of them, scope included), no excluded resources, and
// the match policy and selectors karpgate sets.
func sameMatch(live, want *admissionregistrationv1.MatchResources) bool {
	if live == nil || want == nil {
		return live == want
	}
	return equality.Semantic.DeepEqual(live.ResourceRules, want.ResourceRules) &&
		len(live.ExcludeResourceRules) == len(want.ExcludeResourceRules) &&
		equality.Semantic.DeepEqual(live.ExcludeResourceRules, want.ExcludeResourceRules) &&
		(want.MatchPolicy == nil || equality.Semantic.DeepEqual(live.MatchPolicy, want.MatchPolicy)) &&
		(want.NamespaceSelector == nil || equality.Semantic.DeepEqual(live.NamespaceSelector, want.NamespaceSelector)) &&
		(want.ObjectSelector == nil || equality.Semantic.DeepEqual(live.ObjectSelector, want.ObjectSelector))
}
