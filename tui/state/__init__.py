"""The app's state and navigation, free of Textual: where runs come from (``source``, a config or
an events file; ``recorder``, runs simulated in a child process), the sweeps, tunes and explore
maps and their lifecycles, playback and the place in a run, exports. The screens call these
from thread workers; this is the layer of the app that may use ``sim``'s internals."""
