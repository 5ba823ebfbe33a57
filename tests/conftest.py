"""The default run's budget (5 minutes on 2 cores, DEVELOPERS.md): these tests run with
``-m slow`` instead. Each is a variant of a behaviour another default test checks (another
entry point, signal, theme, size or parameter of the same code path), a statistical check, or a
long walk whose main case stays in the default run. ``pytest -m slow`` runs them; they must pass.
Some are snapshot tests: update snapshots with ``pytest -m "slow or not slow" --snapshot-update``
(in the default run their snapshots count as unused, and an update there would delete them).
"""

from __future__ import annotations

import pytest

SLOW_FOR_THE_BUDGET = frozenset({
    # session 7's budget cut (the suite reached 414 s): the longest pilot walks, end-to-end
    # round trips and snapshots whose feature keeps a shorter default test
    "test_help_keys.py::test_every_key_of_the_main_view_and_the_event_log_acts_and_the_footer_fits",
    "test_tui_overload.py::test_open_simulation_shows_latency_table_and_time_series",
    "test_timeline_clients.py::test_pick_expand_follow_and_jump_at_80x24",
    "test_api.py::test_readme_examples_run",
    "test_api.py::test_export_is_the_command_byte_for_byte[tiny_outage.toml]",
    "test_tui_app.py::test_play_advances_with_the_clock_and_stops_at_the_end",
    "test_api.py::test_explore_and_tune_are_the_command",
    "test_tui_app.py::test_filter_the_log",
    "test_tui_explore.py::test_the_map_is_in_the_palette_and_the_help",
    "test_log_search.py::test_slash_searches_n_goes_on_and_enter_moves_the_cursor",
    "test_copy_reproduction.py::test_in_a_replay_y_copies_the_replay_command",
    "test_command_messages.py::test_a_tiny_or_bad_columns_falls_back_to_a_readable_width[20]",
    "test_tui_export.py::test_an_export_to_a_full_disk_writes_none_of_its_files",
    "test_snapshots.py::test_tick_based_simulation",
    "test_tui_export.py::test_export_writes_the_run_on_screen_whole_and_never_overwrites",
    "test_tui_pool.py::test_the_app_shows_the_pool_under_the_timeline",
    "test_command_messages.py::test_matplotlib_s_layout_warnings_stay_off_stderr[run]",
    "test_tui_explore.py::test_enter_opens_the_cells_runs_and_p_comes_back_to_it",
    "test_overload_cli.py::test_a_piped_run_gets_the_whole_latency_table",
    "test_tui_views.py::test_charts_get_readable_room_or_a_compact_table",
    "test_log_search.py::test_typing_in_the_help_narrows_its_keys",
    "test_tui_explore.py::test_p_shows_every_strategys_map_as_sim_explore_computes_it",
    "test_tier_snapshots.py::test_tier_table_120x36",
    "test_compare_view.py::test_the_place_is_kept_across_client_counts_and_leaving_the_view",
    "test_queueing_theory.py::test_mmc_against_ciw",
    "test_output_sets.py::test_two_processes_at_once_never_mix_their_sets",
    # help key walks (the main view's walk too, above: every walk runs with -m slow)
    "test_help_keys.py::test_every_key_of_the_comparison_view_acts_and_its_footer_fits",
    "test_help_keys.py::test_every_key_of_the_explore_map_acts_and_its_footer_fits",
    "test_compare_view.py::test_compare_is_in_the_palette_and_the_help",
    "test_compare_view.py::test_clients_and_repetition_keys_move_every_run",
    "test_compare_view.py::test_strategies_are_picked_by_number_or_click",
    # statistical findings at small scale (the examples' own tests stay)
    "test_study_findings.py::test_server_outage_example",
    "test_study_findings.py::test_spike_queue_orderings_at_the_corners[0.0-0.18]",
    "test_study_findings.py::test_spike_queue_orderings_at_the_corners[1.0-0.22]",
    "test_study_findings.py::test_backoff_recovers_after_outages_from_5_s_to_2_minutes",
    "test_queue_ticks.py::test_at_start_fixes_the_time_when_the_request_starts",
    "test_queue_ticks.py::test_mean_progress_per_tick_is_one_over_the_slowdown[10]",
    # the same output handling through a second or third entry point (backoff-sim's stays)
    "test_command_messages.py::test_an_ascii_only_stdout_gets_ascii_glyphs[phase]",
    "test_command_messages.py::test_a_closed_stdout_is_one_line_and_exit_1[phase]",
    "test_command_messages.py::test_a_full_stdout_is_one_line_and_exit_1[phase]",
    "test_command_messages.py::test_a_closed_pipe_is_not_an_error[phase]",
    # a second stop signal for the same clean stop (SIGHUP's stays; test_teardown has SIGTERM's)
    "test_signals.py::test_a_stop_signal_ends_the_run_cleanly[SIGTERM]",
    # session 8's budget cut (a fresh clone's default run took 332-395 s on the 2-core machine):
    # the app's SIGTERM variants (the hang-ups and the SIGHUP to the group stay), a Ctrl-C in the
    # imports of a second and third command (run's and python -m sim's stay), the explore map's
    # larger snapshot (80x24 stays), the contention fixture's rows (the overload one's stay)
    "test_teardown.py::test_the_app_goes_away_with_its_terminal[idle-SIGTERM]",
    "test_teardown.py::test_the_app_goes_away_with_its_terminal[sweep-SIGTERM]",
    "test_command_messages.py::test_ctrl_c_during_the_imports_is_one_line_and_130[backoff-sim-args1]",
    "test_command_messages.py::test_ctrl_c_during_the_imports_is_one_line_and_130[backoff-simulator-args3]",
    "test_snapshots.py::test_explore_map_120x36",
    "test_api.py::test_rows_are_the_csv_columns_and_values[tiny.toml]",
    "test_command_messages.py::test_a_tiny_or_bad_columns_falls_back_to_a_readable_width[wide]",
    "test_command_messages.py::test_a_tiny_or_bad_columns_falls_back_to_a_readable_width[0]",
    "test_command_messages.py::test_matplotlib_s_layout_warnings_stay_off_stderr[explore]",
    "test_command_messages.py::test_an_ascii_only_stdout_gets_ascii_glyphs[backoff-simulator]",
    "test_command_messages.py::test_an_ascii_only_stdout_gets_ascii_glyphs[explore]",
    "test_command_messages.py::test_a_full_stdout_is_one_line_and_exit_1[backoff-simulator]",
    "test_command_messages.py::test_a_full_stdout_is_one_line_and_exit_1[explore]",
    "test_command_messages.py::test_a_closed_pipe_is_not_an_error[backoff-simulator]",
    "test_command_messages.py::test_a_closed_pipe_is_not_an_error[explore]",
    "test_command_messages.py::test_a_closed_stdout_is_one_line_and_exit_1[backoff-simulator]",
    "test_command_messages.py::test_a_closed_stdout_is_one_line_and_exit_1[explore]",
    # one signal of each path stays (SIGHUP: a terminal that goes away; SIGTERM for the app)
    "test_signals.py::test_a_stop_signal_ends_the_run_cleanly[SIGINT]",
    "test_tui_main.py::test_the_app_closes_cleanly_on_a_stop_signal[SIGTERM]",
    # sizes and themes: one of each stays
    "test_tui_app.py::test_small_terminals_do_not_crash[size1]",
    "test_tui_app.py::test_small_terminals_do_not_crash[size2]",
    "test_tui_app.py::test_small_terminals_do_not_crash[size3]",
    "test_tui_app.py::test_theme_key_cycles_our_themes",
    "test_tui_app.py::test_command_palette_runs_actions",
    "test_snapshots.py::test_main_screen[backoff-light-80x24]",
    "test_snapshots.py::test_main_screen[backoff-contrast-120x40]",
    "test_snapshots.py::test_main_screen[backoff-light-120x40]",
    "test_snapshots.py::test_main_screen[backoff-contrast-80x24]",
    "test_snapshots.py::test_help_of_each_view[compare-80x24]",
    "test_snapshots.py::test_help_of_each_view[main-120x36]",
    "test_snapshots.py::test_help_of_each_view[compare-120x36]",
    "test_snapshots.py::test_event_log_whole_run_and_a_search[120x36]",
    "test_tui_time_units.py::test_a_tick_config_never_says_ms[(120, 40)-('v',)]",
    "test_tui_time_units.py::test_a_tick_config_never_says_ms[(120, 40)-('a',)]",
    "test_tui_time_units.py::test_a_tick_config_never_says_ms[(80, 24)-('a',)]",
    # navigation and regression checks whose main paths other default tests walk
    "test_tui_navigation.py::test_without_animation_the_footer_does_not_offer_play",
    "test_tui_navigation.py::test_client_counts_stop_at_their_ends",
    "test_tui_navigation.py::test_n_then_shift_n_returns_to_the_same_run_and_event",
    "test_tui_navigation.py::test_zoom_in_and_out_around_the_cursor_and_reset",
    "test_tui_navigation.py::test_f_and_shift_f_jump_between_the_events_the_filter_matches",
    "test_tui_fixes.py::test_go_to_time_prefilled_with_the_current_time_stays_on_the_current_event",
    "test_tui_fixes.py::test_a_sweep_that_lands_before_the_final_width_is_laid_out_again",
    "test_tui_fixes.py::test_the_seed_dialog_keeps_every_digit",
    "test_tui_fixes.py::test_an_invalid_filter_shows_no_stale_rows_and_its_whole_message",
    "test_tui_fixes.py::test_a_resize_round_trip_restores_the_strategy_table_and_every_pane",
    "test_tui_explore.py::test_the_map_runs_on_dask_in_the_app_with_the_local_pools_cells",
    "test_tui_explore.py::test_the_map_runs_in_a_worker_that_x_cancels_and_w_resumes",
    "test_tui_explore.py::test_the_seed_dialog_reseeds_the_map",
    "test_tui_explore.py::test_a_one_axis_map_without_a_verdict_shows_the_metrics_mean",
    "test_tui_explore.py::test_the_cursor_moves_over_the_cells_and_the_detail_follows",
    "test_tui_explore.py::test_a_click_on_a_cell_selects_it",
    "test_tui_export.py::test_export_shows_its_progress_while_the_worker_writes",
    "test_overload_cli.py::test_events_file_keeps_the_full_histories",
    "test_overload_cli.py::test_server_wide_events_alone_have_no_client",
    # issue 23's timeline clients and strategy table pictures: an 80x24 of each kind stays (the
    # keys themselves are pilot-tested in test_timeline_clients.py and test_tui_tables.py)
    "test_snapshots_clients.py::test_a_lane_group_expanded_and_a_client_followed[120x36]",
    "test_snapshots_clients.py::test_clients_picked_by_typing[80x24]",
    "test_snapshots_clients.py::test_clients_picked_by_typing[120x36]",
    "test_snapshots_clients.py::test_the_strategy_table_sorted_by_cost_largest_first[80x24]",
    "test_snapshots_clients.py::test_the_strategy_table_sorted_by_cost_largest_first[120x36]",
    "test_snapshots_clients.py::test_the_column_picker_with_success_shown[120x36]",
    # session 10 (the default run near 5 minutes on a slow day): a second signal or size of a
    # behaviour whose first stays in the default run
    "test_teardown.py::test_the_app_goes_away_with_its_terminal[sweep-SIGHUP-group]",
    "test_teardown.py::test_a_command_stops_cleanly_at_any_moment[explore_--dask_local-cluster_start-SIGTERM-group]",
    "test_teardown.py::test_a_command_stops_cleanly_at_any_moment[explore_--dask_local-workers-SIGINT-group]",
    "test_snapshots.py::test_main_screen[backoff-dark-120x40]",
    "test_snapshots.py::test_comparison_view",
    "test_snapshots.py::test_80x24_single_client_count[replay]",
    "test_command_messages.py::test_replay_without_a_terminal_too",
    "test_teardown.py::test_a_command_stops_cleanly_at_any_moment[run-workers-SIGTERM-group]",
    "test_teardown.py::test_a_command_stops_cleanly_at_any_moment[run-staged-SIGINT-group]",
    "test_overload_export.py::test_pngs_open[spike-backoff-dark]",
    "test_tui_time_units.py::test_a_tick_config_never_says_ms[(120, 40)-()]",
    "test_tui_tune.py::test_a_simulation_without_the_table_says_so[u-tune]",
    *(f"test_command_messages.py::test_help_and_version_to_a_full_stdout_fail[False-argv{i}]"
      for i in range(1, 7)),
})


