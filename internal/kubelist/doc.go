// Package kubelist lists objects from an API server page by page, so that a
// command reading every NodeClaim of a large cluster never asks for them in
// one response, and a conversion webhook gets one page per call.
package kubelist
