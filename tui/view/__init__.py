"""View maths, free of Textual: what the widgets draw, computed from ``sim``'s results and runs:
axis ticks and durations, the timeline's grid, marks, legend and zoom, the tables' rows and
captions, the explore map's view, the event log's filter. Tested without an app."""
