// Command workload prints the requests of one benchmark workload as JSON
// lines, for timing harnesses outside Go (examples/abi-host/check.mjs):
// the same requests bench/cmd/perf times, from TREC DL19 when the data is
// there, else the synthetic prose (said so on stderr).
//
//	go run ./bench/cmd/workload -chunks 20 -per 4 > requests.jsonl
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/ctxgate/ctxgate/bench"
)

func main() {
	chunks := flag.Int("chunks", 20, "chunks per request")
	per := flag.Int("per", 4, "passages joined into one chunk (4: ~1.5 KB chunks, bench/cmd/perf's \"chunks\" rows)")
	data := flag.String("data", "", "data directory (default $CTXGATE_DATA, else ../shared/data beside the working directory)")
	flag.Parse()
	dir := *data
	if dir == "" {
		dir = os.Getenv("CTXGATE_DATA")
	}
	if dir == "" {
		dir = filepath.Join("..", "shared", "data")
	}
	name := strconv.Itoa(*chunks) + " chunks"
	var w bench.Workload
	if d, err := bench.LoadDL19(dir); err == nil {
		w = d.Workload(name, *chunks, *per)
		fmt.Fprintf(os.Stderr, "workload: %s from TREC DL19, %d requests of %d bytes on average\n", name, len(w.Requests), w.MeanBytes())
	} else {
		w = bench.Synthetic(name, *chunks, *per)
		fmt.Fprintf(os.Stderr, "workload: %s of synthetic prose (%v), %d requests of %d bytes on average\n", name, err, len(w.Requests), w.MeanBytes())
	}
	out := bufio.NewWriter(os.Stdout)
	for _, r := range w.Requests {
		out.Write(r)
		out.WriteByte('\n')
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "workload:", err)
		os.Exit(1)
	}
}
