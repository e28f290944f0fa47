package decode

import (
	"strings"
	"testing"
)

func TestDecodeAnswer(t *testing.T) {
	a, err := DecodeAnswer([]byte(`{"answer":"Plants use light [S1].","tags":["S1","S2","S10"]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Answer != "Plants use light [S1]." || len(a.Tags) != 3 || a.Tags[2] != "S10" {
		t.Errorf("answer = %+v", a)
	}
	a, err = DecodeAnswer([]byte(`{"answer":"I don't know.","query":" why? "}`), nil)
	if err != nil || a.Query != "why?" {
		t.Errorf("query: %+v %v", a, err)
	}
	a, err = DecodeAnswer([]byte(`{"answer":""}`), nil)
	if err != nil || a.Answer != "" || a.Tags != nil {
		t.Errorf("empty answer without tags: %+v %v", a, err)
	}
	a, err = DecodeAnswer([]byte(`{"answer":"x","tags":[]}`), nil)
	if err != nil || len(a.Tags) != 0 {
		t.Errorf("empty tags: %+v %v", a, err)
	}
}

func TestDecodeAnswerErrors(t *testing.T) {
	tests := []struct {
		name, in    string
		lim         *Limits
		code, field string
		msg         string
	}{
		{"empty", "", nil, CodeBadJSON, "", "empty request"},
		{"not json", `{"answer"`, nil, CodeBadJSON, "", "invalid JSON"},
		{"array", `["x"]`, nil, CodeBadJSON, "", "must be a JSON object"},
		{"missing answer", `{"tags":["S1"]}`, nil, CodeBadAnswer, "answer", "is required"},
		{"answer not string", `{"answer":1}`, nil, CodeBadAnswer, "answer", "must be a string"},
		{"unknown field", `{"answer":"x","decision":{}}`, nil, CodeBadAnswer, "decision", "unknown field"},
		{"tags not array", `{"answer":"x","tags":"S1"}`, nil, CodeBadAnswer, "tags", "must be an array"},
		{"tag not string", `{"answer":"x","tags":["S1",2]}`, nil, CodeBadAnswer, "tags[1]", "must be a string"},
		{"tag lower case", `{"answer":"x","tags":["s1"]}`, nil, CodeBadAnswer, "tags[0]", "source tag"},
		{"tag zero", `{"answer":"x","tags":["S0"]}`, nil, CodeBadAnswer, "tags[0]", "source tag"},
		{"tag leading zero", `{"answer":"x","tags":["S01"]}`, nil, CodeBadAnswer, "tags[0]", "source tag"},
		{"tag bracketed", `{"answer":"x","tags":["[S1]"]}`, nil, CodeBadAnswer, "tags[0]", "source tag"},
		{"tag too long", `{"answer":"x","tags":["S12345678901"]}`, nil, CodeBadAnswer, "tags[0]", "source tag"},
		{"duplicate tag", `{"answer":"x","tags":["S1","S2","S1"]}`, nil, CodeBadAnswer, "tags[2]", `duplicate tag "S1"`},
		{"too many tags", `{"answer":"x","tags":["S1","S2","S3"]}`, &Limits{MaxChunks: 2}, CodeLimit, "tags", "(max_chunks)"},
		{"query not string", `{"answer":"x","query":[]}`, nil, CodeBadAnswer, "query", "must be a string"},
		{"query too long", `{"answer":"x","query":"abcdef"}`, &Limits{MaxQueryBytes: 5}, CodeLimit, "query", "(max_query_bytes)"},
		{"too big", `{"answer":"xxxxxxxxxx"}`, &Limits{MaxRequestBytes: 10}, CodeLimit, "", "(max_request_bytes)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := DecodeAnswer([]byte(tc.in), tc.lim)
			e, ok := err.(*Error)
			if !ok || a != nil {
				t.Fatalf("got %+v, %v", a, err)
			}
			if e.Code != tc.code || e.Field != tc.field || !strings.Contains(e.Message, tc.msg) {
				t.Errorf("got %s %q %q, want %s %q containing %q", e.Code, e.Field, e.Message, tc.code, tc.field, tc.msg)
			}
		})
	}
}