@pytest.hookimpl(tryfirst=True)  # before -m deselects by mark
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    slow = pytest.mark.slow
    for item in items:
        name = item.nodeid.split("tests/", 1)[-1]
        if name in SLOW_FOR_THE_BUDGET:
            item.add_marker(slow)


def _export_csvs(spec) -> dict[str, str]:
    """Every CSV the export writes for ``spec``, by suffix, as written (the PNGs are left out:
    drawn from the same numbers, they cost most of the time); its sweep in this process."""
    from sim.export.outputs import Job, outputs_for
    from sim.export.palette import load_palette
    from sim.export.runs import representative_runs, scatter_runs
    from sim.runs.sweep import run_sweep

    result = run_sweep(spec, workers=1)
    runs = representative_runs(spec)
    scatter = runs if spec.representative_clients() == spec.max_clients else scatter_runs(spec)
    job = Job(result, runs, scatter, load_palette())
    return {o.suffix: o.text(job) for o in outputs_for(spec) if o.text is not None}


@pytest.fixture
def export_csvs():
    """``export_csvs(spec)``: the CSVs a simulation's export writes (the fast-path tests compare
    the compiled kernels' with the reference engine's byte for byte)."""
    return _export_csvs


_REFERENCE_CSVS: dict[tuple[str, str], dict[str, str]] = {}  # by (kernel module, title): made once


