// Package eval measures the gate on public labeled data (issue 9): TREC DL19
// passages with real retriever scores and ClapNQ answerable/unanswerable
// questions. It reads the data from ../shared/data beside the repository and
// never copies it into the repository.
package eval

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNoData is returned when the data directory is absent, so that tests and
// the CLI can skip with a message instead of failing.
var ErrNoData = errors.New("eval: labeled data not found (expected ../shared/data beside the repository)")

// Retriever names, as the files in trec-dl*/retrieve_results name them.
const (
	BM25    = "BM25"
	BM25RM3 = "BM25_RM3"
	Ada2    = "OPEN_AI_ADA2"
	TASB    = "D_BERT_KD_TASB"
	Splade  = "SPLADE_P_P_ENSEMBLE_DISTIL"
)

// Hit is one retrieved passage of one retriever.
type Hit struct {
	DocID   string
	Content string
	Rank    int // 1-based, as in the files
	Score   float64
}

// Run is one retriever's ranked list for one query.
type Run struct {
	QID   string
	Query string
	Hits  []Hit
}

// TREC is one TREC Deep Learning passage set (DL19 or DL21): queries in file
// order, graded qrels, and each retriever's top-100 lists keyed by query id.
type TREC struct {
	Set    string                    // "dl19" or "dl21": the split's hash key
	QIDs   []string                  // in the order of the BM25 run file
	Query  map[string]string         // qid -> text (from the topics file)
	Qrels  map[string]map[string]int // qid -> docid -> grade 0..3
	Runs   map[string]map[string]*Run
	Passes map[string]string // docid -> passage text, from any retriever
}

// ClapNQ is one ClapNQ dev question with its single on-topic passage.
type ClapNQ struct {
	ID         string
	Question   string
	Title      string
	Passage    string
	Answerable bool
}

// FindDataDir returns the shared data directory for a repository root:
// $CTXGATE_DATA when set, else <root>/../shared/data. It returns ErrNoData
// when the directory does not exist.
func FindDataDir(root string) (string, error) {
	dir := os.Getenv("CTXGATE_DATA")
	if dir == "" {
		dir = filepath.Join(root, "..", "shared", "data")
	}
	if st, err := os.Stat(filepath.Join(dir, "trec-dl19")); err != nil || !st.IsDir() {
		return "", ErrNoData
	}
	if st, err := os.Stat(filepath.Join(dir, "clapnq-dev")); err != nil || !st.IsDir() {
		return "", ErrNoData
	}
	return dir, nil
}

// DataDirFrom is FindDataDir for the repository holding dir.
func DataDirFrom(dir string) (string, error) {
	root, err := FindRoot(dir)
	if err != nil {
		return "", err
	}
	return FindDataDir(root)
}

// LoadSetsFrom loads both labeled sets for the repository holding dir; the
// error is ErrNoData when the data is absent, so callers can skip.
func LoadSetsFrom(dir string) (*DL19, []ClapNQ, error) {
	data, err := DataDirFrom(dir)
	if err != nil {
		return nil, nil, err
	}
	d, err := LoadDL19(data)
	if err != nil {
		return nil, nil, err
	}
	c, err := LoadClapNQ(data)
	if err != nil {
		return nil, nil, err
	}
	return d, c, nil
}

// FindRoot walks up from dir to the directory holding go.mod.
func FindRoot(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		p := filepath.Dir(d)
		if p == d {
			return "", fs.ErrNotExist
		}
		d = p
	}
}

// DL19 is the TREC DL19 set; its name is kept for the callers that only
// ever read DL19.
type DL19 = TREC

// trecFiles names one TREC set's files and retrievers.
type trecFiles struct {
	dir, topics, qrels, runSuffix string
	retrievers                    []string
}

var trecSets = map[string]trecFiles{
	"dl19": {"trec-dl19", "topics.dl19-passage.txt", "qrels.dl19-passage.txt", ".dl19.json.gz",
		[]string{BM25, Ada2, TASB, Splade}},
	"dl21": {"trec-dl21", "topics.dl21.txt", "qrels.dl21-passage.txt", ".dl21.json.gz",
		[]string{BM25, BM25RM3, Splade}},
}

// LoadDL19 reads DL19's topics, qrels and its four retrievers' runs.
func LoadDL19(dataDir string) (*TREC, error) { return LoadTREC(dataDir, "dl19") }

// LoadDL21 reads DL21's topics, qrels and its three retrievers' runs.
func LoadDL21(dataDir string) (*TREC, error) { return LoadTREC(dataDir, "dl21") }

