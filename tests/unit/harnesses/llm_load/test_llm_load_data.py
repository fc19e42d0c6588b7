"""Length distributions, synthetic prompts, prompt files and token counting."""

import json
import random
import statistics

import pytest

from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load import prompts
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.config import ConfigError
from ansible_collections.perfscale.topsail.plugins.module_utils.harnesses.llm_load.distributions import (
    DistributionError,
    parse_length,
)

from conftest import FIXTURES


@pytest.mark.parametrize("spec,name,params", [
    ("128", "fixed", (128,)), (64, "fixed", (64,)), ("fixed:32", "fixed", (32,)), ("uniform:10,20", "uniform", (10, 20)),
    ("normal:100,10", "normal", (100, 10)), ("lognormal:100,30", "lognormal", (100, 30)), ("exponential:50", "exponential", (50,)),
])
def test_length_specifications_parse(spec, name, params):
    distribution = parse_length(spec)
    assert distribution.name == name and distribution.params == tuple(float(p) for p in params)


@pytest.mark.parametrize("spec,message", [
    ("zipf:3", "unknown distribution 'zipf'"), ("normal:100", "normal takes 2 parameter(s) (MEAN,STDDEV)"),
    ("uniform:20,10", "uniform needs LOW <= HIGH"), ("normal:100,-1", "standard deviation must be >= 0"),
    ("0", "first parameter must be a positive number"), ("abc", "parameters must be numbers"), (True, "expected a token count"),
    ("fixed:1.5", "a fixed length must be an integer"), ("normal:100,10,50,20", "expected 0 <= MIN <= MAX"),
])
def test_bad_length_specifications_are_one_line_errors(spec, message):
    with pytest.raises(DistributionError, match="--prompt-tokens") as info:
        parse_length(spec, "--prompt-tokens")
    assert message in str(info.value) and "\n" not in str(info.value)


def test_samples_are_seeded_clamped_and_near_their_mean():
    normal = parse_length("normal:100,20,60,140")
    first = [normal.sample(random.Random(7)) for _sample in range(3)]
    assert first == [normal.sample(random.Random(7)) for _sample in range(3)]
    generator = random.Random(1)
    samples = [normal.sample(generator) for _sample in range(4000)]
    assert min(samples) >= 60 and max(samples) <= 140 and abs(statistics.fmean(samples) - 100) < 2
    lognormal = parse_length("lognormal:200,50")
    generator = random.Random(2)
    samples = [lognormal.sample(generator) for _sample in range(8000)]
    assert abs(statistics.fmean(samples) - 200) < 4 and abs(statistics.pstdev(samples) - 50) < 4
    uniform = parse_length("uniform:5,9")
    generator = random.Random(3)
    assert {uniform.sample(generator) for _sample in range(500)} == {5, 6, 7, 8, 9}


def test_report_sequence_lengths():
    assert parse_length("128").as_sequence_length() == {"distribution": "fixed", "value": 128, "min": 1}
    assert parse_length("normal:100,10").as_sequence_length()["distribution"] == "gaussian"
    assert parse_length("uniform:10,20").as_sequence_length() == {"distribution": "uniform", "value": 15, "min": 10, "max": 20}


def test_synthetic_prompts_hit_their_length_with_the_word_estimate():
    counter = prompts.WordEstimate()
    data = prompts.SyntheticPrompts(parse_length("normal:200,40"), parse_length("32"), counter, seed=5)
    for index in range(50):
        request = data.request(0, index)
        assert counter.count(request.prompt) == request.input_tokens
        assert request.prompt.startswith("Request 0-%d:" % index) and request.max_tokens == 32
    # reproducible per (seed, stage, index), different across indexes
    again = prompts.SyntheticPrompts(parse_length("normal:200,40"), parse_length("32"), counter, seed=5)
    assert again.request(0, 17).prompt == data.request(0, 17).prompt
    assert data.request(0, 1).input_tokens != data.request(0, 2).input_tokens or data.request(0, 3).input_tokens != data.request(0, 4).input_tokens


def test_shared_prefix_groups():
    counter = prompts.WordEstimate()
    data = prompts.SyntheticPrompts(parse_length("64"), parse_length("8"), counter, prefix_tokens=100, prefix_groups=3)
    requests = [data.request(0, i) for i in range(6)]
    prefixes = [r.prompt.split(" Request ")[0] for r in requests]
    assert prefixes[0] == prefixes[3] and prefixes[1] == prefixes[4] and len(set(prefixes)) == 3
    assert all(counter.count(p) == 100 for p in prefixes)
    assert all(r.input_tokens == 164 and counter.count(r.prompt) == 164 for r in requests)


def test_local_tokenizer_counts_exactly():
    pytest.importorskip("tokenizers")
    counter = prompts.load_tokenizer(FIXTURES + "/tokenizer")
    assert counter.exact and counter.count("the of and tok") == 4
    data = prompts.SyntheticPrompts(parse_length("uniform:20,60"), parse_length("8"), counter, seed=1)
    for index in range(20):
        request = data.request(1, index)
        assert abs(counter.count(request.prompt) - request.input_tokens) <= 1


def test_missing_tokenizer_is_a_config_error():
    with pytest.raises(ConfigError, match="tokenizer /nonexistent does not exist"):
        prompts.load_tokenizer("/nonexistent")


def test_prompt_file(tmp_path):
    path = tmp_path / "prompts.jsonl"
    path.write_text("\n".join([json.dumps({"prompt": "one two three"}),
                               json.dumps({"messages": [{"role": "user", "content": "four five"}], "output_tokens": 7}),
                               json.dumps("six seven eight nine"), ""]))
    data = prompts.FilePrompts(str(path), parse_length("16"), prompts.WordEstimate())
    assert [(r.input_tokens, r.max_tokens) for r in (data.request(0, i) for i in range(4))] == [(3, 16), (2, 7), (4, 16), (3, 16)]
    assert isinstance(data.request(0, 1).prompt, list)
    path.write_text('{"prompt": ""}\n')
    with pytest.raises(ConfigError, match="line 1: expected a non-empty prompt"):
        prompts.FilePrompts(str(path), parse_length("16"), prompts.WordEstimate())


def test_tokenizer_libraries_missing_fall_back_to_the_word_estimate(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "tokenizers", None)
    monkeypatch.setitem(sys.modules, "transformers", None)
    counter = prompts.load_tokenizer(FIXTURES + "/tokenizer")
    assert not counter.exact and "tokenizers not importable" in counter.fallback_reason
    assert counter.describe()["instead_of_tokenizer"].startswith("tokenizer ")
