package karpenter

// Node and NodeClaim lifecycle names Karpenter's disruption controller reads.
const (
	// NodeInitializedLabel is "true" once Karpenter considers the node
	// initialized; only such nodes count towards a NodePool's budgets.
	NodeInitializedLabel = "karpenter.sh/initialized"
	// NodeRegisteredLabel is "true" once the node has joined the cluster.
	NodeRegisteredLabel = "karpenter.sh/registered"
	// DisruptedTaintKey is the NoSchedule taint Karpenter puts on a node at
	// the moment it marks the node for disruption.
	DisruptedTaintKey = "karpenter.sh/disrupted"

	// ConditionDrifted on a NodeClaim is True, with the drift reason as
	// its reason, once Karpenter has noticed that the node drifted.
	ConditionDrifted = "Drifted"
	// ConditionInstanceTerminating on a NodeClaim is True once the instance
	// is being terminated; such nodes no longer count towards budgets.
	ConditionInstanceTerminating = "InstanceTerminating"
	// ConditionInitialized on a NodeClaim is True once its node is
	// initialized: registered, Ready, startup taints gone, resources seen.
	ConditionInitialized = "Initialized"
	// ConditionConsolidatable on a NodeClaim is True once consolidateAfter
	// has passed since the last pod was scheduled on or removed from it;
	// only then may consolidation (Empty, Underutilized) pick the node.
	ConditionConsolidatable = "Consolidatable"
	// ConditionRebooting on a NodeClaim is True while node repair reboots
	// the node in place (Karpenter v1.15): it counts against every
	// reason's budget, and towards the NodePool's nodes though its
	// karpenter.sh/initialized label is reset.
	ConditionRebooting = "Rebooting"
	// ConditionLaunched and ConditionRegistered on a NodeClaim follow its
	// instance's launch and its node's joining the cluster. Karpenter leaves
	// Launched Unknown with its launch error's reason while it retries, and
	// deletes a NodeClaim that neither launches nor registers in time.
	ConditionLaunched   = "Launched"
	ConditionRegistered = "Registered"
	// ConditionAwaitingReconciliation is the reason of a condition nothing
	// has acted on yet (operatorpkg's initial Unknown).
	ConditionAwaitingReconciliation = "AwaitingReconciliation"
	// ConditionNodeRegistrationHealthy on a NodePool (Karpenter v1.12 and
	// later) goes False when a NodeClaim of the pool failed to launch or
	// register before Karpenter's timeout.
	ConditionNodeRegistrationHealthy = "NodeRegistrationHealthy"
)

// Node repair (Karpenter v1.15).
const (
	// DoNotRepairAnnotation "true" on a node keeps node repair from acting
	// on it, whatever its conditions.
	DoNotRepairAnnotation = "karpenter.sh/do-not-repair"
)

// Pod and workload names the disruption rules read.
const (
	// DaemonSet and mirror (Node-owned) pods do not need rescheduling, so
	// they neither keep a node from being empty nor meet PDBs on eviction.
	OwnerDaemonSetAPIVersion   = "apps/v1"
	OwnerDaemonSetKind         = "DaemonSet"
	OwnerStatefulSetAPIVersion = "apps/v1"
	OwnerStatefulSetKind       = "StatefulSet"
	OwnerNodeAPIVersion        = "v1"
	OwnerNodeKind              = "Node"
)

// Labels Karpenter's AWS provider derives from the instance type and that
// EC2NodeClass status.amis requirements select on. An AMI's requirements
// use no other keys.
const (
	LabelArch                     = "kubernetes.io/arch"
	LabelOS                       = "kubernetes.io/os"
	LabelWindowsBuild             = "node.kubernetes.io/windows-build"
	LabelInstanceGPUCount         = "karpenter.k8s.aws/instance-gpu-count"
	LabelInstanceAcceleratorCount = "karpenter.k8s.aws/instance-accelerator-count"
)

// AMIRequirementLabels lists the labels an AMI requirement can select on.
var AMIRequirementLabels = []string{
	LabelArch, LabelOS, LabelWindowsBuild, LabelInstanceGPUCount, LabelInstanceAcceleratorCount,
}
