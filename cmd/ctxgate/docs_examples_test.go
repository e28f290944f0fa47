package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxgate/ctxgate/internal/testmodules"
)

// The shell examples of the docs, run as a reader would run them: a block
// marked `<!-- doccheck -->` on the line before its fence runs command by
// command in a scratch directory where `ctxgate` and `bin/ctxgate` are this
// CLI, testdata/, policies/ and examples/ are the repository's, and
// `<!-- doccheck: files NAME=PATH ... -->` puts repository files under the
// names the example uses. A line `$ CMD` is followed by the output the doc
// shows, which CMD must print ("..." leaves a part out; line breaks and the
// indentation after them are ignored, so long JSON can be wrapped). Any
// other command must exit 0, or N when its comment starts with `exit N`; it
// runs in bash without pipefail, as a reader's shell reports a pipeline.
//
// In README.md and the packages' READMEs every sh block must say what
// happens to it: doccheck, or `<!-- doccheck: skip REASON -->` (a server in
// the foreground, an install that scripts/test-install.sh runs, ...).
// Elsewhere in docs/ the marker is opt-in.

// docsWithRequiredMarkers must mark every sh block.
var docsWithRequiredMarkers = []string{"README.md", "host/README.md", "packages/js/README.md", "packages/python/README.md"}

// docBlockRun is one marked block.
type docBlockRun struct {
	doc   string
	line  int // of the fence
	skip  string
	files map[string]string // name in the scratch dir -> repository path
	body  []string
}

var markerRE = regexp.MustCompile(`^<!-- doccheck(?::\s*(.*?))?\s*-->$`)

// markedBlocks returns doc's marked sh blocks, and the lines of the sh
// blocks that have no marker.
func markedBlocks(t *testing.T, doc string) (blocks []docBlockRun, unmarked []int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", doc))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		if lines[i] != "```sh" {
			continue
		}
		var body []string
		j := i + 1
		for ; j < len(lines) && lines[j] != "```"; j++ {
			body = append(body, lines[j])
		}
		m := (i > 0) && markerRE.MatchString(lines[i-1])
		if !m {
			unmarked = append(unmarked, i+1)
			i = j
			continue
		}
		blk := docBlockRun{doc: doc, line: i + 1, body: body, files: map[string]string{}}
		arg := markerRE.FindStringSubmatch(lines[i-1])[1]
		switch {
		case strings.HasPrefix(arg, "skip"):
			blk.skip = strings.TrimSpace(strings.TrimPrefix(arg, "skip"))
			if blk.skip == "" {
				t.Errorf("%s:%d: doccheck: skip needs a reason", doc, i)
			}
		case strings.HasPrefix(arg, "files "):
			for _, kv := range strings.Fields(strings.TrimPrefix(arg, "files ")) {
				name, path, ok := strings.Cut(kv, "=")
				if !ok {
					t.Fatalf("%s:%d: doccheck files: %q is not NAME=PATH", doc, i, kv)
				}
				blk.files[name] = path
			}
		case arg != "":
			t.Fatalf("%s:%d: unknown doccheck argument %q", doc, i, arg)
		}
		blocks = append(blocks, blk)
		i = j
	}
	return blocks, unmarked
}

// docCommand is one command of a block: its text, and the output it must
// print (console form) or the exit code it must end with.
type docCommand struct {
	cmd     string
	output  *string
	exit    int
	lineNum int
}

var exitCommentRE = regexp.MustCompile(`\s+#\s*exit (\d+)\b.*$`)

