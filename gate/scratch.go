package gate

// Scratch reused from one decision to the next: resized, and cleared where
// the caller needs zeros, without allocating once it is large enough.

// zeroed returns s resized to n, every element the zero value.
func zeroed[T bool | int | float64](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	var zero T
	for i := range s {
		s[i] = zero
	}
	return s
}

// resizeFloat returns s resized to n, its old values left for the caller
// to overwrite.
func resizeFloat(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// emptyTable returns t as an open-addressing table for n entries: a power
// of two of at least min slots and twice n, every slot zero (empty). t's
// array is reused when it is large enough.
func emptyTable[T int32 | uint64](t []T, min, n int) []T {
	size := min
	for size < 2*n {
		size <<= 1
	}
	if cap(t) < size {
		return make([]T, size)
	}
	t = t[:size]
	for i := range t {
		t[i] = 0
	}
	return t
}
