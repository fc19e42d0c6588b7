import json
import os

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.config import checks as config_checks
from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.config import loading as cfg
from ansible_collections.perfscale.topsail.plugins.module_utils.config import schema as config_schema

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
    assert config_schema.validate_section(config, "tests.benchmark.harness", Harness).backend == "numpy"
    config["tests"]["benchmark"]["harness"]["backnd"] = "x"
    with pytest.raises(errors.ConfigError) as error:
        config_schema.validate_section(config, "tests.benchmark.harness", Harness)
    assert one_line(str(error.value)) == (
        "config section 'tests.benchmark.harness' is invalid: unknown key 'tests.benchmark.harness.backnd' (did you mean 'backend'?)"
    )
    config["tests"]["benchmark"]["harness"] = {"backend": "numpy", "threads": "many"}
    with pytest.raises(errors.ConfigError, match=r"'tests.benchmark.harness.threads': Input should be a valid integer"):
        config_schema.validate_section(config, "tests.benchmark.harness", Harness)


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
