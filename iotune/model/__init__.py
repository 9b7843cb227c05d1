"""The vocabulary: plain frozen data (the spec's dataclasses, trials and results, the checks
that build them).
"""
