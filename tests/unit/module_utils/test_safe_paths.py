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


def test_the_limits_are_where_they_say(tmp_path, monkeypatch):
    root = str(tmp_path)
    monkeypatch.setattr(safe_paths, "MAX_NAMES", 20)   # a million in the collection: the same rule
    longest = "x" * safe_paths.MAX_NAME_LENGTH
    assert safe_paths.name_problem(longest) is None
    assert safe_paths.name_problem(longest + "x") == "longer than %d characters" % safe_paths.MAX_NAME_LENGTH
    names = ["f%d" % i for i in range(safe_paths.MAX_NAMES)]
    assert len(safe_paths.check_names(root, names)) == safe_paths.MAX_NAMES
    with pytest.raises(safe_paths.UnsafeName, match="^%d files: more than %d; nothing was written$"
                       % (safe_paths.MAX_NAMES + 1, safe_paths.MAX_NAMES)):
        safe_paths.check_names(root, names + ["one-more"], "file")
    # as many refusals as are shown: no "and N more"; one more: "and 1 more"
    shown = ["../%d" % i for i in range(safe_paths.SHOWN)]
    with pytest.raises(safe_paths.UnsafeName) as refused:
        safe_paths.check_names(root, shown)
    assert "more" not in str(refused.value)
    with pytest.raises(safe_paths.UnsafeName, match=" and 1 more; "):
        safe_paths.check_names(root, shown + ["../x"])
    assert os.listdir(root) == []


def test_a_long_refused_name_is_shortened_in_the_message(tmp_path):
    name = "../" + "y" * 300
    with pytest.raises(safe_paths.UnsafeName) as refused:
        safe_paths.check_names(str(tmp_path), [name])
    shown = repr(name)[:77] + "..."
    assert shown + " (has a '..' segment)" in str(refused.value) and "y" * 100 not in str(refused.value)


def test_a_link_to_the_destination_itself_is_refused(tmp_path):
    os.symlink(".", str(tmp_path / "here"))
    with pytest.raises(safe_paths.UnsafeName, match="'here' \\(resolves outside"):
        safe_paths.check_names(str(tmp_path), ["here"])


def test_written_files_hold_their_data_and_are_listed_sorted(tmp_path):
    written = safe_paths.write_files(str(tmp_path), {"b/c.txt": b"two", "a.txt": b"one"})
    root = os.path.realpath(str(tmp_path))
    assert written == [os.path.join(root, "a.txt"), os.path.join(root, "b", "c.txt")]
    assert (tmp_path / "b" / "c.txt").read_bytes() == b"two" and (tmp_path / "a.txt").read_bytes() == b"one"


@pytest.mark.parametrize("kind,label", [(tarfile.LNKTYPE, "hard link"), (tarfile.FIFOTYPE, "device"),
                                        (tarfile.BLKTYPE, "device")])
def test_each_kind_of_tar_member_is_named(tmp_path, kind, label):
    with pytest.raises(safe_paths.UnsafeName, match="'m' \\(a %s, not a regular file\\)" % label):
        safe_paths.check_tar_members(str(tmp_path), tar_of(("m", kind)).getmembers())


def test_many_non_file_members_are_one_line(tmp_path):
    members = tar_of(*[("d%d" % i, tarfile.DIRTYPE) for i in range(safe_paths.SHOWN + 2)]).getmembers()
    with pytest.raises(safe_paths.UnsafeName, match="^%d archive member\\(s\\) refused: .* and 2 more; expected regular "
                       "files only; nothing was written$" % (safe_paths.SHOWN + 2)):
        safe_paths.check_tar_members(str(tmp_path), members)


@pytest.mark.parametrize("name,problem", [
    (7, "not text"), (b"a", "not text"), ("", "empty"), ("a\x00b", "holds a NUL"), ("a\\b", "holds a backslash"),
    ("/etc/passwd", "absolute"), ("C:/x", "has a drive prefix"), ("a//b", "has an empty segment"),
    ("a/./b", "has a '.' segment"), ("a/..", "has a '..' segment"), ("x" * 4097, "longer than 4096 characters"),
])
def test_each_problem_is_said_in_its_own_words(name, problem):
    assert safe_paths.name_problem(name) == problem


def test_the_refusal_lists_each_name_with_its_problem_in_name_order(tmp_path):
    root = str(tmp_path)
    with pytest.raises(safe_paths.UnsafeName) as refused:
        safe_paths.check_names(root, ["ok", "/b", "../a"])
    assert str(refused.value) == ("2 name(s) refused: '../a' (has a '..' segment), '/b' (absolute); expected relative "
                                  "names of files inside %s; nothing was written" % root)


