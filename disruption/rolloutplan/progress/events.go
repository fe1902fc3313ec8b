package progress

// Event reasons on the plan (and on the NodePools they name).
const (
	EventRolloutStarted   = "RolloutStarted"
	EventWaveStarted      = "WaveStarted"
	EventWaveSoaking      = "WaveSoaking"
	EventWaveDone         = "WaveDone"
	EventRolloutComplete  = "RolloutComplete"
	EventRolloutRestarted = "RolloutRestarted"
	EventGateFailed       = "GateFailed"
	EventRolloutPaused    = "RolloutPaused"
	EventRolloutAborted   = "RolloutAborted"
	EventRolloutRetried   = "RolloutRetried"
)
