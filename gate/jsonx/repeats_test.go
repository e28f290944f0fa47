package jsonx

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

type stringKeys []string

func (k *stringKeys) Key(i int) string { return (*k)[i] }

// firstRepeatRef is Repeats.First by a map: the smallest i whose key
// appeared before, and the first index of that key.
func firstRepeatRef(keys []string) (int, int) {
	seen := map[string]int{}
	for i, k := range keys {
		if j, ok := seen[k]; ok {
			return i, j
		}
		seen[k] = i
	}
	return -1, -1
}

// TestRepeatsMatchesMap holds Repeats to a map over random key lists of
// every size class (pairwise, insertion sort, radix sort), with the real
// hash and with hashes forced to collide (every key alike, or three values
// for all), which sends whole lists down the long-run path.
func TestRepeatsMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	hashes := map[string]func(string) uint64{
		"HashKey":  HashKey,
		"constant": func(string) uint64 { return 7 << 40 },
		"three":    func(s string) uint64 { return (HashKey(s) % 3) << 33 },
		"low bits": func(s string) uint64 { return HashKey(s) & (1<<32 - 1) }, // equal top 32 bits
	}
	var r Repeats
	for _, n := range []int{0, 1, 2, 3, 8, 9, 17, 64, 65, 100, 257, 1000, 5000} {
		for trial := 0; trial < 20; trial++ {
			keys := make([]string, n)
			for i := range keys {
				switch rng.Intn(4) {
				case 0: // shared long prefix
					keys[i] = strings.Repeat("p", 20) + strconv.Itoa(rng.Intn(4*n+1))
				default:
					keys[i] = strconv.Itoa(rng.Intn(8*n + 1))
				}
			}
			if trial == 1 { // many copies of few keys: long runs of equal keys
				for i := range keys {
					keys[i] = strings.Repeat("r", 20) + strconv.Itoa(i%3)
				}
			}
			if trial%2 == 0 { // half the lists: distinct keys
				for i := range keys {
					keys[i] = "d" + strconv.Itoa(i) + keys[i]
				}
			}
			wi, wj := firstRepeatRef(keys)
			for name, hash := range hashes {
				h := r.Hashes(len(keys))
				for i, k := range keys {
					h[i] = hash(k)
				}
				sk := stringKeys(keys)
				if i, j := r.First(&sk); i != wi || j != wj {
					t.Fatalf("n=%d trial %d, %s hash: First = (%d, %d), want (%d, %d)", n, trial, name, i, j, wi, wj)
				}
			}
		}
	}
}

func TestCompareKeys(t *testing.T) {
	words := []string{"", "a", "b", "ab", "abcdefgh", "abcdefgi", "abcdefgh1", "abcdefghabcdefgh", "abcdefghabcdefgg",
		"\x00", "\xff", "abcdefg\x80", "abcdefg\x7f", strings.Repeat("z", 40), strings.Repeat("z", 39) + "y"}
	for _, a := range words {
		for _, b := range words {
			if got, want := CompareKeys(a, b), strings.Compare(a, b); got != want {
				t.Errorf("CompareKeys(%q, %q) = %d, want %d", a, b, got, want)
			}
			if got, want := EqualKeys(a, b), a == b; got != want {
				t.Errorf("EqualKeys(%q, %q) = %v, want %v", a, b, got, want)
			}
		}
	}
}

// TestDuplicateCheckAllocatesNothing: a warm Parser checks a 200,000-key
// object for duplicates without allocating. The check used to fill a
// map[string] with views into the input, which under TinyGo made every
// collection walk the input once per key: a module froze for tens of
// seconds on such an object (host/adversarial_test.go times that).
func TestDuplicateCheckAllocatesNothing(t *testing.T) {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < 200000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strconv.Itoa(i) + `":0`)
	}
	doc := []byte(b.String() + "}")
	var ps Parser
	if _, err := ps.Parse(doc, Limits{}); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(3, func() { ps.Parse(doc, Limits{}) }); n != 0 {
		t.Errorf("warm Parser on 200,000 keys: %v allocations, want 0", n)
	}
	dup := append(doc[:len(doc)-1:len(doc)-1], `,"k123456":1}`...)
	if _, err := ps.Parse(dup, Limits{}); err == nil || !strings.Contains(err.Error(), `duplicate key "k123456"`) {
		t.Errorf("repeat at the end of 200,000 keys: %v", err)
	}
}

// TestSipHash: the reference implementation's first vectors (key 00..0f,
// message 00..n-1, the 64-bit output little-endian).
func TestSipHash(t *testing.T) {
	for n, want := range []uint64{0x726fdb47dd0e0e31, 0x74f839c593dc67fd, 0x0d6c8009d9a94f5a, 0x85676696d7fb7e2d} {
		msg := make([]byte, n)
		for i := range msg {
			msg[i] = byte(i)
		}
		if got := sipHash(string(msg)); got != want {
			t.Errorf("SipHash-2-4 of %d bytes = %#x, want %#x", n, got, want)
		}
	}
	msg := make([]byte, 15)
	for i := range msg {
		msg[i] = byte(i)
	}
	if got := sipHash(string(msg)); got != 0xa129ca6149be45e5 {
		t.Errorf("SipHash-2-4 of 15 bytes = %#x", got)
	}
}
