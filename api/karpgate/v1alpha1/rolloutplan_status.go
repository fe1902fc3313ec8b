package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// RolloutPlanStatus is where the rollout stands, written by karpgate's
// leader after every change it observes: a restart, a new leader or a lost
// replica continues from here.
type RolloutPlanStatus struct {
	// ObservedGeneration is the generation of the spec this status is for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions in kstatus terms: Ready (nothing to roll, or the last
	// wave done), Reconciling (a wave rolls, soaks or waits for a resume
	// of a pause), Stalled (a gate failed, or the plan was aborted).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Phase is the plan's state in one word.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// CurrentWave names the wave that rolls, soaks or failed; when Idle,
	// the first wave, whose NodePools are not held.
	// +optional
	CurrentWave string `json:"currentWave,omitempty"`

	// StartedAt is when the current pass through the waves began (drift
	// was first seen in a NodePool of the plan).
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`

	// CompletedAt is when the last pass finished.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`

	// Failure says which gate of which wave stopped the rollout, or that
	// a person aborted it.
	// +optional
	Failure *Failure `json:"failure,omitempty"`

	// Waves in spec order.
	// +listType=map
	// +listMapKey=name
	// +optional
	Waves []WaveStatus `json:"waves,omitempty"`

	// HeldNodePools counts the NodePools karpgate holds for the plan.
	// +optional
	HeldNodePools int32 `json:"heldNodePools"`

	// Conflicts names NodePools the plan's waves select that an older plan
	// already has; the plan leaves them to that plan.
	// +listType=set
	// +optional
	Conflicts []string `json:"conflicts,omitempty"`

	// HandledAbort and HandledRetry are the values of the abort and retry
	// annotations last acted on.
	// +optional
	HandledAbort string `json:"handledAbort,omitempty"`
	// +optional
	HandledRetry string `json:"handledRetry,omitempty"`
}

// Phase of a plan.
// +kubebuilder:validation:Enum=Idle;Rolling;Soaking;Paused;Failed;Aborted
type Phase string

// Phases.
const (
	// PhaseIdle: no NodePool of the plan has drift to roll. The first
	// wave's NodePools are not held, every other wave's are: the next
	// change starts in the canary whether or not karpgate is up.
	PhaseIdle Phase = "Idle"
	// PhaseRolling: the current wave's drifted NodeClaims are being replaced.
	PhaseRolling Phase = "Rolling"
	// PhaseSoaking: the current wave is replaced; its gates must hold for
	// its soak.
	PhaseSoaking Phase = "Soaking"
	// PhasePaused: the current wave is done and spec.paused holds the next.
	PhasePaused Phase = "Paused"
	// PhaseFailed: a gate failed; everything is held until a retry.
	PhaseFailed Phase = "Failed"
	// PhaseAborted: a person stopped the plan; its holds stay until lifted.
	PhaseAborted Phase = "Aborted"
)

// Failure is why the rollout stopped.
type Failure struct {
	// Wave that failed.
	Wave string `json:"wave"`
	// Reason is the Stalled condition's reason: a gate's (NodesNotReady,
	// NodeClaimsFailed, PodsNotReady) or Aborted.
	Reason string `json:"reason"`
	// Message says what was seen, naming NodeClaims and pods.
	Message string `json:"message"`
	// At is when it happened.
	At metav1.Time `json:"at"`
}

// WaveStatus is one wave's progress.
type WaveStatus struct {
	Name string `json:"name"`
	// Phase of the wave.
	Phase WavePhase `json:"phase"`
	// NodePools of the wave, in name order.
	// +listType=set
	// +optional
	NodePools []string `json:"nodePools,omitempty"`
	// Rolling are the NodePools karpgate lets roll now (all of the wave's
	// drifted ones, or maxRollingNodePools of them).
	// +listType=set
	// +optional
	Rolling []string `json:"rolling,omitempty"`
	// Frozen are the wave's NodePools a freeze holds: the plan cannot
	// release them until `karpgate resume`.
	// +listType=set
	// +optional
	Frozen []string `json:"frozen,omitempty"`
	// NodeClaims counts the NodeClaims of the wave's NodePools; Drifted
	// those with drift the plan paces; Replaced the drifted ones gone since
	// the wave started rolling.
	NodeClaims int32 `json:"nodeClaims"`
	Drifted    int32 `json:"drifted"`
	Replaced   int32 `json:"replaced"`
	// StartedAt: the wave was released. SoakStartedAt: its last drifted
	// NodeClaim was replaced and its new nodes were Ready. SoakEndsAt:
	// when the next wave is released if the gates hold. CompletedAt: done.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	SoakStartedAt *metav1.Time `json:"soakStartedAt,omitempty"`
	// +optional
	SoakEndsAt *metav1.Time `json:"soakEndsAt,omitempty"`
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
	// Gates as last evaluated, while the wave rolls or soaks.
	// +listType=map
	// +listMapKey=name
	// +optional
	Gates []GateStatus `json:"gates,omitempty"`
}

// WavePhase of a wave.
// +kubebuilder:validation:Enum=Waiting;Rolling;Soaking;Done;Failed
type WavePhase string

// Wave phases.
const (
	WaveWaiting WavePhase = "Waiting"
	WaveRolling WavePhase = "Rolling"
	WaveSoaking WavePhase = "Soaking"
	WaveDone    WavePhase = "Done"
	WaveFailed  WavePhase = "Failed"
)

// GateStatus is one gate's verdict.
type GateStatus struct {
	// Name: NodesReady, NodeClaimsLaunched or PodsReady.
	Name string `json:"name"`
	// Result: Passing, Waiting (new nodes still within their limit) or
	// Failing.
	Result GateResult `json:"result"`
	// Message says what was counted.
	// +optional
	Message string `json:"message,omitempty"`
}

// GateResult is a gate's verdict.
// +kubebuilder:validation:Enum=Passing;Waiting;Failing
type GateResult string

// Gate verdicts.
const (
	GatePassing GateResult = "Passing"
	GateWaiting GateResult = "Waiting"
	GateFailing GateResult = "Failing"
)

// Condition types (kstatus) and the reasons karpgate writes.
const (
	ConditionReady       = "Ready"
	ConditionReconciling = "Reconciling"
	ConditionStalled     = "Stalled"

	ReasonIdle             = "Idle"
	ReasonRolloutComplete  = "RolloutComplete"
	ReasonRolling          = "Rolling"
	ReasonSoaking          = "Soaking"
	ReasonPaused           = "Paused"
	ReasonAborted          = "Aborted"
	ReasonNodesNotReady    = "NodesNotReady"
	ReasonNodeClaimsFailed = "NodeClaimsFailed"
	ReasonPodsNotReady     = "PodsNotReady"
)

// Gate names.
const (
	GateNodesReady         = "NodesReady"
	GateNodeClaimsLaunched = "NodeClaimsLaunched"
	GatePodsReady          = "PodsReady"
)
