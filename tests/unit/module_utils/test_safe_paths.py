"""The one rule for names from outside: refused before anything is written."""

import io
import os
import tarfile

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils import safe_paths


@pytest.mark.parametrize("name,problem", [
    ("", "empty"), ("/etc/passwd", "absolute"), ("C:/x", "drive prefix"), ("c:x", "drive prefix"),
    ("a\\b", "backslash"), ("a\x00b", "NUL"), ("../x", "'..' segment"), ("a/../../x", "'..' segment"),
    ("./a", "'.' segment"), ("a/./b", "'.' segment"), ("a//b", "empty segment"), ("a/", "empty segment"),
    ("x" * 5000, "longer than"), (7, "not text"),
])
def test_each_kind_of_bad_name_is_refused_by_name(tmp_path, name, problem):
    assert problem in safe_paths.name_problem(name)
    with pytest.raises(safe_paths.UnsafeName, match="1 member\\(s\\) refused: .*%s.*nothing was written" % problem.replace(
            "(", "\\(").replace(".", "\\.")):
        safe_paths.check_names(str(tmp_path), ["ok.txt", name], "member")
    assert os.listdir(str(tmp_path)) == []


def test_good_names_map_to_their_targets(tmp_path):
    targets = safe_paths.check_names(str(tmp_path), ["a.txt", "d/e/f.json", "..hidden", "a..b"])
    assert targets["d/e/f.json"] == os.path.join(os.path.realpath(str(tmp_path)), "d", "e", "f.json")
    assert set(targets) == {"a.txt", "d/e/f.json", "..hidden", "a..b"}


def test_a_symlink_out_of_the_destination_is_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "dest"
    dest.mkdir()
    os.symlink(str(outside), str(dest / "link"))
    with pytest.raises(safe_paths.UnsafeName, match="'link/x' \\(resolves outside"):
        safe_paths.write_files(str(dest), {"link/x": b"1", "y": b"2"})
    assert os.listdir(str(outside)) == [] and sorted(os.listdir(str(dest))) == ["link"]


def test_a_file_and_a_directory_of_the_same_name_conflict(tmp_path):
    with pytest.raises(safe_paths.UnsafeName, match="'a/b' \\(needs 'a' as a directory, another member names it"):
        safe_paths.write_files(str(tmp_path), {"a": b"1", "a/b": b"2"}, "member")
    (tmp_path / "f").write_text("x")
    (tmp_path / "d").mkdir()
    with pytest.raises(safe_paths.UnsafeName) as refused:
        safe_paths.write_files(str(tmp_path), {"f/x": b"1", "d": b"2"}, "member")
    assert "'d' (is a directory there)" in str(refused.value) and "'f/x' (needs f as a directory" in str(refused.value)
    assert (tmp_path / "f").read_text() == "x"


def test_many_refusals_are_one_line(tmp_path):
    with pytest.raises(safe_paths.UnsafeName) as refused:
        safe_paths.check_names(str(tmp_path), ["../%d" % i for i in range(10)])
    message = str(refused.value)
    assert "\n" not in message and message.startswith("10 name(s) refused") and "and 7 more" in message


def tar_of(*members):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, kind in members:
            info = tarfile.TarInfo(name)
            info.type = kind
            if kind == tarfile.SYMTYPE:
                info.linkname = "/etc"
            data = b"x" if kind == tarfile.REGTYPE else b""
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    return tarfile.open(fileobj=buffer, mode="r")


@pytest.mark.parametrize("members,message", [
    ([("a", tarfile.SYMTYPE)], "'a' \\(a symlink, not a regular file\\)"),
    ([("d", tarfile.DIRTYPE)], "'d' \\(a directory, not a regular file\\)"),
    ([("dev", tarfile.CHRTYPE)], "'dev' \\(a device"),
    ([("x", tarfile.REGTYPE), ("x", tarfile.REGTYPE)], "'x' appears more than once"),
    ([("p/", tarfile.REGTYPE)], "'p/' \\(has an empty segment\\)"),
])
def test_tar_members_are_regular_files_with_safe_names(tmp_path, members, message):
    with pytest.raises(safe_paths.UnsafeName, match=message):
        safe_paths.check_tar_members(str(tmp_path), tar_of(*members).getmembers())
