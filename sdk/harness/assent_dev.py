"""Start a real `assent dev` for an SDK's test suite.

Imported (Python suites):

    from assent_dev import AssentDev
    with AssentDev() as dev:
        dev.base_url, dev.agent_key, dev.admin_key, dev.member("admin")["token"]

Run (any other language's suite spawns it):

    python3 sdk/harness/assent_dev.py

prints one JSON line, {"baseUrl", "organizationId", "agentKey", "adminKey",
"members": [{"id", "email", "name", "role", "token"}], "teams", "dataDir"}
(the dev bootstrap file plus dataDir), once the server answers /readyz, and
keeps it running until its standard input closes or it gets SIGTERM.

The binary is ASSENT_BIN when set (CI builds it once), else it is built
from this checkout once per process with `go build` (GOTOOLCHAIN=auto). The
server listens on free ports with a data folder of its own, admits
receivers on this machine (ASSENT_DEV_ALLOW_LOOPBACK=1) and retries
deliveries in seconds (ASSENT_DEV_RETRY_UNIT=1s). Standard library only.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from typing import Any, Dict, List, Optional

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
_BANNER = re.compile(r"API and pages\s+(\S+)")
_built: Optional[str] = None
_build_lock = threading.Lock()


def binary() -> str:
    """The assent binary: ASSENT_BIN, or built once from the checkout."""
    global _built
    given = os.environ.get("ASSENT_BIN")
    if given:
        if not os.access(given, os.X_OK):
            raise RuntimeError("ASSENT_BIN=%s is not an executable" % given)
        return given
    with _build_lock:
        if _built is None:
            out = os.path.join(tempfile.mkdtemp(prefix="assent-sdk-bin-"), "assent")
            env = dict(os.environ, GOTOOLCHAIN=os.environ.get("GOTOOLCHAIN", "auto"))
            go = shutil.which("go") or "/usr/local/go/bin/go"
            started = time.monotonic()
            result = subprocess.run([go, "build", "-o", out, "./cmd/assent"], cwd=ROOT, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if result.returncode != 0:
                raise RuntimeError("go build ./cmd/assent failed:\n" + result.stdout)
            sys.stderr.write("assent_dev: built %s in %.0f s\n" % (out, time.monotonic() - started))
            _built = out
        return _built


class AssentDev:
    """One `assent dev` on free ports with its own data folder."""

    def __init__(self, start_timeout: float = 180.0, extra_env: Optional[Dict[str, str]] = None):
        self.start_timeout = start_timeout
        self.extra_env = extra_env or {}
        self.process: Optional[subprocess.Popen] = None
        self.data_dir = ""
        self.bootstrap: Dict[str, Any] = {}

    # What the bootstrap file says.
    @property
    def base_url(self) -> str:
        return self.bootstrap["baseUrl"]

    @property
    def agent_key(self) -> str:
        return self.bootstrap["agentKey"]

    @property
    def admin_key(self) -> str:
        return self.bootstrap["adminKey"]

    @property
    def organization_id(self) -> str:
        return self.bootstrap["organizationId"]

    @property
    def members(self) -> List[Dict[str, Any]]:
        return self.bootstrap["members"]

    def member(self, role: str = "admin") -> Dict[str, Any]:
        """The first demo person with role (owner, admin or member): id,
        email, name, role and token (a member token that can decide)."""
        for m in self.members:
            if m["role"] == role:
                return m
        raise LookupError("no demo member with role %r" % role)

    def start(self) -> "AssentDev":
        exe = binary()
        self.data_dir = tempfile.mkdtemp(prefix="assent-sdk-dev-")
        # Only the settings chosen here: an ASSENT_* of the caller's shell
        # (a database URL, an address) must not leak into the test server.
        env = {k: v for k, v in os.environ.items() if not k.startswith("ASSENT_")}
        env.update({"ASSENT_DEV_ALLOW_LOOPBACK": "1", "ASSENT_DEV_RETRY_UNIT": "1s"})
        env.update(self.extra_env)
        self._log = open(os.path.join(self.data_dir, "assent.log"), "wb")
        self.process = subprocess.Popen(
            [exe, "dev", "--data-dir", self.data_dir, "--http-addr", "127.0.0.1:0", "--temporal-port", "0",
             "--temporal-ui-port", "-1", "--log-level", "warn"],
            stdout=subprocess.PIPE, stderr=self._log, env=env, start_new_session=True)
        banner = self._read_banner()
        base = _BANNER.search(banner).group(1)  # type: ignore[union-attr]
        self._wait_ready(base)
        with open(os.path.join(self.data_dir, "bootstrap.json"), encoding="utf-8") as f:
            self.bootstrap = json.load(f)
        return self

    def _read_banner(self) -> str:
        assert self.process is not None and self.process.stdout is not None
        lines: List[str] = []
        found = threading.Event()

        def read() -> None:
            assert self.process is not None and self.process.stdout is not None
            for raw in self.process.stdout:
                lines.append(raw.decode("utf-8", "replace"))
                if _BANNER.search(lines[-1]):
                    found.set()
            found.set()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(self.start_timeout) or not any(_BANNER.search(line) for line in lines):
            log = self.log()
            self.stop()
            raise RuntimeError("assent dev did not print its address within %.0f s:\n%s%s" % (self.start_timeout, "".join(lines), log))
        return "".join(lines)

    def _wait_ready(self, base: str) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(base + "/readyz", timeout=5) as resp:
                    if resp.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        log = self.log()
        self.stop()
        raise RuntimeError("assent dev at %s never became ready:\n%s" % (base, log))

    def log(self) -> str:
        """What the server wrote on standard error."""
        try:
            with open(os.path.join(self.data_dir, "assent.log"), encoding="utf-8", errors="replace") as f:
                return f.read()[-20000:]
        except OSError:
            return ""

    def stop(self) -> None:
        p, self.process = self.process, None
        if p is not None and p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)
            except ProcessLookupError:
                pass
        if p is not None and p.stdout is not None:
            p.stdout.close()
        if getattr(self, "_log", None) is not None:
            self._log.close()
        if self.data_dir and os.environ.get("ASSENT_SDK_KEEP_DATA") != "1":
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> "AssentDev":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def main() -> int:
    dev = AssentDev().start()
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    print(json.dumps(dict(dev.bootstrap, dataDir=dev.data_dir)), flush=True)
    threading.Thread(target=lambda: (sys.stdin.read(), stopping.set()), daemon=True).start()
    try:
        while not stopping.wait(0.5):
            if dev.process is None or dev.process.poll() is not None:
                sys.stderr.write("assent dev exited:\n" + dev.log())
                return 1
    finally:
        dev.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
