"""From a Darshan log to a sweep: read the log, summarise, diagnose, write a spec.

``log`` opens a log with pydarshan (the ``darshan`` package), ``summary``
computes figures per file or group of files from its counters, ``diagnosis``
lists what the counters show is slow and which iotune parameter addresses it,
``generate`` writes a spec that reproduces the application's pattern and
sweeps around it, ``text`` renders all of it for a terminal.  Named with a
trailing underscore so it never shadows the ``darshan`` library.
"""