// commands splits a block into commands.
func (b docBlockRun) commands() []docCommand {
	var out []docCommand
	for i := 0; i < len(b.body); i++ {
		line := b.body[i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		c := docCommand{lineNum: b.line + 1 + i}
		console := strings.HasPrefix(line, "$ ")
		line = strings.TrimPrefix(line, "$ ")
		for strings.HasSuffix(line, `\`) && i+1 < len(b.body) {
			i++
			line = strings.TrimRight(line[:len(line)-1], " ") + " " + strings.TrimSpace(b.body[i])
		}
		if m := exitCommentRE.FindStringSubmatch(line); m != nil {
			c.exit, _ = strconv.Atoi(m[1])
		}
		c.cmd = line
		if console {
			var shown []string
			for i+1 < len(b.body) && !strings.HasPrefix(b.body[i+1], "$ ") {
				i++
				shown = append(shown, b.body[i])
			}
			s := strings.Join(shown, "\n")
			c.output = &s
		}
		out = append(out, c)
	}
	return out
}

// shownMatches reports whether got is the output a doc shows: the same
// text once line breaks and the whitespace around them are removed from
// both, where each "..." of shown stands for anything.
func shownMatches(shown, got string) bool {
	squash := regexp.MustCompile(`[ \t]*\n[ \t]*`)
	shown, got = squash.ReplaceAllString(strings.TrimSpace(shown), ""), squash.ReplaceAllString(strings.TrimSpace(got), "")
	parts := strings.Split(shown, "...")
	if len(parts) == 1 {
		return shown == got
	}
	if !strings.HasPrefix(got, strings.TrimSpace(parts[0])) {
		return false
	}
	rest := got[len(strings.TrimSpace(parts[0])):]
	for i, p := range parts[1:] {
		p = strings.TrimSpace(p)
		if i == len(parts)-2 {
			return strings.HasSuffix(rest, p)
		}
		k := strings.Index(rest, p)
		if k < 0 {
			return false
		}
		rest = rest[k+len(p):]
	}
	return true
}

func TestShownMatches(t *testing.T) {
	for _, c := range []struct {
		shown, got string
		want       bool
	}{
		{`{"a":1}`, `{"a":1}`, true},
		{`{"a":1}`, `{"a":2}`, false},
		{"{\"a\":1, ...\n  \"c\":3}", `{"a":1,"b":2,"c":3}`, true},
		{`{"a":1, ... "d":4}`, `{"a":1,"b":2,"c":3}`, false},
		{`x ... y ...`, `x 1 y 2`, true},
		{`x ... y ...`, `x 1 z 2`, false},
		{"action  refuse\nconfidence 0.2", "action  refuse\nconfidence 0.2\n", true},
		{"exit 3", "exit 0", false},
	} {
		if got := shownMatches(c.shown, c.got); got != c.want {
			t.Errorf("shownMatches(%q, %q) = %v", c.shown, c.got, got)
		}
	}
}

// The exit comment and the console form are read as meant.
func TestDocCommands(t *testing.T) {
	b := docBlockRun{line: 10, body: []string{
		"ctxgate policies                 # the presets",
		"ctxgate eval x.json > d.json     # exit 3 when refused",
		"$ ctxgate eval a.json \\",
		"    --format json",
		`{"action":...}`,
		"$ true",
	}}
	cs := b.commands()
	if len(cs) != 4 || cs[0].exit != 0 || cs[1].exit != 3 || cs[2].cmd != "ctxgate eval a.json --format json" ||
		cs[2].output == nil || *cs[2].output != `{"action":...}` || cs[3].output == nil || *cs[3].output != "" {
		t.Fatalf("commands: %+v", cs)
	}
}

func TestDocExamples(t *testing.T) {
	if embedded := filepath.Join("..", "..", "host", "wasm", "ctxgate.wasm"); !fileExists(embedded) {
		testmodules.NotBuilt(t, "tinygo", errors.New(embedded+" is missing or empty"))
	}
	docs := append([]string(nil), docsWithRequiredMarkers...)
	more, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	for _, m := range more {
		docs = append(docs, filepath.ToSlash(strings.TrimPrefix(m, filepath.Join("..", "..")+string(filepath.Separator))))
	}
	ran := 0
	for _, doc := range docs {
		blocks, unmarked := markedBlocks(t, doc)
		if slicesContain(docsWithRequiredMarkers, doc) && len(unmarked) > 0 {
			t.Errorf("%s: the sh blocks at lines %v have no <!-- doccheck --> or <!-- doccheck: skip REASON --> marker", doc, unmarked)
		}
		for _, b := range blocks {
			if b.skip != "" {
				continue
			}
			ran++
			t.Run(strings.ReplaceAll(doc, "/", "_")+":"+strconv.Itoa(b.line), func(t *testing.T) { runDocBlock(t, b) })
		}
	}
	if ran < 5 {
		t.Errorf("only %d doc blocks ran: the markers are gone?", ran)
	}
}

func slicesContain(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// runDocBlock runs b's commands in order in one scratch directory.
func runDocBlock(t *testing.T, b docBlockRun) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	writeCLIShim(t, bin)
	for _, d := range []string{"testdata", "policies", "examples"} {
		os.Symlink(filepath.Join(root, d), filepath.Join(dir, d))
	}
	for name, path := range b.files {
		data, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatalf("%s:%d: doccheck files: %v", b.doc, b.line, err)
		}
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"XDG_CACHE_HOME="+cacheDir, "HOME="+dir)
	for _, c := range b.commands() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, "bash", "-c", c.cmd)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		cancel()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s:%d: %s: %v", b.doc, c.lineNum, c.cmd, err)
		}
		if c.output != nil {
			if !shownMatches(*c.output, string(out)) {
				t.Errorf("%s:%d: `%s` prints what the doc does not show:\n%s\nthe doc shows:\n%s", b.doc, c.lineNum, c.cmd, out, *c.output)
			}
			continue
		}
		if code != c.exit {
			t.Errorf("%s:%d: `%s` exits %d, the doc says %d:\n%s", b.doc, c.lineNum, c.cmd, code, c.exit, out)
		}
	}
}
