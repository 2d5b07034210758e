// Package readme keeps the Go snippets of README.md and docs/ identical to
// compiled, tested code: a snippet is introduced by a line
//
//	<!-- snippet: <file> <name> -->
//
// followed by a ```go block, and is the code between "// readme:begin <name>"
// and "// readme:end" in that file (a path from the repository's root). The
// package's test fails when a snippet differs, and rewrites the documents
// with -update.
package readme
