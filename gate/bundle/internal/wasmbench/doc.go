// Package wasmbench runs gate/bundle inside real Wasm modules (standard Go
// wasip1 and TinyGo) under wazero: the same bundles must get the same
// verdict natively and in the sandbox, and the benchmark measures what
// verification costs there. The guests are in ./guest and ./baseline.
package wasmbench