def test_a_name_is_shown_whole_up_to_80_characters_of_its_repr():
    assert safe_paths._shown("x" * 78) == repr("x" * 78)                 # 80 characters with its quotes
    assert safe_paths._shown("x" * 79) == repr("x" * 79)[:77] + "..."    # 81: cut to 80
    assert len(safe_paths._shown("x" * 79)) == 80


def test_a_file_named_by_the_set_is_the_nearest_directory_another_name_needs(tmp_path):
    root = str(tmp_path)
    with pytest.raises(safe_paths.UnsafeName) as refused:
        safe_paths.check_names(root, ["a/b", "a/b/c/d"], "member")
    assert str(refused.value) == ("1 member(s) refused: 'a/b/c/d' (needs 'a/b' as a directory, another member names it as "
                                  "a file); expected relative names of files inside %s; nothing was written" % root)
    with pytest.raises(safe_paths.UnsafeName, match=r"'a/b/c/d' \(needs 'a/b/c' as a directory"):
        safe_paths.check_names(root, ["a/b/c", "a/b/c/d"], "member")


@pytest.mark.parametrize("working_directory", ["/", "d"])
def test_an_existing_file_deeper_up_the_path_blocks_the_name_whatever_the_working_directory(tmp_path, monkeypatch,
                                                                                            working_directory):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f").write_text("x")
    monkeypatch.chdir(str(tmp_path / working_directory))
    with pytest.raises(safe_paths.UnsafeName, match=r"'d/f/x/y' \(needs d/f as a directory, it is a file there\)"):
        safe_paths.check_names(str(tmp_path), ["d/f/x/y"])
    assert safe_paths._existing_file_above(str(tmp_path), str(tmp_path)) is None
    assert safe_paths._existing_file_above(str(tmp_path), str(tmp_path / "d" / "new" / "deeper")) is None


def test_a_refused_tar_member_is_said_in_one_exact_line(tmp_path):
    with pytest.raises(safe_paths.UnsafeName) as refused:
        safe_paths.check_tar_members(str(tmp_path), tar_of(("d", tarfile.DIRTYPE), ("f", tarfile.REGTYPE)).getmembers())
    assert str(refused.value) == ("1 archive member(s) refused: 'd' (a directory, not a regular file); expected regular "
                                  "files only; nothing was written")
    members = tar_of(*[("d%d" % i, tarfile.DIRTYPE) for i in range(safe_paths.SHOWN)]).getmembers()
    with pytest.raises(safe_paths.UnsafeName) as refused:
        safe_paths.check_tar_members(str(tmp_path), members)
    assert str(refused.value) == ("3 archive member(s) refused: 'd0' (a directory, not a regular file), 'd1' (a "
                                  "directory, not a regular file), 'd2' (a directory, not a regular file); expected "
                                  "regular files only; nothing was written")


def test_the_member_named_twice_is_the_one_refused(tmp_path):
    members = tar_of(("a", tarfile.REGTYPE), ("b", tarfile.REGTYPE), ("b", tarfile.REGTYPE)).getmembers()
    with pytest.raises(safe_paths.UnsafeName) as refused:
        safe_paths.check_tar_members(str(tmp_path), members, "layer file")
    assert str(refused.value) == "layer file 'b' appears more than once; nothing was written"


def test_tar_members_and_written_files_are_called_archive_members_by_default(tmp_path):
    root = str(tmp_path)
    expected = ("1 archive member(s) refused: 'p/' (has an empty segment); expected relative names of files inside %s; "
                "nothing was written" % root)
    with pytest.raises(safe_paths.UnsafeName) as refused:
        safe_paths.check_tar_members(root, tar_of(("p/", tarfile.REGTYPE)).getmembers())
    assert str(refused.value) == expected
    with pytest.raises(safe_paths.UnsafeName) as refused:
        safe_paths.write_files(root, {"p/": b"x"})
    assert str(refused.value) == expected
    assert os.listdir(root) == []


def test_a_member_of_an_unknown_type_is_a_special_file(tmp_path):
    member = tarfile.TarInfo("odd")
    member.type = b"Z"
    assert safe_paths._member_type(member) == "special file"
    with pytest.raises(safe_paths.UnsafeName, match=r"'odd' \(a special file, not a regular file\)"):
        safe_paths.check_tar_members(str(tmp_path), [member])
