"""The app's screens: the main view (``main``), strategies side by side (``compare``), the
explore map (``explore``), the key help and a number prompt. A screen lays out widgets and
runs thread workers; their messages are ``tui.messages``, the state they drive ``tui.state``."""
