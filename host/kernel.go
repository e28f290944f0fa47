package host

import (
	"context"
	"errors"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// kernel is the host side of the Extism kernel ("extism:host/env") for the
// raw runner (raw.go). The guest imports these functions because it is
// built with go-pdk; on the raw path it uses only config_get and the memory
// functions around it (reading its policy at the first call), so this is a
// small Go allocator over a byte slice instead of the Extism SDK's kernel
// module. Input, output and the error channel are not offered: the raw
// exports pass those through the guest's own memory, and a guest that uses
// them here traps (and is replaced) rather than reading nothing.
type kernel struct {
	mem    []byte            // offset 0 is the null pointer, so blocks start at kernelBase
	blocks map[uint64]uint64 // offset -> length of each live block
	max    uint64            // the memory cap, as the Extism kernel's memory would have
	config map[string]string
}

const kernelBase = 8

func newKernel(config map[string]string, maxBytes uint64) *kernel {
	return &kernel{mem: make([]byte, kernelBase, 1024), blocks: map[uint64]uint64{}, max: maxBytes, config: config}
}

// reset frees every block, as the Extism SDK does before each call.
func (k *kernel) reset() {
	if len(k.blocks) > 0 {
		clear(k.blocks)
	}
	k.mem = k.mem[:kernelBase]
}

func (k *kernel) alloc(n uint64) uint64 {
	if n == 0 || n > k.max || uint64(len(k.mem))+n > k.max {
		return 0 // the kernel's out-of-memory answer; go-pdk then fails its own way
	}
	off := uint64(len(k.mem))
	k.mem = append(k.mem, make([]byte, n)...)
	k.blocks[off] = n
	return off
}

// span returns the n bytes at off, or panics: wazero turns a host function's
// panic into an error from the guest's call, which the runner treats as a
// trap, so a guest reading outside its blocks is replaced, never trusted.
func (k *kernel) span(off, n uint64) []byte {
	if off < kernelBase || n > uint64(len(k.mem)) || off > uint64(len(k.mem))-n {
		panic(errors.New("extism kernel: access outside allocated memory"))
	}
	return k.mem[off : off+n]
}

func (k *kernel) store(off uint64, v []byte) { copy(k.span(off, uint64(len(v))), v) }

func (k *kernel) configGet(keyOff uint64) uint64 {
	n, ok := k.blocks[keyOff]
	if !ok {
		panic(errors.New("extism kernel: config_get of an unallocated key"))
	}
	v, ok := k.config[string(k.span(keyOff, n))]
	if !ok {
		return 0
	}
	off := k.alloc(uint64(len(v)))
	if off != 0 {
		copy(k.mem[off:], v)
	}
	return off
}

type kernelKey struct{}

// withKernel hands the instance's kernel to the host functions for one call.
func withKernel(ctx context.Context, k *kernel) context.Context {
	return context.WithValue(ctx, kernelKey{}, k)
}

func kernelOf(ctx context.Context) *kernel {
	k, ok := ctx.Value(kernelKey{}).(*kernel)
	if !ok {
		panic(errors.New("extism kernel: called outside a ctxgate call"))
	}
	return k
}

// instantiateKernel defines "extism:host/env" in rt: the functions go-pdk
// imports, with the Extism kernel's signatures.
func instantiateKernel(ctx context.Context, rt wazero.Runtime) error {
	const i32, i64 = api.ValueTypeI32, api.ValueTypeI64
	b := rt.NewHostModuleBuilder("extism:host/env")
	fn := func(name string, params, results []api.ValueType, f func(k *kernel, stack []uint64)) {
		b.NewFunctionBuilder().WithGoFunction(api.GoFunc(func(ctx context.Context, stack []uint64) {
			f(kernelOf(ctx), stack)
		}), params, results).Export(name)
	}
	le := func(b []byte) (v uint64) {
		for i := 7; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		return v
	}
	fn("alloc", []api.ValueType{i64}, []api.ValueType{i64}, func(k *kernel, s []uint64) { s[0] = k.alloc(s[0]) })
	fn("free", []api.ValueType{i64}, nil, func(k *kernel, s []uint64) { delete(k.blocks, s[0]) })
	fn("length", []api.ValueType{i64}, []api.ValueType{i64}, func(k *kernel, s []uint64) { s[0] = k.blocks[s[0]] })
	fn("load_u8", []api.ValueType{i64}, []api.ValueType{i32}, func(k *kernel, s []uint64) { s[0] = uint64(k.span(s[0], 1)[0]) })
	fn("load_u64", []api.ValueType{i64}, []api.ValueType{i64}, func(k *kernel, s []uint64) { s[0] = le(k.span(s[0], 8)) })
	fn("store_u8", []api.ValueType{i64, i32}, nil, func(k *kernel, s []uint64) { k.span(s[0], 1)[0] = byte(s[1]) })
	fn("store_u64", []api.ValueType{i64, i64}, nil, func(k *kernel, s []uint64) {
		v, p := s[1], k.span(s[0], 8)
		for i := range p {
			p[i] = byte(v >> (8 * i))
		}
	})
	fn("config_get", []api.ValueType{i64}, []api.ValueType{i64}, func(k *kernel, s []uint64) { s[0] = k.configGet(s[0]) })
	fn("input_length", nil, []api.ValueType{i64}, func(k *kernel, s []uint64) { s[0] = 0 })
	unused := func(name string, params, results []api.ValueType) {
		fn(name, params, results, func(*kernel, []uint64) {
			panic(errors.New("extism kernel: " + name + " is not available on the raw path"))
		})
	}
	unused("input_load_u8", []api.ValueType{i64}, []api.ValueType{i32})
	unused("input_load_u64", []api.ValueType{i64}, []api.ValueType{i64})
	unused("output_set", []api.ValueType{i64, i64}, nil)
	unused("error_set", []api.ValueType{i64}, nil)
	_, err := b.Instantiate(ctx)
	return err
}
