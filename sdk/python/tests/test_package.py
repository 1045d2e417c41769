"""The package installs offline: its build backend (standard library only)
makes a wheel holding every module, with one version everywhere."""

import importlib.util
import os
import re
import tempfile
import unittest
import zipfile

import assent

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def backend():
    spec = importlib.util.spec_from_file_location("assent_build", os.path.join(ROOT, "_build", "assent_build.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


class Package(unittest.TestCase):
    def test_one_version(self):
        with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
            self.assertEqual(assent.__version__, re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1))

    def test_wheel_holds_every_module(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        out = tmp.name
        name = backend().build_wheel(out)
        self.assertEqual("assent-%s-py3-none-any.whl" % assent.__version__, name)
        with zipfile.ZipFile(os.path.join(out, name)) as z:
            names = set(z.namelist())
            metadata = z.read("assent-%s.dist-info/METADATA" % assent.__version__).decode()
        modules = {"assent/" + f for f in os.listdir(os.path.join(ROOT, "assent")) if f.endswith(".py")}
        self.assertTrue(modules <= names, modules - names)
        self.assertIn("assent/py.typed", names)
        self.assertIn("Version: " + assent.__version__, metadata)
        self.assertIn("Requires-Python: >=3.9", metadata)


if __name__ == "__main__":
    unittest.main()
