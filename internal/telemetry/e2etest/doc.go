// Package e2etest holds the end-to-end tracing tests: one run across a
// stdio MCP server, an A2A peer and a bus worker, each in its own process,
// exported over OTLP/HTTP to a real receiver. It has no code of its own.
package e2etest
