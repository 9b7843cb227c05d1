"""The shared base: errors, units, processes, logging, extras and plugins."""