def _kernel_matches_reference(spec, module, plain_source: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Export ``spec`` by the reference engine (once per session) and by the kernel ``module``
    (``sim.kernels``: its ``run`` as the engine runs it, or its plain source), and compare every
    CSV byte for byte."""
    from sim.kernels import jit
    from sim.runs import fast

    key = (module.__name__, spec.title)
    if key not in _REFERENCE_CSVS:
        monkeypatch.setattr(fast, "kernel_fits", lambda spec, chain, clients: False)
        _REFERENCE_CSVS[key] = _export_csvs(spec)
    reference = _REFERENCE_CSVS[key]
    monkeypatch.setattr(fast, "kernel_fits", lambda spec, chain, clients: fast.kernel_expresses(spec, chain))
    chosen = jit.plain(module.run) if plain_source else module.run
    calls = []

    def counted(*args):
        calls.append(1)
        return chosen(*args)
    monkeypatch.setattr(module, "run", counted)
    fastest = _export_csvs(spec)
    assert calls  # the kernel did run (in this process: the sweep has one worker)
    assert set(reference) == {f"_{kind}.csv" for kind in ("events", "latency", "metrics", "runs", "timeseries")}
    assert fastest.keys() == reference.keys()
    for name, data in reference.items():
        assert fastest[name] == data, name


@pytest.fixture
def kernel_matches_reference(monkeypatch: pytest.MonkeyPatch):
    """``kernel_matches_reference(spec, module, plain_source)``: a kernel's CSVs are the
    reference engine's, byte for byte (``_kernel_matches_reference``)."""
    return lambda spec, module, plain_source: _kernel_matches_reference(spec, module, plain_source, monkeypatch)


@pytest.fixture(autouse=True)
def _kernels_not_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a fresh process does, the compiled kernels not loaded: a sweep that
    loads them (``fast.warm_up``) sends every later run a kernel expresses to it in this
    process, and tests that look inside the reference engine's runs would find none."""
    from sim.runs import fast

    monkeypatch.setattr(fast, "_warm", False)



@pytest.fixture(scope="session")
def outage_report(tmp_path_factory) -> tuple:
    """``backoff-sim run tiny_outage.toml --report``, once for the report's tests (plain and in
    the browser): the output folder and the report. In a process of its own: a sweep here would
    outlive the kernels' per-test reset above."""
    import subprocess
    import sys
    from pathlib import Path

    out = tmp_path_factory.mktemp("outage_report")
    report = out / "shared" / "report.html"
    config = Path(__file__).parent / "fixtures" / "tiny_outage.toml"
    done = subprocess.run([sys.executable, "-m", "sim", "run", str(config), "--out", str(out), "-j", "1",
                           "--quiet", "--report", str(report)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return out, report
