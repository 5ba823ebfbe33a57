"""The replay pane: one run's events on the timeline (``timeline``) and in the log (``event_log``,
with its filter line in ``log_pane`` and ``filter_input``), both following the cursor."""
