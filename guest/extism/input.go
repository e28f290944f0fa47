//go:build wasip1

package main

import "encoding/binary"

// The kernel functions go-pdk's Input uses. They are declared here so the
// exports can read the input into one buffer kept from call to call: Input
// makes a new input-sized buffer every call, and under TinyGo a few of those
// (megabytes each, for a large answer) fragment the heap until a later one
// finds no room below the memory cap and the module traps.

//go:wasmimport extism:host/env input_length
func inputLength() uint64

//go:wasmimport extism:host/env input_load_u64
func inputLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env input_load_u8
func inputLoadU8(offset uint64) uint32

// readInput fills buf with the call's input (buf is inputLength() bytes):
// go-pdk's Input, into a buffer the caller keeps.
func readInput(buf []byte) {
	i := 0
	for ; i+8 <= len(buf); i += 8 {
		binary.LittleEndian.PutUint64(buf[i:i+8], inputLoadU64(uint64(i)))
	}
	for ; i < len(buf); i++ {
		buf[i] = byte(inputLoadU8(uint64(i)))
	}
}
