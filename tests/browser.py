"""Headless Chromium driven over the DevTools protocol (no selenium, no downloads).

Loads a page, collects JavaScript exceptions and console errors, evaluates
expressions, and takes screenshots.
"""

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request

import websocket

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--remote-debugging-port=0", "--window-size=1280,900"]


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Chromium:
    def __init__(self, binary=None, timeout=30):
        self.binary = binary or chromium_binary()
        if not self.binary:
            raise RuntimeError("chromium is not installed (make test installs the Debian package)")
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="perfscale-chromium-")
        self.process = subprocess.Popen([self.binary] + FLAGS + ["--user-data-dir=%s" % self.profile, "about:blank"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port = self._wait_port()
        with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=timeout) as response:
            targets = [t for t in json.load(response) if t.get("type") == "page"]
        self.socket = websocket.create_connection(targets[0]["webSocketDebuggerUrl"], timeout=timeout,
                                                  suppress_origin=True)
        self._id = 0
        self.events = []
        for domain in ("Page", "Runtime", "Log"):
            self.send("%s.enable" % domain)

    def _wait_port(self):
        path = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if os.path.exists(path):
                with open(path) as handle:
                    first = handle.readline().strip()
                if first.isdigit():
                    return int(first)
            if self.process.poll() is not None:
                raise RuntimeError("chromium exited with %s" % self.process.returncode)
            time.sleep(0.05)
        raise RuntimeError("chromium did not open its debugging port")

    def send(self, method, params=None):
        self._id += 1
        message_id = self._id
        self.socket.send(json.dumps({"id": message_id, "method": method, "params": params or {}}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == message_id:
                if "error" in message:
                    raise RuntimeError("%s: %s" % (method, message["error"]))
                return message.get("result", {})
            self.events.append(message)

    def _pump(self, seconds):
        self.socket.settimeout(seconds)
        try:
            while True:
                self.events.append(json.loads(self.socket.recv()))
        except websocket.WebSocketTimeoutException:
            pass
        finally:
            self.socket.settimeout(self.timeout)

    def load(self, url, settle=1.0):
        self.events = []
        self.send("Page.navigate", {"url": url})
        deadline = time.monotonic() + self.timeout
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            if time.monotonic() > deadline:
                raise RuntimeError("page did not load: %s" % url)
            self._pump(0.2)
        self._pump(settle)

    def errors(self):
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                found.append(details.get("exception", {}).get("description") or details.get("text"))
            elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
                found.append(" ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                found.append(params["entry"].get("text"))
        return found

    def evaluate(self, expression):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError("evaluation failed: %s" % result["exceptionDetails"])
        return result["result"].get("value")

    def screenshot(self, path):
        data = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"]
        with open(path, "wb") as handle:
            handle.write(base64.b64decode(data))
        return path

    def close(self):
        try:
            self.socket.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
