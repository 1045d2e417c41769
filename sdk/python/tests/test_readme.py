"""README.md's first example works when pasted: it runs, as a script of its
own, against a real `assent dev`, and the README's second block (the demo
administrator deciding with a correction) answers it."""

import os
import re
import subprocess
import sys
import unittest
from unittest import mock

import assent

from tests.test_e2e import setUpModule as start_dev, tearDownModule as stop_dev  # noqa: F401
from tests import test_e2e

HERE = os.path.dirname(os.path.abspath(__file__))
README = os.path.join(HERE, "..", "README.md")


def python_blocks():
    with open(README, encoding="utf-8") as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


def setUpModule() -> None:
    start_dev()


def tearDownModule() -> None:
    stop_dev()


class Readme(unittest.TestCase):
    def test_first_example_reaches_a_persons_decision(self):
        dev = test_e2e.dev()
        example, decide = python_blocks()[0], python_blocks()[1]
        self.assertLessEqual(len(example.strip().splitlines()), 12, "the first example stays short")
        env = dict(os.environ, PYTHONPATH=os.path.join(HERE, ".."), ASSENT_BASE_URL=dev.base_url, ASSENT_API_KEY=dev.agent_key)
        proc = subprocess.Popen([sys.executable, "-c", example], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            first = proc.stdout.readline()
            self.assertIn("Waiting for a decision on " + dev.base_url + "/approvals/apr_", first)
            # The person decides as the README's second block says.
            with mock.patch.dict(os.environ, {"ASSENT_BASE_URL": dev.base_url}):
                exec(decide, {"assent": assent, "ADMIN_TOKEN": dev.member("admin")["token"]})
            rest, _ = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
        self.assertEqual(0, proc.returncode, first + rest)
        self.assertIn("Refunding {'amount': 100, 'currency': 'EUR'}", rest)


if __name__ == "__main__":
    unittest.main()
