"""Run one command against a fresh kubesim, then stop it: ``python -m kubesim.run [kubesim flags] -- COMMAND...``.

kubesim starts as a child (``python -m kubesim`` with the flags given, a state directory of
its own), the command runs with ``KUBECONFIG`` pointing at it, kubesim stops when the
command ends (or is interrupted); the exit status is the command's. ``make demo-k8s`` uses it.
"""

import os
import signal
import subprocess
import sys
import tempfile


def split(argv):
    if "--" not in argv:
        raise SystemExit("usage: python -m kubesim.run [kubesim flags] -- COMMAND [ARGS...]")
    at = argv.index("--")
    flags, command = argv[:at], argv[at + 1:]
    if not command:
        raise SystemExit("python -m kubesim.run: no command after --")
    return flags, command


def main(argv=None):
    flags, command = split(list(sys.argv[1:] if argv is None else argv))
    with tempfile.TemporaryDirectory(prefix="kubesim-run-") as state_dir:
        server = subprocess.Popen([sys.executable, "-m", "kubesim", "--state-dir", state_dir] + flags,
                                  stdout=subprocess.PIPE, text=True,
                                  cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        try:
            line = server.stdout.readline()
            if not line.startswith("export KUBECONFIG="):
                raise SystemExit("kubesim did not start (%s)" % (line.strip() or "exit %s" % server.wait()))
            kubeconfig = line.strip().split("=", 1)[1]
            print("kubesim is up: KUBECONFIG=%s" % kubeconfig, file=sys.stderr, flush=True)
            return subprocess.call(command, env=dict(os.environ, KUBECONFIG=kubeconfig))
        finally:
            if server.poll() is None:
                server.send_signal(signal.SIGTERM)
                try:
                    server.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    server.kill()
                    server.wait()


if __name__ == "__main__":
    sys.exit(main())
