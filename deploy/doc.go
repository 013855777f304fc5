// Package deploy holds the Kubernetes manifests of a replicated
// realizar-host (kubernetes/) and, in its test, their check: each file
// decodes strictly (no unknown field) into its k8s.io/api type, and the
// objects agree with one another (selectors, the Secret and ConfigMap the
// Deployment reads, the probes). It is a module of its own so that the
// main module does not depend on k8s.io/api.
package deploy
