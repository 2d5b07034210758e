// Package ui holds the console's front end: one HTML page, a style sheet
// and ES modules, embedded in the binary and served as they are (no build
// step).
package ui

import "embed"

// FS holds static/: index.html, style.css and the modules under js/.
//
//go:embed static
var FS embed.FS
