"""The in-tree build backend (build_backend/ctxgate_build.py): the wheel and
sdist it writes, their metadata and RECORD, byte-identical rebuilds, and its
TOML subset reading pyproject.toml as tomllib does. scripts/test-install.sh
installs the package with pip, offline, in a venv and with --user."""

import base64
import csv
import hashlib
import io
import sys
import tarfile
import tempfile
import unittest
import zipfile
from pathlib import Path

PKG = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PKG / "build_backend"))
import ctxgate_build  # noqa: E402


class BuildTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = Path(self.tmp.name)

    def test_wheel(self) -> None:
        import tomllib

        project = tomllib.loads((PKG / "pyproject.toml").read_text())["project"]
        name = ctxgate_build.build_wheel(str(self.dir))
        self.assertEqual(name, f"ctxgate-{project['version']}-py3-none-any.whl")
        with zipfile.ZipFile(self.dir / name) as z:
            names = z.namelist()
            src = sorted(p.relative_to(PKG / "src").as_posix() for p in (PKG / "src").rglob("*")
                         if p.is_file() and "__pycache__" not in p.parts)
            dist_info = f"ctxgate-{project['version']}.dist-info/"
            self.assertEqual(names, src + [dist_info + n for n in ("METADATA", "WHEEL", "LICENSE", "RECORD")])
            self.assertIn("ctxgate/py.typed", names)
            meta = z.read(dist_info + "METADATA").decode()
            for line in ("Name: ctxgate", "Version: " + project["version"], "Summary: " + project["description"],
                         "Requires-Python: " + project["requires-python"], "License: Apache-2.0"):
                self.assertIn(line + "\n", meta)
            self.assertNotIn("Requires-Dist", meta)
            self.assertIn("\n\n# ctxgate (Python)", meta)  # the README, as the long description
            # RECORD lists every other file with its sha256 and size.
            rows = list(csv.reader(io.StringIO(z.read(dist_info + "RECORD").decode())))
            self.assertEqual([r[0] for r in rows], names)
            for arc, digest, size in rows[:-1]:
                data = z.read(arc)
                want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                self.assertEqual((digest, int(size)), ("sha256=" + want, len(data)), arc)
        first = (self.dir / name).read_bytes()
        (self.dir / "again").mkdir()
        ctxgate_build.build_wheel(str(self.dir / "again"))
        self.assertEqual((self.dir / "again" / name).read_bytes(), first, "a rebuild differs")

    def test_sdist(self) -> None:
        name = ctxgate_build.build_sdist(str(self.dir))
        base = name[: -len(".tar.gz")]
        with tarfile.open(self.dir / name) as t:
            names = t.getnames()
            for want in ("pyproject.toml", "README.md", "LICENSE", "PKG-INFO", "build_backend/ctxgate_build.py",
                         "src/ctxgate/__init__.py", "src/ctxgate/py.typed"):
                self.assertIn(f"{base}/{want}", names)
            self.assertFalse([n for n in names if "__pycache__" in n or n.endswith(".pyc")])
        # The sdist builds the same wheel as the tree.
        with tempfile.TemporaryDirectory() as d:
            with tarfile.open(self.dir / name) as t:
                t.extractall(d)
            out = Path(d) / "out"
            out.mkdir()
            import subprocess
            subprocess.run([sys.executable, "-c", "import sys, ctxgate_build; print(ctxgate_build.build_wheel(sys.argv[1]))", str(out)],
                           cwd=Path(d) / base / "build_backend", check=True, capture_output=True, timeout=60)
            whl = ctxgate_build.build_wheel(str(self.dir))
            self.assertEqual((out / whl).read_bytes(), (self.dir / whl).read_bytes())

    def test_editable(self) -> None:
        name = ctxgate_build.build_editable(str(self.dir))
        with zipfile.ZipFile(self.dir / name) as z:
            self.assertEqual(z.read("_ctxgate_editable.pth").decode().strip(), str(PKG / "src"))

    def test_toml_subset_reads_pyproject_as_tomllib(self) -> None:
        import tomllib

        text = (PKG / "pyproject.toml").read_text()
        self.assertEqual(ctxgate_build.parse_toml_subset(text), tomllib.loads(text))
        with self.assertRaises(ValueError):
            ctxgate_build.parse_toml_subset("x = 1\n")

    def test_nothing_to_fetch(self) -> None:
        for hook in (ctxgate_build.get_requires_for_build_wheel, ctxgate_build.get_requires_for_build_sdist,
                     ctxgate_build.get_requires_for_build_editable):
            self.assertEqual(hook(), [])


if __name__ == "__main__":
    unittest.main()
