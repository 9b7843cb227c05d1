"""Text and widget views of results (figures are in iotune.plot)."""
