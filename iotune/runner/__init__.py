"""Running a sweep's trials: plan, schedule, journal, scratch, pre-flight, provenance and the
trial runner.
"""
