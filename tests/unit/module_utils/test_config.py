import copy
import json
import os

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import checks as config_checks
from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as cfg
from ansible_collections.perfscale.topsail.plugins.module_utils.config_sections import schema as config_schema
from ansible_collections.perfscale.topsail.plugins.module_utils.config import validation

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "configs")
PRESETS = os.path.join(FIXTURES, "presets.yaml")
CYCLE = os.path.join(FIXTURES, "cycle.yaml")
MALFORMED = os.path.join(FIXTURES, "malformed.txt")
SHIPPED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "config", "config.yaml")


def one_line(message):
    assert "\n" not in message
    return message


def test_no_preset_gives_document_without_presets_section():
    resolved = cfg.resolve_config(PRESETS)
    assert "ci_presets" not in resolved.config
    assert resolved.config["tests"]["benchmark"]["timeout_s"] == 30
    assert resolved.presets_applied == []


def test_preset_sets_dotted_keys_and_extends_is_applied_first():
    resolved = cfg.resolve_config(PRESETS, presets="fast")
    assert resolved.config["tests"]["benchmark"]["timeout_s"] == 10
    assert resolved.config["tests"]["benchmark"]["sizes"] == [64, 128]
    assert resolved.presets_applied == ["base", "fast"]


def test_extends_applies_at_its_position_in_the_preset():
    # the preset sets 99 first, then extends base which sets 10: base wins
    resolved = cfg.resolve_config(PRESETS, presets="override_after_extends")
    assert resolved.config["tests"]["benchmark"]["timeout_s"] == 10


def test_several_presets_apply_in_order_last_wins():
    resolved = cfg.resolve_config(PRESETS, presets="fast,override_after_extends")
    assert resolved.presets_applied == ["base", "fast", "base", "override_after_extends"]
    assert resolved.config["tests"]["benchmark"]["timeout_s"] == 10
    resolved = cfg.resolve_config(PRESETS, presets=["override_after_extends", "fast"])
    assert resolved.config["tests"]["benchmark"]["sizes"] == [64, 128]


def test_the_document_selects_presets_with_ci_presets_name_and_names():
    document = cfg.load_config_document(PRESETS)
    document["ci_presets"]["names"] = ["fast"]
    document["ci_presets"]["name"] = "replace_harness"
    resolved = cfg.resolve_config(document)
    # names first, then name; both before -e preset (which wins)
    assert resolved.presets_applied == ["base", "fast", "replace_harness"]
    assert resolved.config["tests"]["benchmark"]["timeout_s"] == 10
    later = cfg.resolve_config(document, presets="override_after_extends")
    assert later.presets_applied[-2:] == ["base", "override_after_extends"]
    # the selection keys are not presets themselves
    assert "name" not in cfg.known_presets(document) and "names" not in cfg.known_presets_in_order(document)
    with pytest.raises(errors.ConfigError, match="unknown preset 'names'"):
        cfg.resolve_config(document, presets="names")
    document["ci_presets"]["name"] = "fsat"
    with pytest.raises(errors.ConfigError, match="unknown preset 'fsat' \\(did you mean 'fast'\\?\\)"):
        cfg.resolve_config(document)
    document["ci_presets"]["name"] = ["fast"]
    with pytest.raises(errors.ConfigError, match="ci_presets.name: expected one preset name, got list"):
        cfg.resolve_config(document)


def test_diamond_extends_is_not_a_cycle():
    resolved = cfg.resolve_config(PRESETS, presets="diamond")
    assert resolved.presets_applied == ["base", "fast", "base", "diamond"]


def test_dict_value_replaces_the_whole_subtree():
    resolved = cfg.resolve_config(PRESETS, presets="replace_harness")
    assert resolved.config["tests"]["benchmark"]["harness"] == {"backend": "torch", "device": "cuda"}


def test_document_is_not_modified():
    document = cfg.load_config_document(PRESETS)
    cfg.resolve_config(document, presets="replace_harness")
    assert document["tests"]["benchmark"]["harness"] == {"backend": "numpy", "threads": None}


def test_cycle_prints_the_chain_on_one_line():
    with pytest.raises(errors.ConfigError) as error:
        cfg.resolve_config(CYCLE, presets="a")
    assert one_line(str(error.value)) == "preset cycle in 'extends': a -> b -> c -> a"


def test_unknown_preset_lists_known_ones():
    with pytest.raises(errors.ConfigError) as error:
        cfg.resolve_config(PRESETS, presets="fsat")
    message = one_line(str(error.value))
    assert "unknown preset 'fsat'" in message
    assert "did you mean 'fast'" in message
    assert "known presets: base, diamond, empty, fast, new_key" in message


