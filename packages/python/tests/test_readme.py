"""The README's "Use" example, run as written against a real `ctxgate serve`
(test_client.Serve), with `llm` and `question` defined for it. A line whose
comment is a Python literal (`d.action  # "caveat"`) must evaluate to that
value; a string ending in "..." shows its start."""

import ast
import os
import re
import tempfile
import unittest
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from test_client import PKG, Serve

serve: Optional[Serve] = None


def setUpModule() -> None:
    global serve
    serve = Serve("--gap-log", os.path.join(tempfile.mkdtemp(prefix="ctxgate-py-readme-"), "gaps.jsonl"))


def tearDownModule() -> None:
    if serve:
        serve.stop()


def readme_block(heading: str, lang: str) -> str:
    text = (PKG / "README.md").read_text()
    at = text.index("\n" + heading + "\n")
    m = re.search("```" + lang + r"\n(.*?)```", text[at:], re.S)
    assert m, f"README.md has no {lang} block under {heading}"
    return m.group(1)


def shown_checks(block: str) -> Tuple[str, int]:
    """The block with each `expr  # literal` line turned into a check."""
    out: List[str] = []
    n = 0
    for i, line in enumerate(block.split("\n"), start=1):
        m = re.match(r"^(\s*)(\S.*?)\s+#\s*(.+)$", line)
        if m:
            try:
                ast.parse(m.group(2), mode="eval")  # an expression, not a statement
                value = ast.literal_eval(m.group(3))
            except (SyntaxError, ValueError):
                value = None
            else:
                out.append(f"{m.group(1)}__shown({m.group(2)}, {value!r}, {i})")
                n += 1
                continue
        out.append(line)
    return "\n".join(out), n


def matches_shown(actual: Any, shown: Any) -> bool:
    if isinstance(shown, str) and shown.endswith("..."):
        return isinstance(actual, str) and actual.startswith(shown[:-3])
    return actual == shown


class ReadmeTest(unittest.TestCase):
    def test_use_example_prints_what_its_comments_show(self) -> None:
        assert serve is not None
        block = readme_block("## Use", "python")
        self.assertIn('Client("http://127.0.0.1:8080"', block)
        code, n = shown_checks(block.replace("http://127.0.0.1:8080", serve.url))
        self.assertGreaterEqual(n, 3, "the example shows fewer values than it did")
        seen: List[int] = []

        def shown(actual: Any, value: Any, line: int) -> None:
            self.assertTrue(matches_shown(actual, value), f"README example line {line}: shows {value!r}, the code gives {actual!r}")
            seen.append(line)

        env: Dict[str, Any] = {
            "__shown": shown,
            "question": "How do I reset my password?",
            "llm": lambda prompt: "Open Settings, choose Security [S1].",
        }
        exec(compile(code, str(PKG / "README.md"), "exec"), env)
        self.assertEqual(len(seen), n, "not every shown value was reached")


if __name__ == "__main__":
    unittest.main()
