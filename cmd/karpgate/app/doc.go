// Package app builds karpgate's command tree. Each subcommand lives in its own
// file and adapts flags to a library package; logic worth testing lives in
// those packages, not here.
package app
