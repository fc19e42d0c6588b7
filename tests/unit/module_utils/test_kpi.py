import pydantic
import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from ansible_collections.perfscale.topsail.plugins.module_utils import errors
from ansible_collections.perfscale.topsail.plugins.module_utils.analysis import kpi as k


def make_kpis():
    @k.HigherBetter
    @k.KPIMetadata(help="Throughput", unit="GFLOP/s")
    @k.Format("{:.1f}")
    def rate(payload):
        return payload["results"]["rate"]

    @k.LowerBetter
    @k.IgnoredForRegression
    @k.KPIMetadata(help="Memory", unit="bytes")
    @k.FormatDivisor(1024 ** 3, unit="GiB", format="{:.2f}")
    def memory(payload):
        return payload["results"]["memory"]

    return [rate, memory]


def test_decorators_record_metadata_direction_and_formats():
    rate, memory = k.collect_kpis(make_kpis())
    assert (rate.name, rate.help, rate.unit, rate.higher_is_better, rate.ignored_for_regression) == (
        "rate", "Throughput", "GFLOP/s", True, False)
    assert (memory.higher_is_better, memory.ignored_for_regression) == (False, True)
    assert rate.formatted(123.456) == "123.5 GFLOP/s"
    assert memory.formatted(3 * 1024 ** 3) == "3.00 GiB"
    assert memory.formatted(None) is None


def test_missing_metadata_and_direction_are_reported_together():
    @k.HigherBetter
    def no_metadata(payload):
        return 1

    @k.KPIMetadata(help="x", unit="s")
    def no_direction(payload):
        return 1

    with pytest.raises(errors.KPIError) as error:
        k.collect_kpis([no_metadata, no_direction])
    assert str(error.value) == ("KPI no_metadata lacks @KPIMetadata(help=..., unit=...); "
                                "KPI no_direction lacks @HigherBetter or @LowerBetter")


def test_both_directions_is_an_error():
    with pytest.raises(errors.KPIError, match="declared both HigherBetter and LowerBetter"):
        @k.LowerBetter
        @k.HigherBetter
        @k.KPIMetadata(help="x", unit="s")
        def confused(payload):
            return 1


def test_zero_divisor_is_refused():
    with pytest.raises(errors.KPIError, match="divisor must be non-zero"):
        @k.FormatDivisor(0, unit="x")
        def bad(payload):
            return 1


def test_lenient_mode_gives_none_with_warnings():
    definitions = k.collect_kpis(make_kpis())
    values, warnings = k.compute_kpis(definitions, {"results": {"rate": 10.0}})
    assert values["rate"]["value"] == 10.0 and values["rate"]["formatted"] == "10.0 GFLOP/s"
    assert values["memory"]["value"] is None
    assert warnings == ["KPI memory: KeyError: 'memory'"]
    values, warnings = k.compute_kpis(definitions, {"results": {"rate": "fast", "memory": float("nan")}})
    assert values["rate"]["value"] is None and values["memory"]["value"] is None
    assert warnings[0] == "KPI rate: not a finite number ('fast')"


def test_strict_mode_fails_with_the_list_of_what_is_missing():
    definitions = k.collect_kpis(make_kpis())
    with pytest.raises(errors.MissingData) as error:
        k.compute_kpis(definitions, {"results": {}}, strict=True)
    assert error.value.missing == ["kpi rate", "kpi memory"]


class Labels(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    model: str
    size: int


def test_labels_strict_and_lenient():
    assert k.validate_labels(Labels, {"model": "m", "size": "3"}) == ({"model": "m", "size": 3}, [])
    with pytest.raises(errors.MissingData) as error:
        k.validate_labels(Labels, {"model": "m", "colour": "red"}, strict=True)
    assert error.value.missing == ["label size", "unknown label colour"]
    labels, warnings = k.validate_labels(Labels, {"model": "m", "colour": "red"})
    assert labels == {"model": "m", "colour": "red"}
    assert warnings == ["labels: label size", "labels: unknown label colour"]


def test_flat_records_carry_the_labels():
    definitions = k.collect_kpis(make_kpis())
    values, _ignored = k.compute_kpis(definitions, {"results": {"rate": 1.0, "memory": 2}})
    records = k.flat_records({"model": "m"}, values, {"test_uuid": "u"})
    assert records[0] == {"model": "m", "test_uuid": "u", "kpi_name": "rate", "value": 1.0, "unit": "GFLOP/s",
                          "higher_is_better": True, "ignored_for_regression": False, "view_of": None, "error": None}
    assert records[1]["kpi_name"] == "memory" and records[1]["model"] == "m"


def test_openmetrics_text_is_exact_and_parses():
    definitions = k.collect_kpis(make_kpis())
    first, _ignored = k.compute_kpis(definitions, {"results": {"rate": 12.5, "memory": 2048}})
    second, _ignored = k.compute_kpis(definitions, {"results": {"rate": 13.0}})
    text = k.openmetrics([({"model": 'a "quoted"\nname', "size": 1}, first), ({"model": "b", "size": 2}, second)])
    assert text == (
        "# HELP perfscale_rate_gflop_per_s Throughput\n"
        "# TYPE perfscale_rate_gflop_per_s gauge\n"
        "# UNIT perfscale_rate_gflop_per_s gflop_per_s\n"
        'perfscale_rate_gflop_per_s{model="a \\"quoted\\"\\nname",size="1"} 12.5\n'
        'perfscale_rate_gflop_per_s{model="b",size="2"} 13.0\n'
        "# HELP perfscale_memory_bytes Memory\n"
        "# TYPE perfscale_memory_bytes gauge\n"
        "# UNIT perfscale_memory_bytes bytes\n"
        'perfscale_memory_bytes{model="a \\"quoted\\"\\nname",size="1"} 2048\n'
        "# EOF\n"
    )
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert families["perfscale_rate_gflop_per_s"].unit == "gflop_per_s"
    assert [s.value for s in families["perfscale_rate_gflop_per_s"].samples] == [12.5, 13.0]
    assert families["perfscale_rate_gflop_per_s"].samples[0].labels["model"] == 'a "quoted"\nname'


@pytest.mark.parametrize("unit,token", [("GFLOP/s", "gflop_per_s"), ("%", "percent"), ("s", "s"), ("", "")])
def test_unit_tokens(unit, token):
    assert k.unit_token(unit) == token
