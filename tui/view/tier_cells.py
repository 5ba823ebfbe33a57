"""The per-tier table's cells for the app (``sim.report.tiers``: the CLI's tier table's, the
``_tiers.csv`` numbers), through the view layer as the widgets' rule wants."""

from sim.report.tiers import TierCells, any_denied, tier_cells

__all__ = ["TierCells", "any_denied", "tier_cells"]
