"""The app's screens: the main view, the key help, and small input dialogs."""
