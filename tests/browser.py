"""Open a page in headless Chromium over the DevTools protocol (a pipe, no
port), with the network off, and report what a reader would see: console
errors, exceptions, attempted network requests, counts from the rendered
DOM, and a screenshot.

Chromium reads protocol messages on fd 3 and writes them on fd 4, each a
JSON object ended by a NUL byte (--remote-debugging-pipe)."""

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-dev-shm-usage", "--remote-debugging-pipe"]


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, timeout=60):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="pario-chromium-")
        to_child_r, self._w = os.pipe()
        self._r, from_child_w = os.pipe()

        def wire():  # in the child: the protocol pipe on fds 3 and 4
            a, b = os.dup(to_child_r), os.dup(from_child_w)  # clear of 3 and 4 first
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [chromium(), *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire, pass_fds=(3, 4))
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._id = 0
        self.events = []

    # --- the protocol ------------------------------------------------------
    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer in time")
            ready, _, _ = select.select([self._r], [], [], left)
            if ready:
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the protocol pipe")
                self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method, params=None, session=None):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, deadline):
        while True:
            for i, e in enumerate(self.events):
                if e.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self._read_message(deadline))

    def close(self):
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._w)
        os.close(self._r)
        shutil.rmtree(self.profile, ignore_errors=True)

    # --- what a test wants ------------------------------------------------
    def open(self, path, expression, screenshot=None):
        """Load file `path` offline; returns (value of `expression`, problems)
        where problems lists console errors, exceptions and network requests."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        s = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", session=s)
        self.send("Network.emulateNetworkConditions", {"offline": True, "latency": 0,
                  "downloadThroughput": -1, "uploadThroughput": -1}, session=s)
        self.events.clear()
        self.send("Page.navigate", {"url": "file://" + os.path.abspath(path)}, session=s)
        self.wait_event("Page.loadEventFired", time.monotonic() + self.timeout)
        value = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                          session=s)["result"].get("value")
        if screenshot:
            shot = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True},
                             session=s)
            with open(screenshot, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
        problems = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                problems.append(f"exception: {p['exceptionDetails'].get('text')}")
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                problems.append(f"console.{p['type']}: {p.get('args')}")
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                problems.append(f"log: {p['entry'].get('text')}")
            elif m == "Network.requestWillBeSent":
                url = p["request"]["url"]
                if not url.startswith(("file:", "data:", "about:")):
                    problems.append(f"network request: {url}")
        return value, problems