def test_extends_naming_unknown_preset_names_the_referrer(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("a: {b: 1}\nci_presets:\n  p:\n    extends: [nope]\n")
    with pytest.raises(errors.ConfigError, match=r"preset 'p' extends unknown preset 'nope'; known presets: p"):
        cfg.resolve_config(str(path), presets="p")


def test_new_key_names_it_and_closest_existing_keys():
    with pytest.raises(errors.ConfigError) as error:
        cfg.resolve_config(PRESETS, presets="new_key")
    message = one_line(str(error.value))
    assert "preset 'new_key': key 'tests.benchmark.timeot_s' does not exist" in message
    assert "tests.benchmark.timeout_s" in message.split("closest existing keys:")[1]


def test_setting_below_a_scalar_is_an_error():
    with pytest.raises(errors.ConfigError, match=r"'tests.benchmark.timeout_s' is a int, not a section"):
        cfg.resolve_config(PRESETS, presets="scalar_parent")


def test_empty_preset_and_empty_names_are_fine():
    assert cfg.resolve_config(PRESETS, presets="empty").presets_applied == ["empty"]
    assert cfg.resolve_config(PRESETS, presets=" , ").presets_applied == []
    assert cfg.parse_preset_names(["a,b", "c"]) == ["a", "b", "c"]


def test_preset_names_of_wrong_type_are_refused():
    with pytest.raises(errors.ConfigError, match="expected a name or a comma-separated list"):
        cfg.parse_preset_names(3)


def test_overrides_from_json_yaml_and_mapping():
    resolved = cfg.resolve_config(PRESETS, presets="fast", overrides='{"tests.benchmark.timeout_s": 3}')
    assert resolved.config["tests"]["benchmark"]["timeout_s"] == 3
    resolved = cfg.resolve_config(PRESETS, overrides="tests.benchmark.sizes: [1, 2, 3]")
    assert resolved.config["tests"]["benchmark"]["sizes"] == [1, 2, 3]
    resolved = cfg.resolve_config(PRESETS, overrides={"tests.capture_environment": {"enabled": False, "new": 1}})
    assert resolved.config["tests"]["capture_environment"] == {"enabled": False, "new": 1}


def test_override_cannot_create_keys():
    with pytest.raises(errors.ConfigError, match=r"^overrides: key 'tests.nope' does not exist"):
        cfg.resolve_config(PRESETS, overrides={"tests.nope": 1})


def test_override_of_presets_section_is_refused():
    with pytest.raises(errors.ConfigError, match="cannot modify the 'ci_presets' section"):
        cfg.resolve_config(PRESETS, overrides={"ci_presets.base": {}})


def test_overrides_must_be_a_mapping():
    with pytest.raises(errors.ConfigError, match="expected a mapping of dotted keys to values, got list"):
        cfg.resolve_config(PRESETS, overrides="[1, 2]")


def test_overrides_file_applies_before_inline_overrides(tmp_path):
    path = tmp_path / "o.yaml"
    path.write_text("tests.benchmark.timeout_s: 7\ntests.benchmark.sizes: [9]\n")
    resolved = cfg.resolve_config(PRESETS, overrides_file=str(path), overrides={"tests.benchmark.timeout_s": 8})
    assert resolved.config["tests"]["benchmark"]["timeout_s"] == 8
    assert resolved.config["tests"]["benchmark"]["sizes"] == [9]
    assert resolved.overrides == {"tests.benchmark.timeout_s": 8, "tests.benchmark.sizes": [9]}


def test_missing_overrides_file_is_named(tmp_path):
    with pytest.raises(errors.ConfigError, match=r"overrides file .*nope.yaml: cannot be read"):
        cfg.resolve_config(PRESETS, overrides_file=str(tmp_path / "nope.yaml"))


def test_malformed_document_names_file_and_line():
    with pytest.raises(errors.ConfigError) as error:
        cfg.load_config_document(MALFORMED)
    message = one_line(str(error.value))
    assert message.startswith("config file %s: line " % MALFORMED)


def test_duplicate_key_is_an_error_with_both_lines(tmp_path):
    path = tmp_path / "dup.yaml"
    path.write_text("tests:\n  a: 1\n  a: 2\n")
    with pytest.raises(errors.ConfigError, match=r"line 3, column 3: key 'a' defined twice \(first on line 2\)"):
        cfg.load_config_document(str(path))


def test_document_must_be_a_mapping(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n")
    with pytest.raises(errors.ConfigError, match="expected a YAML mapping of sections, got list"):
        cfg.load_config_document(str(path))


def test_missing_document_is_named(tmp_path):
    with pytest.raises(errors.ConfigError, match=r"config file .*absent.yaml: cannot be read"):
        cfg.load_config_document(str(tmp_path / "absent.yaml"))


def test_get_dotted_and_its_errors():
    config = cfg.resolve_config(PRESETS).config
    assert cfg.get_dotted(config, "tests.benchmark.harness.backend") == "numpy"
    assert cfg.get_dotted(config, "tests.nothing", default=None) is None
    with pytest.raises(errors.ConfigError, match=r"config key 'tests.benchmark.timout_s' does not exist; closest existing keys: tests.benchmark.timeout_s"):
        cfg.get_dotted(config, "tests.benchmark.timout_s")


def test_validate_section_with_pydantic_names_section_and_key():
    import pydantic

    class Harness(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="forbid")
        backend: str
        threads: int | None = None

    config = cfg.resolve_config(PRESETS).config
    assert validation.validate_section(config, "tests.benchmark.harness", Harness).backend == "numpy"
    config["tests"]["benchmark"]["harness"]["backnd"] = "x"
    with pytest.raises(errors.ConfigError) as error:
        validation.validate_section(config, "tests.benchmark.harness", Harness)
    assert one_line(str(error.value)) == (
        "config section 'tests.benchmark.harness' is invalid: unknown key 'tests.benchmark.harness.backnd' (did you mean 'backend'?)"
    )
    config["tests"]["benchmark"]["harness"] = {"backend": "numpy", "threads": "many"}
    with pytest.raises(errors.ConfigError, match=r"'tests.benchmark.harness.threads': Input should be a valid integer"):
        validation.validate_section(config, "tests.benchmark.harness", Harness)


def test_shipped_document_and_every_shipped_preset_resolve():
    document = cfg.load_config_document(SHIPPED)
    for name in cfg.known_presets(document):
        resolved = cfg.resolve_config(document, presets=name)
        assert name in resolved.presets_applied
        json.dumps(resolved.config)  # serializable


@pytest.mark.parametrize("text,message", [
    ("tests:\n  benchmark:\n    timeout_s: .inf\n", "config file %s: key tests.benchmark.timeout_s: inf is not a finite number"),
    ("tests:\n  benchmark:\n    timeout_s: .nan\n", "key tests.benchmark.timeout_s: nan is not a finite number"),
    # libyaml parses it, then the depth check names the key; PyYAML's own parser recurses too deep first
    ("deep: " + "[" * 5000 + "]" * 5000 + "\n",
     ("config file %s: key deep.0.0.0.0.0.0.0...: nested deeper than 64 levels",
      "config file %s: nested too deeply to read; expected at most 64 levels")),
    ("deep: " + "[" * 80 + "]" * 80 + "\n", "config file %s: key deep.0.0.0.0.0.0.0...: nested deeper than 64 levels"),
])
def test_infinite_values_and_deep_nesting_are_one_line_naming_the_key(tmp_path, text, message):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(errors.ConfigError) as refused:
        cfg.resolve_config(str(path))
    accepted = [one % path if "%s" in one else one for one in (message if isinstance(message, tuple) else (message,))]
    assert any(expected in str(refused.value) for expected in accepted) and "\n" not in str(refused.value)


@pytest.mark.parametrize("overrides,message", [
    ('{"tests.benchmark.timeout_s": Infinity}', "overrides: key tests.benchmark.timeout_s: inf is not a finite number"),
    ("tests.benchmark.timeout_s: -.inf", "overrides: key tests.benchmark.timeout_s: -inf is not a finite number"),
    ({"x": float("nan")}, "overrides: key x: nan is not a finite number"),
    ("[" * 3000 + "]" * 3000, "overrides: nested too deeply to read"),
])
def test_overrides_with_infinite_or_absurdly_deep_values_are_refused(overrides, message):
    with pytest.raises(errors.ConfigError, match=message.replace("[", "\\[").replace(".", "\\.")):
        cfg.parse_overrides(overrides)


@pytest.mark.parametrize("key,value,message", [
    ("tests.benchmark.timeout_s", 1e300, "'tests.benchmark.timeout_s': Input should be less than or equal to 604800"),
    ("tests.benchmark.parallelism", "sliding:100000", "the number of points at once must be a whole number from 1 to 1024"),
    ("tests.benchmark.parallelism", {"barrier": 5000}, "from 1 to 1024"),
    ("export_artifacts.timeout_s", 1e9, "'export_artifacts.timeout_s': Input should be less than or equal to 86400"),
])
def test_absurd_timeouts_and_counts_are_refused_by_name(key, value, message):
    config = cfg.resolve_config(cfg.default_config_path(REPO_ROOT)).config
    cfg.set_dotted(config, key, value)
    with pytest.raises(errors.ConfigError, match=message.replace("(", "\\(").replace(")", "\\)")):
        config_checks.validate_config(config)


def test_each_section_model_is_built_once_per_process():
    # sections are read per run, per point and per KPI: a pydantic class costs about a millisecond
    for section in config_schema.SECTIONS:
        factory = config_schema.SECTIONS[section]
        assert factory() is factory(), section
    assert config_schema.read_section({"regression": {"method": "zscore"}}, "regression")["method"] == "zscore"


class _Tagged(str):
    """What Ansible hands over: a str subclass carrying its origin."""


@pytest.mark.parametrize("value,name", [
    (True, "bool"), (3, "int"), (2.5, "float"), ("x", "str"), (_Tagged("x"), "str"), ({}, "dict"), ([], "list"),
    ((1,), "list"), (None, "null"), (object(), "object"), (b"x", "bytes"),
])
def test_a_value_is_named_by_its_yaml_kind(value, name):
    # an unknown kind once recursed forever instead of naming its type
    assert cfg.type_name(value) == name


def test_dotted_keys_flatten_and_the_closest_are_suggested():
    tree = {"tests": {"benchmark": {"timeout_s": 1, "harness": {"backend": "numpy"}}}, "export": {"enabled": True}}
    assert cfg.flatten_keys(tree) == ["tests", "tests.benchmark", "tests.benchmark.timeout_s", "tests.benchmark.harness",
                                      "tests.benchmark.harness.backend", "export", "export.enabled"]
    assert cfg.flatten_keys(7) == []
    assert cfg.close_matches("tests.benchmark.timout_s", tree)[0] == "tests.benchmark.timeout_s"
    # nothing close as a whole: the last component decides
    assert cfg.close_matches("x.y.z.backnd", tree) == ["tests.benchmark.harness.backend"]
    assert cfg.close_matches("nothing.like.it", tree) == []
    with pytest.raises(errors.ConfigError, match="^config key 'export.enabled.x' does not exist: 'export.enabled' is "
                                                 "a bool, not a section$"):
        cfg.get_dotted(tree, "export.enabled.x")
    with pytest.raises(errors.ConfigError, match="^config key 'zzz' does not exist; no similar key exists$"):
        cfg.get_dotted(tree, "zzz")


@pytest.mark.parametrize("key", ["", ".a", "a.", "a..b", 7, None])
def test_an_override_key_must_be_dotted_names(key):
    with pytest.raises(errors.ConfigError, match="^overrides: invalid key .*, expected a dotted key such as"):
        cfg.set_dotted({"a": {"b": 1}}, key, 2, origin="overrides")


def test_an_override_sets_a_copy_of_an_existing_leaf_only():
    tree = {"a": {"b": 1, "c": 2}}
    value = {"deep": [1]}
    cfg.set_dotted(tree, "a.b", value)
    value["deep"].append(2)
    assert tree == {"a": {"b": {"deep": [1]}, "c": 2}}
    with pytest.raises(errors.ConfigError, match="^override: cannot set 'a.c.d': 'a.c' is a int, not a section$"):
        cfg.set_dotted(tree, "a.c.d", 1)
    with pytest.raises(errors.ConfigError, match="^override: key 'a.x' does not exist in the configuration \\(presets "
                                                 "and overrides cannot create keys\\); "):
        cfg.set_dotted(tree, "a.x", 1)


def test_the_document_selects_its_presets_by_names_then_name():
    document = {"ci_presets": {"names": "a, b", "name": "c", "a": {}, "b": {}, "c": {}}}
    assert cfg.document_preset_selection(document) == ["a", "b", "c"]
    assert cfg.document_preset_selection({"ci_presets": {"names": ["a"]}}) == ["a"]
    assert cfg.document_preset_selection({}) == []
    assert cfg.known_presets(document) == ["a", "b", "c"]
    with pytest.raises(errors.ConfigError, match="^ci_presets.name: expected one preset name, got list$"):
        cfg.document_preset_selection({"ci_presets": {"name": ["a"]}})
    assert cfg.parse_preset_names(None) == [] and cfg.parse_preset_names(" a ,, b ") == ["a", "b"]
    with pytest.raises(errors.ConfigError, match="^preset: expected preset names \\(strings\\), got 3$"):
        cfg.parse_preset_names(["a", 3])


# --------------------------------------------------------------------------
# reading documents: exact messages, encodings, YAML corner cases


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_an_unreadable_file_is_one_line_with_the_os_reason(tmp_path):
    missing = str(tmp_path / "absent.yaml")
    with pytest.raises(errors.ConfigError) as refused:
        cfg.load_config_document(missing)
    assert str(refused.value) == "config file %s: cannot be read: No such file or directory" % missing
    with pytest.raises(errors.ConfigError) as refused:
        cfg.load_overrides_file(str(tmp_path))
    assert str(refused.value) == "overrides file %s: cannot be read: Is a directory" % tmp_path


def test_a_document_is_read_as_utf8_whatever_the_locale(tmp_path, ascii_locale):
    path = tmp_path / "utf8.yaml"
    path.write_bytes("tests:\n  label: \"caf\u00e9 \u2713\"\n".encode("utf-8"))
    document = cfg.load_config_document(str(path))
    assert document["tests"]["label"] == "caf\u00e9 \u2713"


def test_a_document_that_is_not_a_mapping_names_its_kind_exactly(tmp_path):
    path = _write(tmp_path, "scalar.yaml", "just text\n")
    with pytest.raises(errors.ConfigError) as refused:
        cfg.load_config_document(path)
    assert str(refused.value) == "config file %s: expected a YAML mapping of sections, got str" % path


def test_the_presets_section_must_be_a_mapping_and_may_be_empty(tmp_path):
    path = _write(tmp_path, "bad.yaml", "tests: {a: 1}\nci_presets: [fast]\n")
    with pytest.raises(errors.ConfigError) as refused:
        cfg.load_config_document(path)
    assert str(refused.value) == "config file %s: 'ci_presets' must be a mapping of preset names" % path
    path = _write(tmp_path, "null.yaml", "tests: {a: 1}\nci_presets:\n")
    assert cfg.load_config_document(path) == {"tests": {"a": 1}, "ci_presets": {}}
    # a document without presets is returned as written
    path = _write(tmp_path, "none.yaml", "tests: {a: 1}\n")
    assert cfg.load_config_document(path) == {"tests": {"a": 1}}
    assert cfg.resolve_config(path).config == {"tests": {"a": 1}}


def test_a_self_referencing_anchor_is_refused_as_too_deep_naming_the_key():
    with pytest.raises(errors.ConfigError) as refused:
        cfg.parse_yaml_text("a: &x {b: *x}\n", "src")
    # the path shown is cut after 8 parts
    assert str(refused.value) == "src: key a.b.b.b.b.b.b.b...: nested deeper than 64 levels; expected at most 64"


def test_an_unhashable_key_is_a_yaml_error_and_does_not_hide_a_later_duplicate():
    with pytest.raises(errors.ConfigError) as refused:
        cfg.parse_yaml_text("? [1]\n: a\n", "src")
    assert str(refused.value) == "src: line 1, column 3: found unhashable key"
    with pytest.raises(errors.ConfigError) as refused:
        cfg.parse_yaml_text("? [1]\n: a\nx: 1\nx: 2\n", "src")
    assert str(refused.value) == "src: line 4, column 1: key 'x' defined twice (first on line 3)"


def test_a_yaml_error_names_where_the_problem_is_not_where_its_context_starts():
    # the flow sequence opens on line 1; the missing ']' is found on line 2
    with pytest.raises(errors.ConfigError) as refused:
        cfg.parse_yaml_text("a: [1\n", "src")
    assert str(refused.value) == "src: line 2, column 1: did not find expected ',' or ']'"
    with pytest.raises(errors.ConfigError) as refused:
        cfg.parse_yaml_text("--- a\n--- b\n", "src")
    assert str(refused.value) == "src: line 2, column 1: but found another document"


@pytest.mark.parametrize("error,message", [
    ("marked", "src: unknown position: malformed YAML"),
    ("context", "src: unknown position: while reading"),
    ("plain", "src: malformed YAML: bad news on two lines"),
])
def test_a_yaml_error_without_position_or_text_is_still_one_line(monkeypatch, error, message):
    import yaml

    raised = {
        "marked": yaml.MarkedYAMLError(),
        "context": yaml.MarkedYAMLError(context="while reading"),
        "plain": yaml.YAMLError("bad news\n   on two lines"),
    }[error]

    def load(*_args, **_kwargs):
        raise raised

    monkeypatch.setattr(yaml, "load", load)
    with pytest.raises(errors.ConfigError) as refused:
        cfg.parse_yaml_text("a: 1\n", "src")
    assert str(refused.value) == message


def test_the_default_document_sits_in_the_collection_config_directory():
    assert cfg.default_config_path("/opt/collection") == "/opt/collection/config/config.yaml"


# --------------------------------------------------------------------------
# renamed sections (matbench -> postprocess)


def test_a_renamed_section_moves_in_place_with_one_warning(tmp_path):
    path = _write(tmp_path, "old.yaml", "tests: {a: 1}\nmatbench: {workload: w}\nexport: {b: 2}\n")
    warnings = []
    document = cfg.load_config_document(path, warnings)
    assert document == {"tests": {"a": 1}, "postprocess": {"workload": "w"}, "export": {"b": 2}}
    assert list(document) == ["tests", "postprocess", "export"]
    assert warnings == ["config file %s: section 'matbench' is deprecated, renamed 'postprocess' "
                        "(the old name is accepted for one release)" % path]
    resolved = cfg.resolve_config(path)
    assert resolved.config == {"tests": {"a": 1}, "postprocess": {"workload": "w"}, "export": {"b": 2}}
    assert resolved.warnings == warnings
    assert resolved.source == path


def test_a_document_with_both_names_of_a_section_is_refused(tmp_path):
    path = _write(tmp_path, "both.yaml", "matbench: {}\npostprocess: {}\n")
    with pytest.raises(errors.ConfigError) as refused:
        cfg.load_config_document(path)
    assert str(refused.value) == ("config file %s: has both 'matbench' and its new name 'postprocess'; keep 'postprocess' only"
                                  % path)
    with pytest.raises(errors.ConfigError) as refused:
        cfg.resolve_config({"matbench": {}, "postprocess": {}})
    assert str(refused.value) == "<memory>: has both 'matbench' and its new name 'postprocess'; keep 'postprocess' only"


def test_every_renamed_section_of_the_table_is_moved(monkeypatch):
    monkeypatch.setattr(cfg, "RENAMED_SECTIONS", {"older": "newer", "matbench": "postprocess"})
    warnings = []
    document = cfg.migrate_renamed_sections({"matbench": {"x": 1}}, "src", warnings)
    assert document == {"postprocess": {"x": 1}}
    assert warnings == ["src: section 'matbench' is deprecated, renamed 'postprocess' (the old name is accepted for one release)"]


def test_dotted_keys_under_a_renamed_section_get_the_new_name_once_warned():
    warnings = []
    mapping = {"matbench": 1, "matbench.a.b": 2, "matbenchx.c": 3, "tests.matbench": 4, 7: 5}
    assert cfg.migrate_renamed_keys(mapping, "src", warnings) == {
        "postprocess": 1, "postprocess.a.b": 2, "matbenchx.c": 3, "tests.matbench": 4, 7: 5}
    expected = ["src: key 'matbench' is deprecated, use 'postprocess'", "src: key 'matbench.a.b' is deprecated, use 'postprocess.a.b'"]
    assert warnings == expected
    cfg.migrate_renamed_keys(mapping, "src", warnings)
    assert warnings == expected  # the same warning is given once
    assert cfg.migrate_renamed_keys({"matbench.a": 1}, "src") == {"postprocess.a": 1}  # no list to warn into


def _old_style_document():
    return {"tests": {"t": 1}, "matbench": {"workload": "w", "n": 0},
            "ci_presets": {"p": {"matbench.workload": "v"}, "q": {"tests.t": 2}, "notes": "text"}}


def test_presets_overrides_and_inventory_may_use_the_old_section_name(tmp_path):
    document = _old_style_document()
    pristine = copy.deepcopy(document)
    path = _write(tmp_path, "o.yaml", "matbench.n: 3\n")
    resolved = cfg.resolve_config(document, presets="p", overrides={"matbench.n": 4}, overrides_file=path, source="mine",
                                  inventory_overrides={"matbench.n": 2})
    assert resolved.config == {"tests": {"t": 1}, "postprocess": {"workload": "v", "n": 4}}
    assert resolved.warnings == [
        "mine: section 'matbench' is deprecated, renamed 'postprocess' (the old name is accepted for one release)",
        "preset 'p': key 'matbench.workload' is deprecated, use 'postprocess.workload'",
        "perfscale_overrides: key 'matbench.n' is deprecated, use 'postprocess.n'",
        "overrides file %s: key 'matbench.n' is deprecated, use 'postprocess.n'" % path,
        "overrides: key 'matbench.n' is deprecated, use 'postprocess.n'",
    ]
    assert resolved.overrides == {"postprocess.n": 4}
    assert resolved.inventory == {"presets": [], "overrides": {"postprocess.n": 2}}
    assert resolved.source == "mine"
    # nothing is modified in place, not even the presets of the caller's document
    assert document == pristine


# --------------------------------------------------------------------------
# inventory presets and overrides (steps 2 and 3 of docs/configuration.md)


def test_inventory_presets_and_overrides_come_between_the_document_and_the_command_line():
    document = {"tests": {"a": 0, "b": 0, "c": 0},
                "ci_presets": {"name": "doc", "doc": {"tests.a": 1, "tests.b": 1, "tests.c": 1},
                               "lab": {"tests.a": 2, "tests.b": 2}, "cli": {"tests.a": 4}}}
    resolved = cfg.resolve_config(document, presets="cli", inventory_presets="lab", inventory_overrides={"tests.b": 3})
    assert resolved.presets_applied == ["doc", "lab", "cli"]
    assert resolved.config == {"tests": {"a": 4, "b": 3, "c": 1}}
    assert resolved.inventory == {"presets": ["lab"], "overrides": {"tests.b": 3}}
    assert resolved.overrides == {}
    assert resolved.warnings == []
    assert resolved.source == "<memory>"
    # an inventory override wins over an inventory preset, a command-line preset over both
    later = cfg.resolve_config(document, presets=["lab"], inventory_presets=["cli"], inventory_overrides='{"tests.a": 9}')
    assert later.config["tests"]["a"] == 2
    assert later.inventory == {"presets": ["cli"], "overrides": {"tests.a": 9}}


@pytest.mark.parametrize("kwargs,message", [
    ({"inventory_presets": ["lab", 3]}, "perfscale_presets: expected preset names (strings), got 3"),
    ({"inventory_presets": "nope"}, "unknown preset 'nope'; known presets: lab"),
    ({"inventory_overrides": "[1]"}, "perfscale_overrides: expected a mapping of dotted keys to values, got list"),
    ({"inventory_overrides": {"ci_presets.lab": {}}}, "perfscale_overrides (inventory): cannot modify the 'ci_presets' section"),
    ({"inventory_overrides": {"tests.zzzzzzzzzz": 1}},
     "perfscale_overrides (inventory): key 'tests.zzzzzzzzzz' does not exist in the configuration (presets and overrides cannot "
     "create keys); no similar key exists"),
])
def test_inventory_mistakes_name_the_inventory_variable(kwargs, message):
    document = {"tests": {"a": 0}, "ci_presets": {"lab": {"tests.a": 2}}}
    with pytest.raises(errors.ConfigError) as refused:
        cfg.resolve_config(document, **kwargs)
    assert str(refused.value) == message


def test_a_result_built_without_inventory_or_warnings_has_empty_ones():
    resolved = cfg.ResolvedConfig({"a": 1}, ["p"], "src", {"a": 1})
    assert resolved.inventory == {"presets": [], "overrides": {}}
    assert resolved.warnings == []
    assert (resolved.config, resolved.presets_applied, resolved.source, resolved.overrides) == ({"a": 1}, ["p"], "src", {"a": 1})


# --------------------------------------------------------------------------
# presets: exact messages and forms


def _preset_document(**presets):
    return {"tests": {"a": 1, "b": 2}, "ci_presets": dict({"one": {"tests.a": 5}}, **presets)}


def test_a_null_preset_is_an_empty_one_and_extends_may_be_a_single_name():
    document = _preset_document(nothing=None, single={"extends": "one", "tests.b": 3})
    resolved = cfg.resolve_config(document, presets="nothing")
    assert resolved.presets_applied == ["nothing"] and resolved.config == {"tests": {"a": 1, "b": 2}}
    resolved = cfg.resolve_config(document, presets="single")
    assert resolved.presets_applied == ["one", "single"] and resolved.config == {"tests": {"a": 5, "b": 3}}


@pytest.mark.parametrize("preset,message", [
    ([1], "preset 'bad': expected a mapping of dotted keys to values, got list"),
    ("tests.a", "preset 'bad': expected a mapping of dotted keys to values, got str"),
    ({"extends": 3}, "preset 'bad': 'extends' must be a preset name or a list of names"),
    ({"extends": ["one", 2]}, "preset 'bad': 'extends' must be a preset name or a list of names"),
    ({"extends": {"one": None}}, "preset 'bad': 'extends' must be a preset name or a list of names"),
    ({"ci_presets.one": {}}, "preset 'bad': cannot modify the 'ci_presets' section"),
    ({"ci_presets": {}}, "preset 'bad': cannot modify the 'ci_presets' section"),
    ({"extends": ["nope"]}, "preset 'bad' extends unknown preset 'nope'; known presets: bad, one"),
    ({"extends": ["one", "onw"]}, "preset 'bad' extends unknown preset 'onw' (did you mean 'one'?); known presets: bad, one"),
])
def test_a_malformed_preset_is_one_line_naming_it(preset, message):
    with pytest.raises(errors.ConfigError) as refused:
        cfg.resolve_config(_preset_document(bad=preset), presets="bad")
    assert str(refused.value) == message


def test_an_unknown_preset_message_in_full():
    with pytest.raises(errors.ConfigError) as refused:
        cfg.resolve_config(PRESETS, presets="fsat")
    assert str(refused.value) == ("unknown preset 'fsat' (did you mean 'fast'?); known presets: base, diamond, empty, fast, new_key, "
                                  "override_after_extends, replace_harness, scalar_parent")
    with pytest.raises(errors.ConfigError) as refused:
        cfg.resolve_config({"tests": {"a": 1}}, presets="fast")
    assert str(refused.value) == "unknown preset 'fast'; known presets: (none)"


def test_presets_are_listed_in_the_order_the_document_gives_them():
    assert cfg.known_presets_in_order(PRESETS) == ["base", "fast", "override_after_extends", "replace_harness", "diamond",
                                                   "new_key", "scalar_parent", "empty"]
    assert cfg.known_presets_in_order({"ci_presets": {"z": {}, "name": "z", "a": {}}}) == ["z", "a"]
    assert cfg.known_presets_in_order({"tests": {}}) == [] and cfg.known_presets_in_order({"ci_presets": None}) == []
    assert cfg.known_presets({"ci_presets": {"z": {}, "names": ["z"], "a": {}}}) == ["a", "z"]


@pytest.mark.parametrize("presets,message", [
    ({"names": [3]}, "ci_presets.names: expected preset names (strings), got 3"),
    ({"names": 3}, "ci_presets.names: expected a name or a comma-separated list of names, got 3"),
    ({"name": 3}, "ci_presets.name: expected one preset name, got int"),
])
def test_a_malformed_selection_in_the_document_names_its_key(presets, message):
    with pytest.raises(errors.ConfigError) as refused:
        cfg.document_preset_selection({"ci_presets": presets})
    assert str(refused.value) == message


def test_preset_names_accept_a_tuple_and_refuse_other_kinds_exactly():
    assert cfg.parse_preset_names(("a", "b,c")) == ["a", "b", "c"]
    assert cfg.parse_preset_names("") == []
    with pytest.raises(errors.ConfigError) as refused:
        cfg.parse_preset_names({"a": 1}, source="perfscale_presets")
    assert str(refused.value) == "perfscale_presets: expected a name or a comma-separated list of names, got {'a': 1}"
    with pytest.raises(errors.ConfigError) as refused:
        cfg.parse_preset_names(3)
    assert str(refused.value) == "preset: expected a name or a comma-separated list of names, got 3"


# --------------------------------------------------------------------------
# overrides: exact messages


@pytest.mark.parametrize("value", [None, "", "null", "~", "# only a comment\n", {}])
def test_empty_overrides_are_no_overrides(value):
    assert cfg.parse_overrides(value) == {}


def test_overrides_mistakes_are_one_line_naming_their_source(tmp_path):
    with pytest.raises(errors.ConfigError) as refused:
        cfg.parse_overrides("- 1\n")
    assert str(refused.value) == "overrides: expected a mapping of dotted keys to values, got list"
    path = _write(tmp_path, "o.yaml", "- tests.a\n")
    with pytest.raises(errors.ConfigError) as refused:
        cfg.load_overrides_file(path)
    assert str(refused.value) == "overrides file %s: expected a mapping of dotted keys to values, got list" % path
    path = _write(tmp_path, "p.yaml", "ci_presets: {}\n")
    with pytest.raises(errors.ConfigError) as refused:
        cfg.resolve_config({"tests": {"a": 1}}, overrides_file=path)
    assert str(refused.value) == "overrides file %s: cannot modify the 'ci_presets' section" % path
    with pytest.raises(errors.ConfigError) as refused:
        cfg.resolve_config({"tests": {"a": 1}}, overrides={"ci_presets": {}})
    assert str(refused.value) == "overrides: cannot modify the 'ci_presets' section"
    path = _write(tmp_path, "k.yaml", "tests.zzzzzzzzzz: 1\n")
    with pytest.raises(errors.ConfigError) as refused:
        cfg.resolve_config({"tests": {"a": 1}}, overrides_file=path)
    assert str(refused.value) == ("overrides file %s: key 'tests.zzzzzzzzzz' does not exist in the configuration (presets and overrides "
                                  "cannot create keys); no similar key exists" % path)


# --------------------------------------------------------------------------
# closest keys


def test_the_closest_keys_are_the_three_most_similar_best_first():
    tree = {"s": {"alpha1": 1, "alpha12": 2, "alpha123": 3, "alpha1234": 4}}
    # similarity to 's.alpha' is 14/15, 14/16, 14/17, 14/18
    assert cfg.close_matches("s.alpha", tree) == ["s.alpha1", "s.alpha12", "s.alpha123"]
    assert cfg.close_matches("s.alpha", tree, limit=1) == ["s.alpha1"]
    with pytest.raises(errors.ConfigError) as refused:
        cfg.set_dotted(tree, "s.alpha", 1)
    assert str(refused.value) == ("override: key 's.alpha' does not exist in the configuration (presets and overrides cannot create "
                                  "keys); closest existing keys: s.alpha1, s.alpha12, s.alpha123")


def test_a_last_component_must_be_three_quarters_similar_to_be_suggested():
    tree = {"q": {"abcde": 1}}
    # 'abcdx' shares 4 of 5 letters (0.8), 'abcxy' 3 of 5 (0.6); the whole keys are far apart
    assert cfg.close_matches("zzzzzzzzzz.abcdx", tree) == ["q.abcde"]
    assert cfg.close_matches("zzzzzzzzzz.abcxy", tree) == []
    # several leaves as close: the first ones of the document, up to the limit
    leaves = {"s": {"abcd%d" % i: i for i in range(6)}}
    assert cfg.close_matches("zzzzzzzzzz.abcd9", leaves, limit=2) == ["s.abcd0", "s.abcd1"]
    assert cfg.close_matches("zzzzzzzzzz.abcd9", leaves) == ["s.abcd0", "s.abcd1", "s.abcd2"]


def test_a_missing_leaf_under_an_existing_section_suggests_the_section_first():
    tree = {"tests": {"benchmark": {"timeout": 1}}}
    # as whole keys, 'tests.benchmark.x' is 30/32 like 'tests.benchmark' and 32/40 like its 'timeout'; the leaf 'x' is like nothing
    assert cfg.close_matches("tests.benchmark.x", tree) == ["tests.benchmark", "tests.benchmark.timeout"]


def test_an_override_under_a_yaml_alias_leaves_its_anchor_and_other_aliases_as_written():
    document = cfg.parse_yaml_text(
        "base: &base {replicas: 1, args: [a]}\n"
        "tests: {small: *base, large: *base}\n"
        "ci_presets:\n  bigger: {tests.large.replicas: 4, tests.large.args: [b]}\n", "config.yaml")
    resolved = cfg.resolve_config(document, presets="bigger", overrides="tests.small.replicas: 2")
    assert resolved.config["tests"] == {"small": {"replicas": 2, "args": ["a"]},
                                        "large": {"replicas": 4, "args": ["b"]}}
    assert resolved.config["base"] == {"replicas": 1, "args": ["a"]}
    assert document["tests"]["small"] is document["base"]      # the caller's document is left as loaded


def test_a_value_set_twice_from_one_anchor_is_two_values():
    value = {"a": [1]}
    tree = cfg.unshared_copy({"x": value, "y": value, "z": [value, value]})
    assert tree == {"x": {"a": [1]}, "y": {"a": [1]}, "z": [{"a": [1]}, {"a": [1]}]}
    parts = [tree["x"], tree["y"], tree["z"][0], tree["z"][1], value]
    assert len({id(part) for part in parts}) == 5 and len({id(part["a"]) for part in parts}) == 5


@pytest.mark.parametrize("notifier, settings", [
    ("github", {"repo": "team/project", "pr_number": 7, "token_file": "gh-token"}),
    ("slack", {"channel": "C0123", "token_file": "slack-token"}),
])
def test_a_notifiers_token_goes_only_over_https_or_to_a_loopback_host(notifier, settings):
    """notifications.*.api_url over http:// would send the bearer token in clear: refused when the
    configuration is read, by name, before any run (a loopback stand-in, and a disabled notifier, are fine)."""
    def section(url, enabled=True):
        return {"notifications": {notifier: dict(settings, enabled=enabled, api_url=url)}}

    with pytest.raises(errors.ConfigError) as refused:
        config_schema.read_section(section("http://github.example.com/api/v3"), "notifications")
    message = str(refused.value)
    assert "\n" not in message and "api_url http://github.example.com/api/v3: bearer tokens are only sent over https://" \
        in message
    for url in ("https://github.example.com/api/v3", "http://127.0.0.1:8080", "http://localhost:9/api"):
        assert config_schema.read_section(section(url), "notifications")[notifier]["api_url"] == url
    assert config_schema.read_section(section("http://github.example.com", enabled=False), "notifications")
