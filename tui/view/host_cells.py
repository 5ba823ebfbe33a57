"""The host panel's cells for the app (``sim.report.hosts``: the ``_hosts.csv`` numbers), through
the view layer as the widgets' rule wants."""

from sim.report.hosts import HostCells, host_cells

__all__ = ["HostCells", "host_cells"]
