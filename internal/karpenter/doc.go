// Package karpenter names the Karpenter API surface karpgate understands:
// groups, versions, kinds and the well-known labels and annotations. It holds
// facts only, so that every other package spells them the same way.
package karpenter
