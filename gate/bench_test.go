package gate

import (
	"strconv"
	"strings"
	"testing"
)

var benchProse = []string{
	"To reset your password, open Settings, choose Security, and click Reset password. A reset link is sent to the e-mail address on the account and stays valid for 24 hours.",
	"Invoices are issued on the first day of each month and can be downloaded from the Billing page as PDF files; past invoices stay available for seven years.",
	"Accounts that sign in with single sign-on cannot reset their password here: ask your identity provider's administrator to reset it for you.",
	"Two-factor authentication adds a second step to sign-in. If you lose your phone, use one of the recovery codes you saved when you enabled it.",
	"Annual plans can be refunded within thirty days of purchase; after that, the remaining months are credited to the account instead of refunded.",
}

// proseRequest builds a realistic request: n prose chunks of about 150-300
// words with vector and BM25 scores, as a hybrid retriever returns them.
func proseRequest(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"query":"How do I reset my password if I lost my phone?","chunks":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		text := strings.Repeat(benchProse[i%len(benchProse)]+" ", 2+i%3)
		v := 0.9 - float64(i)*0.6/float64(n)
		bm := 18 - float64((i*7)%n)*15/float64(n)
		b.WriteString(`{"id":"c` + strconv.Itoa(i) + `","doc_id":"kb/` + strconv.Itoa(i%7) + `","title":"Article ` +
			strconv.Itoa(i) + `","text":"` + text + `","scores":{"vector":` + strconv.FormatFloat(v, 'f', 4, 64) +
			`,"bm25":` + strconv.FormatFloat(bm, 'f', 3, 64) + `}}`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func benchEvaluate(b *testing.B, n int) {
	e := presetEngine(b, "default")
	req := proseRequest(n)
	if _, err := e.Evaluate(req); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(req)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Evaluate(req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEvaluate5(b *testing.B)   { benchEvaluate(b, 5) }
func BenchmarkEvaluate20(b *testing.B)  { benchEvaluate(b, 20) }
func BenchmarkEvaluate100(b *testing.B) { benchEvaluate(b, 100) }

// BenchmarkDecide20 is the core without JSON, for the codec's share.
func BenchmarkDecide20(b *testing.B) {
	e := presetEngine(b, "default")
	req, err := DecodeRequest(proseRequest(20), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Decide(req); err != nil {
			b.Fatal(err)
		}
	}
}
