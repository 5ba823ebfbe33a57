"""View maths, free of Textual: what the widgets draw, computed from ``sim``'s results and runs:
a recorded run as the views index it (``rundata``: its event columns, drawing ranks and what
``sim.analysis`` derives from them; ``request_points``, ``policy_labels``), the comparison's
columns (``compare_columns``), axis ticks and durations, the timeline's grid, marks, legend and zoom, the tables' rows and
captions, the explore map's view, the event log's filter. Tested without an app."""
