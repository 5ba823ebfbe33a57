"""What runs mean, computed from what runs produce, never by running them: per-run metrics
(``metrics``, ``open_metrics``), means with confidence intervals (``stats``), the recovery verdict
(``recovery``), "vs best" verdicts (``versus``), and a recorded run's totals, latencies, time
series and policy state derived from its event columns (``replay``, ``run_series``,
``policy_state``: what the app shows of a run, by the engine's rules). It builds on the core and
the models' declarations; it never imports ``sim.runs``, ``sim.export`` or the app."""
