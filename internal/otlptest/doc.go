// Package otlptest checks ctxgate's traces as an OpenTelemetry Collector
// receives them. It is a module of its own so that the Collector's
// dependencies never reach the main module's go.mod.
package otlptest
