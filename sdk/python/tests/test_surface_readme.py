"""README.md lists every public method and function with its signature:
the block under "## Every method" is what this test makes of the package
(run it to see the listing when they differ)."""

import datetime as dt
import inspect
import os
import re
import unittest

import assent
from assent.client import Admin

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")


def signature(fn) -> str:
    parts, star = [], False
    for p in inspect.signature(fn).parameters.values():
        if p.name == "self":
            continue
        if p.kind == p.VAR_POSITIONAL:
            parts.append("*" + p.name)
            star = True
            continue
        if p.kind == p.VAR_KEYWORD:
            parts.append("**" + p.name)
            continue
        if p.kind == p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if p.default is p.empty:
            parts.append(p.name)
        elif p.default == dt.timedelta(days=1):
            parts.append(p.name + "=ONE_DAY")
        else:
            parts.append("%s=%r" % (p.name, p.default))
    return "(" + ", ".join(parts) + ")"


def listing():
    client = assent.Client("http://127.0.0.1:1", "k")
    resources = []
    for name, r in vars(client).items():
        if isinstance(r, Admin):
            resources += [("admin." + n, x) for n, x in vars(r).items()]
        elif not name.startswith("_") and hasattr(r, "_t"):
            resources.append((name, r))
    out = []
    for name, r in resources:
        for m in sorted(n for n in dir(type(r)) if not n.startswith("_")):
            out.append("client.%s.%s%s" % (name, m, signature(getattr(type(r), m))))
    for m in sorted(n for n in vars(assent.Client) if not n.startswith("_") and inspect.isfunction(vars(assent.Client)[n])):
        out.append("client.%s%s" % (m, signature(getattr(assent.Client, m))))
    for n in sorted(assent.__all__):
        if inspect.isfunction(getattr(assent, n)):
            out.append("assent.%s%s" % (n, signature(getattr(assent, n))))
    return out


class Readme(unittest.TestCase):
    def test_every_method_with_its_signature(self):
        with open(README, encoding="utf-8") as f:
            text = f.read()
        found = re.search(r"^## Every method\n.*?```text\n(.*?)```", text, re.S | re.M)
        self.assertIsNotNone(found, "README.md has no '## Every method' block")
        want = listing()
        self.assertEqual(want, found.group(1).splitlines(), "README.md's '## Every method' block should read:\n" + "\n".join(want))


if __name__ == "__main__":
    unittest.main()
