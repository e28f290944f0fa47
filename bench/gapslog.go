package bench

import (
	"bufio"
	"io"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"time"
)

// GapLog writes n synthetic gap-log lines, as ctxgate serve writes them, for
// measuring `ctxgate gaps report` at scale (bench/cmd/perf). The shape is a
// busy deployment's month: a long tail of gaps (the top gap 5% of events,
// sizes falling as 1/rank down to pairs, 70% of events) and 30% one-off
// questions, interleaved; events 250 ms apart (10M events span 29 days).
// Each gap is a topic of four made-up words, asked in up to 16 wordings
// (help-desk scaffolding, word order, inflections, now and then a word left
// out; the first wordings far more often than the last, as people repeat
// the common phrasings); each event carries the support-agent signals, two
// top chunks and the policy.
// The same n and seed give the same bytes.
func GapLog(w io.Writer, n int, seed uint64) error {
	r := rand.New(rand.NewPCG(seed, 0x6761706c6f67))
	// Topic of every event: gaps by size, then one-offs (-1), shuffled.
	topic := make([]int32, 0, n)
	top := max(n/20, 2)
	for k := 1; len(topic) < n*7/10; k++ {
		for s := max(top/k, 2); s > 0 && len(topic) < n*7/10; s-- {
			topic = append(topic, int32(k-1))
		}
	}
	for len(topic) < n {
		topic = append(topic, -1)
	}
	r.Shuffle(len(topic), func(i, j int) { topic[i], topic[j] = topic[j], topic[i] })

	bw := bufio.NewWriterSize(w, 1<<20)
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	scaffolds := [][2]string{{"How do I ", "?"}, {"how can i ", ""}, {"Where can I ", ""}, {"what is the way to ", ""},
		{"I need to ", ", please"}, {"Is there a way to ", "?"}, {"help: ", ""}, {"", ""}, {"can you tell me how to ", ""}, {"why can't I ", ""}}
	kinds := []string{"refusal_hard", "refusal_hard", "low_confidence", "low_confidence", "refusal_soft", "thumbs_down"}
	var line []byte
	oneOff := int64(1 << 40)
	for i, tp := range topic {
		line = line[:0]
		var words []int64
		// The wording: one of 16 per gap, geometric (half the events ask
		// the first); a one-off question's its own.
		v := uint64(bits.TrailingZeros32(r.Uint32()|1<<15)) & 15
		h := mix(uint64(tp)<<8 | v)
		if tp >= 0 {
			base := int64(tp) * 4
			words = []int64{base, base + 1, base + 2, base + 3}
			if h%3 == 0 {
				d := int(h>>2) % 4
				words = append(words[:d:d], words[d+1:]...)
			}
			for a := len(words) - 1; a > 0; a-- { // the wording's word order
				b := int(mix(h+uint64(a)) % uint64(a+1))
				words[a], words[b] = words[b], words[a]
			}
		} else {
			words = []int64{oneOff, oneOff + 1, oneOff + 2}
			oneOff += 3
			h = r.Uint64()
		}
		sc := scaffolds[h>>8%uint64(len(scaffolds))]
		kind := kinds[r.IntN(len(kinds))]
		line = append(line, `{"kind":"`...)
		line = append(line, kind...)
		line = append(line, `","query":"`...)
		line = append(line, sc[0]...)
		for j, wd := range words {
			if j > 0 {
				line = append(line, " the "...)
			}
			line = appendWord(line, wd)
			switch h >> (16 + 2*j) & 3 {
			case 0:
				line = append(line, 's')
			case 1:
				line = append(line, "ing"...)
			}
		}
		line = append(line, sc[1]...)
		best := r.Float64()
		cov := r.Float64()
		line = append(line, `","confidence":`...)
		line = strconv.AppendFloat(line, best*0.6, 'f', 3, 64)
		line = append(line, `,"signals":{"max_similarity":`...)
		line = strconv.AppendFloat(line, best, 'f', 3, 64)
		line = append(line, `,"coverage":`...)
		line = strconv.AppendFloat(line, cov, 'f', 3, 64)
		line = append(line, `,"coverage_best_chunk":`...)
		line = strconv.AppendFloat(line, cov*0.8, 'f', 3, 64)
		line = append(line, `,"evidence_top":`...)
		line = strconv.AppendFloat(line, best*0.9, 'f', 3, 64)
		line = append(line, `},"top_chunks":[`...)
		doc := int64(r.IntN(50_000))
		if tp >= 0 {
			doc = int64(tp) / 3 // neighbouring gaps retrieve the same documents
		}
		for c := 0; c < 2; c++ {
			if c > 0 {
				line = append(line, ',')
			}
			line = append(line, `{"id":"kb/d`...)
			line = strconv.AppendInt(line, doc+int64(c), 10)
			line = append(line, `#c1","doc_id":"kb/d`...)
			line = strconv.AppendInt(line, doc+int64(c), 10)
			line = append(line, `","score":`...)
			line = strconv.AppendFloat(line, best*0.9/float64(c+1), 'f', 3, 64)
			line = append(line, '}')
		}
		line = append(line, `],"time":"`...)
		line = t0.Add(time.Duration(i)*250*time.Millisecond).AppendFormat(line, time.RFC3339Nano)
		line = append(line, `","decision_id":"dec-`...)
		line = strconv.AppendInt(line, int64(i), 10)
		line = append(line, `","policy":{"name":"support-agent","version":"1","sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}}`+"\n"...)
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func mix(x uint64) uint64 {
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// appendWord appends made-up word number i: three consonant-vowel
// syllables and i in letters, so that no two words are one letter apart
// and the stemmer treats them as words (it leaves anything with a digit).
func appendWord(dst []byte, i int64) []byte {
	const cons, vows = "bcdfghjklmnpqrstvwz", "aeiou"
	x := uint64(i)*0x9e3779b97f4a7c15 + 0x632be59bd9b4e019
	x ^= x >> 31
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 29
	for k := 0; k < 3; k++ {
		dst = append(dst, cons[x%19], vows[(x/19)%5])
		x /= 19 * 5
	}
	for {
		dst = append(dst, byte('a'+i%26))
		i /= 26
		if i == 0 {
			return dst
		}
	}
}
