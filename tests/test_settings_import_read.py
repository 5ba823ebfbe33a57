"""read_settings: detection by content, every example file, the issue's 3 × 3 pair, explain()'s
TOML, durations in each syntax, and files that are not settings (one line each)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from settings_import_helpers import EXAMPLES, ROOT, config_of, error_of, max_attempts, write

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from sim.settings.imported import KINDS, explain, read_settings, worst_case_attempts
from sim.settings.imported.durations import to_ms
from sim.settings.imported.source import Document
from sim.vocabulary.errors import ConfigError

EXPECTED_KINDS = {"envoy.yaml": "envoy", "envoy.json": "envoy", "envoy_sidecar.yaml": "envoy", "istio.yaml": "istio",
                  "grpc_service_config.json": "grpc", "application.yml": "resilience4j",
                  "appsettings.json": "dotnet", "aws_config": "aws"}


# backoff-sim's own files beside them: a layers file (sim.settings.imported.native) and the
# service `backoff-sim check --service` runs them against.
OWN = {"layers.toml", "service.toml"}


def test_examples_are_one_of_each_kind() -> None:
    assert sorted(p.name for p in EXAMPLES.iterdir() if p.name not in OWN) == sorted(EXPECTED_KINDS)
    assert set(EXPECTED_KINDS.values()) == set(KINDS)


@pytest.mark.parametrize("name", sorted(EXPECTED_KINDS))
def test_every_example_reads_and_builds_a_config(name: str) -> None:
    layers = read_settings(EXAMPLES / name)
    assert [layer.kind for layer in layers] == [EXPECTED_KINDS[name]]
    layer = layers[0]
    assert layer.attempts >= 1 and layer.retries == layer.attempts - 1
    config = config_of(layer)
    limit = max_attempts(config)
    assert limit is None or limit == layer.attempts or layer.fleet.get("hedging")
    assert read_settings(EXAMPLES / name, kind=EXPECTED_KINDS[name])[0] == layer  # the override agrees


def test_the_issues_pair_is_nine_attempts_per_call() -> None:
    app = read_settings(EXAMPLES / "application.yml")[0]
    sidecar = read_settings(EXAMPLES / "envoy_sidecar.yaml")[0]
    assert (app.counts(), sidecar.counts()) == ("3 attempts (2 retries)", "3 attempts (2 retries)")
    assert worst_case_attempts([app, sidecar]) == 9
    text = explain([app, sidecar])
    assert "3 × 3 = 9 attempts per call (8 retries)" in text
    assert text.count("3 attempts (2 retries)") >= 2


@pytest.mark.parametrize("name", sorted(EXPECTED_KINDS))
def test_explain_is_toml_of_the_entries(name: str) -> None:
    layers = read_settings(EXAMPLES / name)
    document = tomllib.loads(explain(layers))
    assert document["strategies"] == [layer.entry for layer in layers]
    fleet = {k: v for layer in layers for k, v in layer.fleet.items()}
    assert document.get("simulation", {}).get("fleet", {}) == fleet


def test_kind_override_reads_a_file_detection_would_not(tmp_path: Path) -> None:
    path = write(tmp_path, "policy.json", '{ "retry_on": "5xx", "num_retries": 3 }')
    assert read_settings(path)[0].attempts == 4  # a bare retry_policy is detected as Envoy's
    with pytest.raises(ConfigError) as info:
        read_settings(path, kind="grpc")
    assert "retry_on" in str(info.value) and "is not a key of a gRPC service config" in str(info.value)


def test_several_call_paths_are_refused_unless_one_is_named(tmp_path: Path) -> None:
    text = """
    resilience4j:
      retry:
        instances:
          a: { maxAttempts: 2 }
          b: { maxAttempts: 4 }
    """
    message = error_of(tmp_path, "application.yml", text)
    assert "2 call paths ('a', 'b')" in message and "#a" in message
    path = tmp_path / "application.yml"
    assert read_settings(f"{path}#b")[0].attempts == 4
    assert read_settings(path, select="a")[0].attempts == 2
    with pytest.raises(ConfigError, match="did you mean 'b'"):
        read_settings(path, select="bb")


@pytest.mark.parametrize("call, words", [
    (lambda p: read_settings(p / "missing.yaml"), "no such file"),
    (lambda p: read_settings(write(p, "x.yaml", "title: hello\n")), "is not settings this tool knows"),
    (lambda p: read_settings(write(p, "x.json", '{"a": 1}'), kind="envy"), "did you mean 'envoy'"),
    (lambda p: read_settings(write(p, "e.yaml", "retry_policy: { retry_on: 5xx }\n"), order="retry-inside"),
     "order applies to resilience4j"),
    (lambda p: read_settings(write(p, "dup.json", '{"retry_policy": {}, "retry_policy": {}}')), "is given twice"),
    (lambda p: read_settings(write(p, "empty.yaml", "\n")), "is empty"),
])
def test_files_that_are_not_settings_are_one_line(tmp_path: Path, call, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        call(tmp_path)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_json_reads_without_pyyaml_and_yaml_says_how_to_get_it(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['yaml'] = None\n"
            "from sim.settings.imported import read_settings\n"
            "from sim.vocabulary.errors import ConfigError\n"
            f"print(read_settings({str(EXAMPLES / 'grpc_service_config.json')!r})[0].attempts)\n"
            "try:\n"
            f"    read_settings({str(EXAMPLES / 'envoy.yaml')!r})\n"
            "except ConfigError as exc:\n"
            "    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    lines = out.stdout.splitlines()
    assert lines[0] == "4", out.stderr
    assert "needs PyYAML" in lines[1] and "pip install PyYAML" in lines[1]


@pytest.mark.parametrize("syntax, text, ms", [
    ("proto", "0.025s", 25.0), ("proto", "15s", 15000.0), ("proto", {"seconds": 1, "nanos": 500000000}, 1500.0),
    ("go", "25ms", 25.0), ("go", "1m30s", 90000.0), ("go", "1.5h", 5400000.0), ("go", "0", 0.0),
    ("spring", "PT2S", 2000.0), ("spring", "PT0.5S", 500.0), ("spring", "P1DT1M", 86460000.0),
    ("spring", "500ms", 500.0), ("spring", "1m", 60000.0), ("spring", 250, 250.0), ("spring", "3s", 3000.0),
    ("timespan", "00:00:02", 2000.0), ("timespan", "00:00:00.500", 500.0), ("timespan", "1.02:03:04", 93784000.0),
    ("timespan", "00:01", 60000.0),
])
def test_durations_in_every_syntax(syntax: str, text, ms: float) -> None:
    assert to_ms(Document("f", {}), ("k",), text, syntax) == pytest.approx(ms)


@pytest.mark.parametrize("syntax, text", [("proto", "25ms"), ("go", "25"), ("spring", "2 sec"),
                                          ("timespan", "2s"), ("timespan", "00:61:00")])
def test_durations_in_the_wrong_syntax_are_refused(syntax: str, text: str) -> None:
    with pytest.raises(ConfigError, match="is not a duration"):
        to_ms(Document("f.yaml", {}, {("k",): 3}), ("k",), text, syntax)


def test_an_entry_the_model_refuses_is_one_line_at_reading() -> None:
    from sim.settings.imported.layer import Layer
    from sim.settings.imported.read import _checked
    layer = Layer(source="s.yaml", kind="envoy", name="r", attempts=2,
                  entry={"name": "r", "preset": "envoy", "num_retries": 1, "base_interval": 0.2})
    with pytest.raises(ConfigError) as info:
        _checked(layer, "s.yaml")
    assert str(info.value).startswith("s.yaml: key 'r': becomes a strategy entry backoff-sim refuses: "
                                      "strategy.base_interval")


def test_retry_on_retries_only_its_kinds() -> None:
    from sim.policies.chain import chain_from_data
    from sim.vocabulary.outcomes import DENIED, REJECTED, SERVER_ERROR, TIMED_OUT
    spec = chain_from_data({"strategy": {"type": "Constant", "constant": 7.0},
                            "policies": [{"type": "RetryOn", "kinds": ["rejected", "timed_out"]}]})
    chain = spec.build([lambda: 0.5])[0]
    assert chain.on_failure(0.0, REJECTED, 1, 0.0) == 7.0
    assert chain.on_failure(0.0, TIMED_OUT, 2, 0.0) == 7.0
    assert chain.on_failure(0.0, DENIED, 3, 0.0) == 7.0  # a refusal of the chain's own is left to the others
    verdict = chain.on_failure(0.0, SERVER_ERROR, 1, 0.0)
    assert verdict.__class__.__name__ == "GiveUp" and verdict.reason == "retry_on" and not verdict.denied
    with pytest.raises(Exception, match="unknown failure kind 'rejectd'"):
        chain_from_data({"strategy": {"type": "Constant", "constant": 1.0},
                         "policies": [{"type": "RetryOn", "kinds": ["rejectd"]}]})


def test_reading_settings_imports_no_yaml_until_a_yaml_file() -> None:
    code = ("import sys\nimport sim.settings.imported\nprint('yaml' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "False", out.stderr
