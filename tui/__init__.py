"""backoff-sim's terminal app (Textual): it presents and drives ``sim``, and computes no result.

At the root, the app shell: ``app`` (state and actions, ``app.tcss``), ``main`` and ``entry``
(the launcher and console script), ``hangup`` (stop signals), ``commands`` (the palette), plus
``keys`` (every binding) and ``theme`` (our themes as Textual's), and ``messages`` (what the
screens' workers post). Then by role: ``state/`` (app state and navigation, no Textual),
``view/`` (view maths, no Textual), ``widgets/`` and ``screens/``, which reach ``sim`` only
through its public API and ``sim.core.events`` (``tests/test_import_graph.py``'s layer table).
"""
