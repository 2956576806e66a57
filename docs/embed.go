// Package docs carries the documentation kseg shows at run time into the
// binary, from the very files the repository publishes: kseg check takes
// the help of its SARIF rules (one per finding kind) from
// troubleshooting.md, so the two cannot drift apart.
package docs

import _ "embed"

// Troubleshooting is troubleshooting.md: every finding kind, what it
// means on a broker and what to do.
//
//go:embed troubleshooting.md
var Troubleshooting string
