"""The application: the API, sessions, tuning, stopping and notebooks."""
