"""``backoff-sim check``'s layers: backoff-sim's own settings file read into ``Layer``s (one line
naming the file and the key for a mistake), the worst-case amplification as the product of the
layers' attempts, and the run under total failure that confirms it (issue 36)."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import pytest

from sim.check.amplification import simulated, total_failure_block, worst_case
from sim.check.build import Settings
from sim.check.layers import explain, read_layers
from sim.check.service import from_flags
from sim.settings.config import parse_config
from sim.settings.imported.native import read_native
from sim.vocabulary.errors import ConfigError
from sim.pipeline import sweep

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "settings" / "layers.toml"
APP = '[[layer]]\nname = "app"\nstrategy = { type = "Constant", constant = 500.0, max_attempts = 3 }\n'


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_example_reads_as_an_app_and_its_sidecar_with_both_counts():
    app, sidecar = read_native(EXAMPLE)
    assert (app.name, app.attempts, app.retries, app.timeout) == ("app", 3, 2, 1000.0)
    assert (sidecar.name, sidecar.attempts, sidecar.retries) == ("sidecar", 3, 2)
    assert sidecar.counts() == "3 attempts (2 retries)"
    # The knob defaults to the attempt limit: max_attempts 1..attempts+2, num_retries 0..attempts+1.
    assert app.knob.path == "max_attempts" and app.knob.values == (1, 2, 3, 4, 5)
    assert sidecar.knob.path == "num_retries" and sidecar.knob.values == (0, 1, 2, 3, 4)


def test_attempts_come_from_the_least_limit_of_the_chain(tmp_path):
    # A MaxAttempts policy tighter than the strategy's max_attempts is the limit that holds.
    path = _write(tmp_path, "s.toml", '[[layer]]\nname = "a"\nstrategy = { type = "Constant", constant = 1.0, '
                  'max_attempts = 5, policies = [{ type = "MaxAttempts", max_attempts = 2 }] }\nknob = false\n')
    (layer,) = read_native(path)
    assert layer.attempts == 2 and layer.knob is None


@pytest.mark.parametrize("text, key", [
    ('[[layer]]\nname = "a"\nstrategy = { type = "Constantt", constant = 0.0, max_attempts = 3 }\n',
     "layer[0].strategy: key 'type'"),
    ('[[layer]]\nname = "a"\nretries = 3\n', "key 'layer[0].retries'"),
    ('[[layer]]\nname = "a"\nstrategy = { type = "Constant", constant = 0.0 }\n', "sets no attempt limit"),
    ('[[layer]]\nname = "a"\nstrategy = { type = "Constant", constant = 0.0, max_attempts = 2 }\ntimeout = -1\n',
     "key 'layer[0].timeout'"),
    ('kind = "envoy"\n' + APP, "key 'kind'"),
    ('title = "x"\n', "key 'title'"),
])
def test_a_mistake_is_one_line_naming_the_file_and_the_key(tmp_path, text, key):
    path = _write(tmp_path, "bad.toml", text)
    with pytest.raises(ConfigError) as caught:
        read_native(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message and key in message


def test_explain_is_a_settings_file_that_reads_back_to_the_same_layers():
    # Without the readers explain is layers_toml; with them it is theirs (not necessarily ours
    # to read back), so the round trip is tested on layers_toml itself.
    from sim.check.toml_text import layers_toml

    layers = read_layers([EXAMPLE])
    assert "3 attempts (2 retries)" in explain(layers)
    text = layers_toml(layers)
    tomllib.loads(text)  # valid TOML
    again = read_native_text(text)
    assert [(l.name, l.attempts, l.entry, l.timeout, l.knob) for l in again] == \
        [(l.name, l.attempts, l.entry, l.timeout, l.knob) for l in layers]
    # A deadline, fleet keys and no knob read back too (a reader's layers, explained, are a file).
    from dataclasses import replace

    other = replace(layers[1], total_timeout=2000.0, fleet={"retry_other_host": True}, knob=None)
    (back,) = read_native_text(layers_toml([other]))
    assert (back.total_timeout, back.fleet, back.knob, back.attempts) == (2000.0, {"retry_other_host": True}, None, 3)


def read_native_text(text: str, tmp=Path("/tmp")):
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "explained.toml"
        path.write_text(text)
        return read_native(path)


def test_worst_case_is_the_running_product_of_the_attempts():
    assert worst_case([3, 3]) == [3, 9]
    assert worst_case([4, 1, 4]) == [4, 4, 16]
    assert worst_case([2, 3, 5])[-1] == math.prod([2, 3, 5])


def _total_failure(layers, seed: int = 0):
    service = from_flags(2, 20.0, 0.5)
    block = total_failure_block(Settings("as_given", "", tuple(layers)), service, seed)
    return simulated(sweep(parse_config({"simulation": [block]}, "<test>"), workers=1)[0])


def test_a_three_attempt_app_behind_a_three_attempt_sidecar_makes_nine_attempts_at_the_service():
    # resilience4j's maxAttempts 3 (the app) behind Envoy's num_retries 2 (the sidecar): under
    # total failure one call reaches the sidecar 3 times and the service 3 x 3 = 9 times; the
    # budget (min_retry_concurrency 3) never binds for one call in flight, and errors are
    # immediate, so no timeout cuts it: exactly the product.
    layers = read_layers([EXAMPLE])
    assert [l.attempts for l in layers] == [3, 3]
    assert _total_failure(layers).per_layer == (3.0, 9.0)


def test_a_policy_that_denies_retries_cuts_the_simulated_worst_case(tmp_path):
    # A retry budget with nothing in it (0% of calls, no reserve) denies every retry of the
    # sidecar: each of the app's 3 attempts reaches the service once, 3 of the product's 9.
    path = _write(tmp_path, "s.toml", APP + 'knob = false\n[[layer]]\nname = "sidecar"\nstrategy = { type = '
                  '"Constant", constant = 0.0, max_attempts = 3, policies = [{ type = "RetryBudget", '
                  'percent = 0.0, min_retries_per_s = 0, scope = "shared" }] }\nknob = false\n')
    layers = read_layers([path])
    assert worst_case([l.attempts for l in layers])[-1] == 9
    assert _total_failure(layers).per_layer == (3.0, 3.0)


def test_a_layers_deadline_becomes_a_deadline_policy_of_its_entry():
    from dataclasses import replace

    from sim.check.battery import BATTERY
    from sim.check.build import battery_block

    app, sidecar = read_layers([EXAMPLE])
    app = replace(app, total_timeout=2500.0)
    block = battery_block(Settings("as_given", "", (app, sidecar)), from_flags(2, 20.0, 0.5), BATTERY[0], 1, 0, "t")
    assert block["strategies"][0]["policies"] == [{"type": "Deadline", "total": 2500.0}]
    assert "policies" not in block["tiers"][0]["retry"]  # the sidecar's own entry, no deadline added
    parse_config({"simulation": [block]}, "<test>")  # a valid config


def test_other_tools_files_go_to_the_readers_and_the_stack_multiplies():
    # The seam with the readers of Envoy, resilience4j... files (sim.settings.imported): a
    # resilience4j app (maxAttempts 3) behind an Envoy sidecar (num_retries 2) is 3 × 3 = 9.
    from sim.check.variants import decorator_order

    examples = EXAMPLE.parent
    app, sidecar = read_layers([examples / "application.yml", examples / "envoy_sidecar.yaml"])
    assert (app.kind, app.attempts, sidecar.kind, sidecar.attempts) == ("resilience4j", 3, "envoy", 3)
    assert "3 × 3 = 9 attempts per call" in explain([app, sidecar])
    # The other decorator order: the resilience4j layer read again with the retry inside.
    settings = Settings("as_given", "", (app, sidecar))
    swapped = decorator_order(settings, None)
    assert not isinstance(swapped, str)
    assert swapped.layers[0].options["order"] == "retry-inside" and swapped.layers[1] is sidecar

