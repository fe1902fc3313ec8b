// Package report renders RolloutPlans for people and programs, as
// `karpgate rollout status` prints them: text.go a summary table and each
// plan's waves, gates and failure; json.go the same as JSON, with the soak
// left computed at the instant given. One format per file, each with its
// golden test.
package report