// LoadTRECOnce returns a LoadTREC that reads each set once and hands
// every later caller the same *TREC: the answer-removed pairs name a set
// once per retriever, and each set is tens of megabytes of runs.
func LoadTRECOnce(dataDir string) func(set string) (*TREC, error) {
	sets := map[string]*TREC{}
	return func(set string) (*TREC, error) {
		if d := sets[set]; d != nil {
			return d, nil
		}
		d, err := LoadTREC(dataDir, set)
		if err == nil {
			sets[set] = d
		}
		return d, err
	}
}

// LoadTREC reads one TREC set ("dl19" or "dl21").
func LoadTREC(dataDir, set string) (*TREC, error) {
	files, ok := trecSets[set]
	if !ok {
		return nil, errors.New("eval: no TREC set " + strconv.Quote(set))
	}
	dir := filepath.Join(dataDir, files.dir)
	d := &TREC{
		Set:    set,
		Query:  map[string]string{},
		Qrels:  map[string]map[string]int{},
		Runs:   map[string]map[string]*Run{},
		Passes: map[string]string{},
	}
	if err := eachLine(filepath.Join(dir, files.topics), func(line string) error {
		qid, text, ok := strings.Cut(line, "\t")
		if !ok {
			return errors.New("topics: no tab in line " + strconv.Quote(line))
		}
		d.Query[qid] = text
		return nil
	}); err != nil {
		return nil, err
	}
	if err := eachLine(filepath.Join(dir, files.qrels), func(line string) error {
		f := strings.Fields(line)
		if len(f) != 4 {
			return errors.New("qrels: want 4 fields in " + strconv.Quote(line))
		}
		g, err := strconv.Atoi(f[3])
		if err != nil {
			return err
		}
		if d.Qrels[f[0]] == nil {
			d.Qrels[f[0]] = map[string]int{}
		}
		d.Qrels[f[0]][f[2]] = g
		return nil
	}); err != nil {
		return nil, err
	}
	for _, r := range files.retrievers {
		runs, err := loadRuns(filepath.Join(dir, "retrieve_results", r+files.runSuffix))
		if err != nil {
			return nil, err
		}
		m := map[string]*Run{}
		for _, run := range runs {
			m[run.QID] = run
			for _, h := range run.Hits {
				if _, ok := d.Passes[h.DocID]; !ok {
					d.Passes[h.DocID] = h.Content
				}
			}
			if r == BM25 {
				d.QIDs = append(d.QIDs, run.QID)
			}
		}
		d.Runs[r] = m
	}
	return d, nil
}

func loadRuns(path string) ([]*Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var raw []struct {
		Query string `json:"query"`
		Hits  []struct {
			Content string      `json:"content"`
			QID     json.Number `json:"qid"`
			DocID   string      `json:"docid"`
			Rank    int         `json:"rank"`
			Score   float64     `json:"score"`
		} `json:"hits"`
	}
	dec := json.NewDecoder(zr)
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, errors.New(path + ": " + err.Error())
	}
	out := make([]*Run, 0, len(raw))
	for _, q := range raw {
		if len(q.Hits) == 0 {
			continue
		}
		run := &Run{QID: q.Hits[0].QID.String(), Query: q.Query}
		for _, h := range q.Hits {
			run.Hits = append(run.Hits, Hit{DocID: h.DocID, Content: h.Content, Rank: h.Rank, Score: h.Score})
		}
		out = append(out, run)
	}
	return out, nil
}

// LoadClapNQ reads the 300 answerable and 300 unanswerable dev questions,
// answerable first, each in file order.
func LoadClapNQ(dataDir string) ([]ClapNQ, error) {
	var out []ClapNQ
	for _, kind := range []string{"answerable", "unanswerable"} {
		path := filepath.Join(dataDir, "clapnq-dev", "clapnq_dev_"+kind+".jsonl")
		err := eachLine(path, func(line string) error {
			var rec struct {
				ID       string `json:"id"`
				Input    string `json:"input"`
				Passages []struct {
					Title string `json:"title"`
					Text  string `json:"text"`
				} `json:"passages"`
				Output []struct {
					Answer string `json:"answer"`
				} `json:"output"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				return errors.New(path + ": " + err.Error())
			}
			if len(rec.Passages) == 0 {
				return errors.New(path + ": record " + rec.ID + " has no passage")
			}
			ans := len(rec.Output) > 0 && rec.Output[0].Answer != ""
			if ans != (kind == "answerable") {
				return errors.New(path + ": record " + rec.ID + " label disagrees with its file")
			}
			out = append(out, ClapNQ{ID: rec.ID, Question: rec.Input, Title: rec.Passages[0].Title,
				Passage: rec.Passages[0].Text, Answerable: ans})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func eachLine(path string, fn func(string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if err := fn(line); err != nil {
			return err
		}
	}
	return sc.Err()
}
